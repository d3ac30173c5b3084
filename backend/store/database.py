"""Database: what Ragline's stores need from a database, whichever engine it is (SQLite files or Postgres).

A store writes its SQL once with `?` placeholders and runs it through `read`, `write` or `call`: each is one job in
a worker thread, so a caller that is cancelled (disconnect, Stop, shutdown) never leaves a transaction open. The
statements both engines accept are used where they exist (`INSERT … ON CONFLICT DO NOTHING` rather than SQLite's
`INSERT OR IGNORE`); where the engines differ a store asks `db.dialect`.
"""

from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import AbstractContextManager
from typing import Any, Literal, Protocol, TypeVar

T = TypeVar("T")
Dialect = Literal["sqlite", "postgres"]


class Cursor(Protocol):
    """The part of a DB-API cursor the stores use."""

    rowcount: int
    description: Any  # a sequence of column descriptions, each starting with the column's name

    def fetchone(self) -> Any: ...

    def fetchall(self) -> list[Any]: ...

    def __iter__(self) -> Iterator[Any]: ...


class Conn(Protocol):
    """A connection inside a job: sqlite3.Connection, or PgConnection (backend/store/postgres.py)."""

    def execute(self, sql: str, params: Sequence[Any] = ..., /) -> Cursor: ...

    def executemany(self, sql: str, params: Iterable[Sequence[Any]], /) -> Cursor: ...


class Database(Protocol):
    """One database: SqliteDatabase (one file) or PostgresDatabase (a connection pool shared by every store)."""

    dialect: Dialect
    integrity_error: type[Exception] | tuple[type[Exception], ...]  # a UNIQUE or foreign-key constraint failed

    async def read(self, fn: Callable[[Conn], T]) -> T: ...

    async def write(self, fn: Callable[[Conn], T]) -> T: ...

    async def call(self, job: Callable[[], T]) -> T: ...

    def transaction(self) -> AbstractContextManager[Conn]: ...

    def connection(self) -> AbstractContextManager[Conn]: ...


def same_name(dialect: str, column: str, other: str = "?") -> str:
    """SQL comparing a name column with a parameter (or another column) as contract.text.fold_name does: names are
    unique regardless of case and composition. Postgres' unique indexes are on lower(name); SQLite's COLLATE NOCASE
    folds ASCII letters only ("Été" and "été" passed it), so SQLite compares with unicode_lower, the function its
    connection registers (store/sqlite.py). Run the lookup in the transaction that writes the name."""
    if dialect == "sqlite":
        return f"unicode_lower({column}) = unicode_lower({other})"
    cast = "CAST(? AS text)" if other == "?" else other
    return f"lower(normalize({column}, NFC)) = lower(normalize({cast}, NFC))"
