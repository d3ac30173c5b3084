"""RunLog: every event of every recent run, numbered: runs.sqlite in RAG_DATA_DIR, or tables in Postgres.

A run's events go out to its followers from memory at once and reach the file in batches (one transaction every
BATCH_SECONDS at most), so tokens never wait for the disk; the run's last events and its final status are written
together when it ends. After a `kill -9` the file holds the run as `running` with the events of all but the last
batch: start-up marks such runs `interrupted` (see TurnRunner.recover), with a last event numbered above any the
dead server may have sent unwritten (a turn never runs more than SENT_AHEAD events ahead of the file). Finished
runs' logs are pruned after RAG_RUN_LOG_HOURS.

Several replicas on one Postgres database share the log. Each run names the replica (server process) running it,
and each replica writes a heartbeat every HEARTBEAT_SECONDS: another replica follows a run from the log, asks
for its Stop through the log (`request_stop`), and takes over the runs of a replica that stopped beating
(`unfinished(dead_only=True)`, `claim`) to mark them interrupted.
"""

import asyncio
import json
import uuid
from collections import Counter
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager, suppress
from datetime import UTC, datetime, timedelta

from backend.clock import now
from backend.store.database import Conn, Database
from backend.store.run_tables import create_tables

BATCH_SECONDS = 0.05
SENT_AHEAD = 500  # events of a run that may go out before they are written: a turn's stream waits for the file
# beyond that (keep_up). A recovered run's last event is numbered RECOVERED_GAP above its last written one: above
# every event its dead server can have sent (the few emitted outside the turn's stream stay far below the gap).
RECOVERED_GAP = 2 * SENT_AHEAD
HEARTBEAT_SECONDS = 2.0
DEAD_AFTER_SECONDS = 10.0  # a replica not heard of for this long is dead

THREAD_LOCKS = 7_243_110_003  # hashtextextended seed: the advisory lock of a thread's run numbering (Postgres)
RUN_COLUMNS = ("run_id", "thread_id", "question", "status", "created_at", "last_event_id", "replica")
LoggedEvent = tuple[str, int, str, str]  # (run_id, seq, event name, JSON data)


def _insert(conn: Conn, rows: list[LoggedEvent]) -> None:
    conn.executemany(
        "INSERT INTO run_events (run_id, seq, event, data) VALUES (?, ?, ?, ?) ON CONFLICT DO NOTHING", rows
    )


