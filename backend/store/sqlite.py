"""SqliteDatabase: one SQLite connection driven from one worker thread, one whole transaction per call.

A caller that is cancelled (client disconnect, Stop, shutdown) can never leave the connection inside a
transaction: BEGIN, the statements and COMMIT (or ROLLBACK) run in the worker thread as one job, with no await
between them. The awaiting coroutine may go away; the job still ends in COMMIT or ROLLBACK.
"""

import asyncio
import sqlite3
import threading
from collections.abc import AsyncIterator, Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import asynccontextmanager, contextmanager
from pathlib import Path
from typing import TypeVar

from backend.contract.text import fold_name

T = TypeVar("T")
BUSY_TIMEOUT_MS = 10_000  # another process (the CLI, a second server) holding the write lock: wait, do not fail


def unicode_lower(value: object) -> object:
    """SQL unicode_lower(x): a text as contract.text.fold_name folds names (composed, lower case over all of Unicode;
    Postgres' lower() differs on a few letters, such as "İ")."""
    return fold_name(value) if isinstance(value, str) else value


class SqliteDatabase:
    """A SQLite file in WAL mode; `read` and `write` run functions of the connection in its worker thread."""

    dialect = "sqlite"
    integrity_error = sqlite3.IntegrityError

    def __init__(self, path: Path | str) -> None:
        self.path = str(path)
        self.conn = sqlite3.connect(self.path, check_same_thread=False, isolation_level=None)
        self.conn.execute("PRAGMA journal_mode=WAL")
        self.conn.execute("PRAGMA synchronous=NORMAL")
        self.conn.execute(f"PRAGMA busy_timeout={BUSY_TIMEOUT_MS}")
        # names compared over all of Unicode: SQLite's lower() and COLLATE NOCASE fold ASCII letters only
        self.conn.create_function("unicode_lower", 1, unicode_lower, deterministic=True)
        self.lock = threading.RLock()
        self._worker = ThreadPoolExecutor(max_workers=1, thread_name_prefix="sqlite")

    @classmethod
    @asynccontextmanager
    async def open(cls, path: Path | str) -> AsyncIterator["SqliteDatabase"]:
        """Open the file for the block's duration; pending jobs finish before it closes."""
        db = await asyncio.to_thread(cls, path)
        try:
            yield db
        finally:
            await asyncio.shield(asyncio.get_running_loop().run_in_executor(None, db.close))

    def close(self) -> None:
        """Wait for queued jobs, then close the connection."""
        self._worker.shutdown(wait=True)
        with self.lock:
            self.conn.close()

    @contextmanager
    def transaction(self) -> Iterator[sqlite3.Connection]:
        """BEGIN IMMEDIATE … COMMIT in the calling thread; ROLLBACK on any exception. Nests (inner is a no-op)."""
        with self.lock:
            if self.conn.in_transaction:
                yield self.conn
                return
            self.conn.execute("BEGIN IMMEDIATE")
            try:
                yield self.conn
            except BaseException:
                self.conn.execute("ROLLBACK")
                raise
            self.conn.execute("COMMIT")

    @contextmanager
    def connection(self) -> Iterator[sqlite3.Connection]:
        """The connection outside any transaction (reads see the last committed state), in the calling thread."""
        with self.lock:
            yield self.conn

    async def write(self, fn: Callable[[sqlite3.Connection], T]) -> T:
        """Run fn(conn) in one transaction, committed or rolled back as a whole whatever happens to the caller."""

        def job() -> T:
            with self.transaction() as conn:
                return fn(conn)

        return await self.call(job)

    async def read(self, fn: Callable[[sqlite3.Connection], T]) -> T:
        """Run fn(conn) outside any transaction (reads see the last committed state)."""

        def job() -> T:
            with self.connection() as conn:
                return fn(conn)

        return await self.call(job)

    async def call(self, job: Callable[[], T]) -> T:
        """Run a job in the worker thread; a job that has started runs to its end even if the caller is cancelled."""
        return await asyncio.get_running_loop().run_in_executor(self._worker, job)
