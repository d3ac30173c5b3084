"""RunLog: every event of every recent run, numbered: runs.sqlite in RAG_DATA_DIR, or tables in Postgres.

A run's events go out to its followers from memory at once and reach the file in batches (one transaction every
BATCH_SECONDS at most), so tokens never wait for the disk; the run's last events and its final status are written
together when it ends. After a `kill -9` the file holds the run as `running` with the events of all but the last
batch: start-up marks such runs `interrupted` (see TurnRunner.recover). Finished runs' logs are pruned after
RAG_RUN_LOG_HOURS.
"""

import asyncio
import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager, suppress

from backend.store.database import Conn, Database

BATCH_SECONDS = 0.05
_SCHEMA = """
CREATE TABLE IF NOT EXISTS runs (
    run_id TEXT PRIMARY KEY,
    thread_id TEXT NOT NULL,
    question TEXT NOT NULL,
    status TEXT NOT NULL,
    created_at TEXT NOT NULL,
    finished_at TEXT,
    last_event_id INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX IF NOT EXISTS runs_by_status ON runs(status, finished_at);
CREATE TABLE IF NOT EXISTS run_events (
    run_id TEXT NOT NULL,
    seq INTEGER NOT NULL,
    event TEXT NOT NULL,
    data TEXT NOT NULL,
    PRIMARY KEY (run_id, seq)
) WITHOUT ROWID;
"""
RUN_COLUMNS = ("run_id", "thread_id", "question", "status", "created_at", "last_event_id")
LoggedEvent = tuple[str, int, str, str]  # (run_id, seq, event name, JSON data)


def _insert(conn: Conn, rows: list[LoggedEvent]) -> None:
    conn.executemany(
        "INSERT INTO run_events (run_id, seq, event, data) VALUES (?, ?, ?, ?) ON CONFLICT DO NOTHING", rows
    )


class RunLog:
    """The run log file: run rows and their numbered events."""

    def __init__(self, db: Database) -> None:
        self.db = db
        self._pending: list[LoggedEvent] = []
        self._wake = asyncio.Event()

    @classmethod
    @asynccontextmanager
    async def open(cls, db: Database) -> AsyncIterator["RunLog"]:
        """Use the database (creating a SQLite file's tables) for the block; pending events are written at its end."""
        log = cls(db)
        if db.dialect == "sqlite":
            await db.call(lambda: db.conn.executescript(_SCHEMA))  # type: ignore[attr-defined]
        flusher = asyncio.create_task(log._flush_loop(), name="run-log")
        try:
            yield log
        finally:
            flusher.cancel()
            with suppress(asyncio.CancelledError):
                await flusher
            await log.flush()

    async def start(self, run_id: str, thread_id: str, question: str, created_at: str) -> None:
        """Record a new run as `running`."""
        sql = "INSERT INTO runs (run_id, thread_id, question, status, created_at) VALUES (?, ?, ?, 'running', ?)"
        await self.db.write(lambda c: c.execute(sql, (run_id, thread_id, question, created_at)))

    def append(self, run_id: str, seq: int, event: str, data: str) -> None:
        """Queue one event for the next batch."""
        self._pending.append((run_id, seq, event, data))
        self._wake.set()

    async def flush(self) -> None:
        """Write every queued event now (after any batch already on its way: the worker runs jobs in order)."""
        batch, self._pending = self._pending, []
        if batch:
            await self.db.write(lambda c: _insert(c, batch))

    async def finish(self, run_id: str, status: str, last_event_id: int, finished_at: str) -> None:
        """Write the queued events and the run's final status in one transaction."""
        batch, self._pending = self._pending, []
        sql = "UPDATE runs SET status = ?, finished_at = ?, last_event_id = ? WHERE run_id = ?"

        def job(conn: Conn) -> None:
            _insert(conn, batch)
            conn.execute(sql, (status, finished_at, last_event_id, run_id))

        await self.db.write(job)

    async def run(self, run_id: str) -> dict | None:
        """A run's row, or None."""
        sql = f"SELECT {', '.join(RUN_COLUMNS)} FROM runs WHERE run_id = ?"
        row = await self.db.read(lambda c: c.execute(sql, (run_id,)).fetchone())
        return dict(zip(RUN_COLUMNS, row, strict=True)) if row else None

    async def events(self, run_id: str, after: int = 0) -> list[tuple[int, str, str]]:
        """A run's logged events after sequence number `after`: (seq, event name, JSON data), in order."""
        sql = "SELECT seq, event, data FROM run_events WHERE run_id = ? AND seq > ? ORDER BY seq"
        return await self.db.read(lambda c: c.execute(sql, (run_id, after)).fetchall())

    async def unfinished(self) -> list[dict]:
        """Runs still `running` in the file (their server died), each with the text its token events carried."""
        sql = f"SELECT {', '.join(RUN_COLUMNS)} FROM runs WHERE status = 'running' ORDER BY created_at"
        rows = await self.db.read(lambda c: c.execute(sql).fetchall())
        runs = [dict(zip(RUN_COLUMNS, row, strict=True)) for row in rows]
        for run in runs:
            events = await self.events(run["run_id"])
            run["answer"] = "".join(json.loads(data)["text"] for _, name, data in events if name == "token")
            run["last_event_id"] = max((seq for seq, _, _ in events), default=0)
        return runs

    async def prune(self, finished_before: str) -> int:
        """Delete the runs (and events) that finished before the timestamp; returns how many runs went."""

        def job(conn: Conn) -> int:
            old = "SELECT run_id FROM runs WHERE status != 'running' AND finished_at < ?"
            conn.execute(f"DELETE FROM run_events WHERE run_id IN ({old})", (finished_before,))
            return conn.execute(
                "DELETE FROM runs WHERE status != 'running' AND finished_at < ?", (finished_before,)
            ).rowcount

        return await self.db.write(job)

    async def _flush_loop(self) -> None:
        while True:
            await self._wake.wait()
            await asyncio.sleep(BATCH_SECONDS)  # gather the tokens of the next few milliseconds into one commit
            self._wake.clear()
            await asyncio.shield(self.flush())