class RunLog:
    """The run log file: run rows and their numbered events."""

    def __init__(self, db: Database, replica_id: str | None = None) -> None:
        self.db = db
        self.replica_id = replica_id or uuid.uuid4().hex[:16]  # this server process
        self.shared = db.dialect == "postgres"  # replicas may share it (SQLite files serve one server)
        self._pending: list[LoggedEvent] = []
        self._wake = asyncio.Event()
        self._unwritten: Counter[str] = Counter()  # events of each run appended but not yet committed
        self._written = asyncio.Event()  # set (and replaced) each time a batch is committed

    @classmethod
    @asynccontextmanager
    async def open(cls, db: Database) -> AsyncIterator["RunLog"]:
        """Use the database (creating a SQLite file's tables) for the block; pending events are written at its end."""
        log = cls(db)
        await create_tables(db)
        await log._beat()
        tasks = [asyncio.create_task(log._flush_loop(), name="run-log"), asyncio.create_task(log._heartbeat_loop())]
        try:
            yield log
        finally:
            for task in tasks:
                task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)
            await log.flush()
            # gone on purpose: the runs it still had (cancelled by the shutdown) are for the others to interrupt
            await db.write(lambda c: c.execute("DELETE FROM replicas WHERE replica_id = ?", (log.replica_id,)))

    async def start(self, run_id: str, thread_id: str, question: str, created_at: str) -> None:
        """Record a new run as `running`, numbered after every run of its thread logged before it (`turn_no`).

        On Postgres the number is taken under the thread's advisory lock, in the transaction that inserts the row:
        a run numbered n has seen every run numbered below n, so two replicas never both find themselves first
        (a clock stamp taken before the insert could not promise that). SQLite files have one writer at a time.
        """
        sql = (
            "INSERT INTO runs (run_id, thread_id, question, status, created_at, replica, turn_no) "
            "SELECT ?, ?, ?, 'running', ?, ?, COALESCE(MAX(turn_no), 0) + 1 FROM runs WHERE thread_id = ?"
        )
        args = (run_id, thread_id, question, created_at, self.replica_id, thread_id)

        def job(conn: Conn) -> None:
            if self.shared:
                conn.execute("SELECT pg_advisory_xact_lock(hashtextextended(?, ?))", (thread_id, THREAD_LOCKS))
            conn.execute(sql, args)

        await self.db.write(job)

    def append(self, run_id: str, seq: int, event: str, data: str) -> None:
        """Queue one event for the next batch."""
        self._pending.append((run_id, seq, event, data))
        self._unwritten[run_id] += 1
        self._wake.set()

    async def keep_up(self, run_id: str) -> None:
        """Wait while SENT_AHEAD events or more of the run are unwritten (a disk slower than the model): the
        numbering of a recovered run relies on it."""
        while self._unwritten[run_id] >= SENT_AHEAD:
            written = self._written
            self._wake.set()
            await written.wait()

    async def flush(self) -> None:
        """Write every queued event now (after any batch already on its way: the worker runs jobs in order)."""
        batch, self._pending = self._pending, []
        if batch:
            try:
                await self.db.write(lambda c: _insert(c, batch))
            finally:
                self._committed(batch)

    async def finish(self, run_id: str, status: str, last_event_id: int, finished_at: str) -> None:
        """Write the queued events and the run's final status in one transaction."""
        batch, self._pending = self._pending, []
        sql = "UPDATE runs SET status = ?, finished_at = ?, last_event_id = ? WHERE run_id = ?"

        def job(conn: Conn) -> None:
            _insert(conn, batch)
            conn.execute(sql, (status, finished_at, last_event_id, run_id))

        try:
            await self.db.write(job)
        finally:
            self._committed(batch)

    def _committed(self, batch: list[LoggedEvent]) -> None:
        """The batch is written (or failed: a turn must not wait for a database that refused it)."""
        self._unwritten -= Counter(run_id for run_id, *_ in batch)  # drops the runs that reach 0
        self._written.set()
        self._written = asyncio.Event()

    async def running(self) -> list[dict]:
        """Every run logged as `running`, on any replica, oldest first: run_id, thread_id, question, created_at,
        replica."""
        columns = ("run_id", "thread_id", "question", "created_at", "replica")
        sql = f"SELECT {', '.join(columns)} FROM runs WHERE status = 'running' ORDER BY created_at"
        rows = await self.db.read(lambda c: c.execute(sql).fetchall())
        return [dict(zip(columns, row, strict=True)) for row in rows]

    async def run(self, run_id: str) -> dict | None:
        """A run's row, or None."""
        sql = f"SELECT {', '.join(RUN_COLUMNS)} FROM runs WHERE run_id = ?"
        row = await self.db.read(lambda c: c.execute(sql, (run_id,)).fetchone())
        return dict(zip(RUN_COLUMNS, row, strict=True)) if row else None

    async def events(self, run_id: str, after: int = 0) -> list[tuple[int, str, str]]:
        """A run's logged events after sequence number `after`: (seq, event name, JSON data), in order."""
        sql = "SELECT seq, event, data FROM run_events WHERE run_id = ? AND seq > ? ORDER BY seq"
        return await self.db.read(lambda c: c.execute(sql, (run_id, after)).fetchall())

    async def last_event(self, run_id: str) -> int:
        """The number of the run's last logged event (0: none yet)."""
        sql = "SELECT COALESCE(MAX(seq), 0) FROM run_events WHERE run_id = ?"
        return int(await self.db.read(lambda c: c.execute(sql, (run_id,)).fetchone()[0]))

    async def ahead_elsewhere(self, thread_id: str, run_id: str) -> int:
        """Runs of the thread still running on other replicas that were numbered before this one. A run numbered 0
        comes from a replica older than the numbering (a rolling upgrade): it is ordered by its start time, as that
        replica orders, so neither waits for the other."""
        sql = (
            "SELECT COUNT(*) FROM runs r, runs me WHERE me.run_id = ? AND r.thread_id = ? AND r.status = 'running' "
            "AND r.replica != ? AND CASE WHEN r.turn_no = 0 OR me.turn_no = 0 "
            "THEN r.created_at < me.created_at OR (r.created_at = me.created_at AND r.run_id < me.run_id) "
            "ELSE r.turn_no < me.turn_no END"
        )
        args = (run_id, thread_id, self.replica_id)
        return int(await self.db.read(lambda c: c.execute(sql, args).fetchone()[0]))

    async def request_stop(self, run_id: str) -> bool:
        """Ask the replica running the run to stop it; False when it is not running."""
        sql = "UPDATE runs SET stop_requested = 1 WHERE run_id = ? AND status = 'running'"
        return await self.db.write(lambda c: c.execute(sql, (run_id,)).rowcount > 0)

    async def stop_requests(self) -> list[str]:
        """The ids of this replica's running runs whose Stop was asked through another replica."""
        sql = "SELECT run_id FROM runs WHERE replica = ? AND status = 'running' AND stop_requested = 1"
        return [r[0] for r in await self.db.read(lambda c: c.execute(sql, (self.replica_id,)).fetchall())]

    async def claim(self, run: dict) -> bool:
        """Take over a dead replica's running run (so no other replica interrupts it too); False if one did."""
        sql = "UPDATE runs SET replica = ? WHERE run_id = ? AND status = 'running' AND replica = ?"
        args = (self.replica_id, run["run_id"], run["replica"])
        return await self.db.write(lambda c: c.execute(sql, args).rowcount > 0)

    async def unfinished(self, dead_only: bool = False) -> list[dict]:
        """Runs still `running` that no live replica runs, each with the text its token events carried and its
        status events as stored (`statuses`, JSON).

        dead_only=False (start-up on SQLite files, which one server uses): every run of another replica.
        dead_only=True (Postgres, shared by replicas): only the runs of replicas whose heartbeat stopped.
        """
        cutoff = (datetime.now(UTC) - timedelta(seconds=DEAD_AFTER_SECONDS)).isoformat(timespec="milliseconds")
        alive = "AND replica NOT IN (SELECT replica_id FROM replicas WHERE seen_at >= ?)" if dead_only else ""
        sql = (
            f"SELECT {', '.join(RUN_COLUMNS)} FROM runs WHERE status = 'running' AND replica != ? {alive} "
            "ORDER BY created_at"
        )
        args = (self.replica_id, cutoff) if dead_only else (self.replica_id,)
        rows = await self.db.read(lambda c: c.execute(sql, args).fetchall())
        runs = [dict(zip(RUN_COLUMNS, row, strict=True)) for row in rows]
        for run in runs:
            events = await self.events(run["run_id"])
            run["answer"] = "".join(json.loads(data)["text"] for _, name, data in events if name == "token")
            run["statuses"] = [data for _, name, data in events if name == "status"]
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

    async def forget_thread(self, thread_id: str) -> int:
        """Delete the logs of a deleted thread's finished runs (its question and answer must not outlive it, nor
        go to whoever starts a thread of that id next); returns how many runs went."""

        def job(conn: Conn) -> int:
            runs = "SELECT run_id FROM runs WHERE thread_id = ? AND status != 'running'"
            conn.execute(f"DELETE FROM run_events WHERE run_id IN ({runs})", (thread_id,))
            return conn.execute("DELETE FROM runs WHERE thread_id = ? AND status != 'running'", (thread_id,)).rowcount

        return await self.db.write(job)

    async def _beat(self) -> None:
        sql = (
            "INSERT INTO replicas (replica_id, started_at, seen_at) VALUES (?, ?, ?) "
            "ON CONFLICT (replica_id) DO UPDATE SET seen_at = excluded.seen_at"
        )
        stamp = now()
        await self.db.write(lambda c: c.execute(sql, (self.replica_id, stamp, stamp)))

    async def _heartbeat_loop(self) -> None:
        while True:
            await asyncio.sleep(HEARTBEAT_SECONDS)
            with suppress(Exception):  # a database hiccup: the next beat retries (others wait DEAD_AFTER_SECONDS)
                await self._beat()

    async def _flush_loop(self) -> None:
        while True:
            await self._wake.wait()
            await asyncio.sleep(BATCH_SECONDS)  # gather the tokens of the next few milliseconds into one commit
            self._wake.clear()
            await asyncio.shield(self.flush())
