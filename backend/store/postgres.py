"""PostgresDatabase: every store on one psycopg connection pool, each call one job of a worker thread.

Set by RAG_DATABASE_URL. The pool's connections have the settings langgraph-checkpoint-postgres requires
(autocommit, no prepared statements, dict rows), so the checkpointer shares it. The stores' SQL, written with `?`
placeholders for both engines, runs through PgConnection, which speaks to psycopg with `%s` and hands back rows
that read by position and by column name, like sqlite3.Row.

As with SQLite, a job that has started runs to its end in its thread even when the awaiting coroutine is
cancelled: a transaction is never left open by a client that went away.
"""

import asyncio
import functools
import threading
from collections.abc import AsyncIterator, Callable, Iterable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from contextlib import asynccontextmanager, contextmanager
from typing import Any, TypeVar

import psycopg
from psycopg.rows import dict_row
from psycopg_pool import ConnectionPool

T = TypeVar("T")
CONNECT_TIMEOUT_SECONDS = 30.0


class Row(tuple):
    """A result row readable by position (row[0]) and by column (row["name"], dict(row)), like sqlite3.Row."""

    _index: dict[str, int]

    def __new__(cls, values: Sequence[Any], index: dict[str, int]) -> "Row":
        row = super().__new__(cls, values)
        row._index = index
        return row

    def __getitem__(self, key: Any) -> Any:  # type: ignore[override]
        return super().__getitem__(self._index[key] if isinstance(key, str) else key)

    def keys(self) -> list[str]:
        return list(self._index)


def _row_factory(cursor: psycopg.Cursor) -> Callable[[Sequence[Any]], Row]:
    index = {column.name: i for i, column in enumerate(cursor.description or ())}
    return lambda values: Row(values, index)


@functools.lru_cache(maxsize=1024)
def to_psycopg(sql: str) -> str:
    """A statement with `?` placeholders in psycopg's `%s` style (a literal % doubled)."""
    return sql.replace("%", "%%").replace("?", "%s")


class PgConnection:
    """A pooled psycopg connection with sqlite3.Connection's execute/executemany (the stores' `Conn`)."""

    def __init__(self, conn: psycopg.Connection) -> None:
        self.raw = conn

    def execute(self, sql: str, params: Sequence[Any] = ()) -> psycopg.Cursor:
        cur = self.raw.cursor(row_factory=_row_factory)  # type: ignore[arg-type]
        cur.execute(to_psycopg(sql), params)  # type: ignore[arg-type]
        return cur

    def executemany(self, sql: str, params: Iterable[Sequence[Any]]) -> psycopg.Cursor:
        cur = self.raw.cursor(row_factory=_row_factory)  # type: ignore[arg-type]
        cur.executemany(to_psycopg(sql), list(params))  # type: ignore[arg-type]
        return cur


class PostgresDatabase:
    """A Postgres database through one connection pool; `read`/`write`/`call` run jobs in worker threads."""

    dialect = "postgres"
    integrity_error = psycopg.IntegrityError

    def __init__(self, url: str, pool_size: int = 10) -> None:
        self.url = url
        self.pool = ConnectionPool(
            url,
            min_size=1,
            max_size=pool_size,
            kwargs={"autocommit": True, "prepare_threshold": 0, "row_factory": dict_row},
            open=False,
            name="ragline",
        )
        self._local = threading.local()  # the connection of the transaction running in this thread, if any
        self._workers = ThreadPoolExecutor(max_workers=pool_size, thread_name_prefix="postgres")

    @classmethod
    @asynccontextmanager
    async def open(cls, url: str, pool_size: int = 10) -> AsyncIterator["PostgresDatabase"]:
        """Connect for the block's duration; jobs under way finish before the pool closes."""
        db = cls(url, pool_size)
        await asyncio.to_thread(db.pool.open, True, CONNECT_TIMEOUT_SECONDS)
        try:
            yield db
        finally:
            await asyncio.shield(asyncio.get_running_loop().run_in_executor(None, db.close))

    def close(self) -> None:
        """Wait for queued jobs, then close the pool."""
        self._workers.shutdown(wait=True)
        self.pool.close()

    @contextmanager
    def transaction(self) -> Iterator[PgConnection]:
        """A transaction in the calling thread, committed at the end or rolled back on any exception; nests."""
        if (current := getattr(self._local, "conn", None)) is not None:
            yield current
            return
        with self.pool.connection() as raw, raw.transaction():
            self._local.conn = PgConnection(raw)
            try:
                yield self._local.conn
            finally:
                self._local.conn = None

    @contextmanager
    def connection(self) -> Iterator[PgConnection]:
        """A connection for reads (autocommit), or the transaction's when one is running in this thread."""
        if (current := getattr(self._local, "conn", None)) is not None:
            yield current
            return
        with self.pool.connection() as raw:
            yield PgConnection(raw)

    async def write(self, fn: Callable[[PgConnection], T]) -> T:
        """Run fn(conn) in one transaction, committed or rolled back as a whole whatever happens to the caller."""

        def job() -> T:
            with self.transaction() as conn:
                return fn(conn)

        return await self.call(job)

    async def read(self, fn: Callable[[PgConnection], T]) -> T:
        """Run fn(conn) on a connection outside any transaction."""

        def job() -> T:
            with self.connection() as conn:
                return fn(conn)

        return await self.call(job)

    async def call(self, job: Callable[[], T]) -> T:
        """Run a job in a worker thread; a job that has started runs to its end even if the caller is cancelled."""
        return await asyncio.get_running_loop().run_in_executor(self._workers, job)
