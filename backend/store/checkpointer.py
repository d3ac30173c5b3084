"""Checkpointers: LangGraph's SqliteSaver or PostgresSaver on Ragline's Database, cancellation-safe, with commit hooks.

Every write is one job in a worker thread of the database (see store/database.py), so a cancelled turn never
leaves a transaction open. `on_put` runs inside the same transaction as the checkpoint it accompanies: the
conversation rows that describe a finished turn are committed together with the checkpoint that finishes it, or
not at all. `checkpointer_for` picks the saver for the engine.

On Postgres the synchronous PostgresSaver runs in the database's worker threads on the shared pool, like every
other store, rather than AsyncPostgresSaver: the turn's rows and its checkpoint must share one transaction, and a
job that has started must finish even when the turn that awaited it is cancelled.
"""

import sqlite3
from collections.abc import AsyncIterator, Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from typing import Any

import psycopg
from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.base import ChannelVersions, Checkpoint, CheckpointMetadata, CheckpointTuple
from langgraph.checkpoint.postgres import PostgresSaver
from langgraph.checkpoint.sqlite import SqliteSaver
from psycopg.rows import dict_row

from backend.store.database import Conn, Database
from backend.store.postgres import PostgresDatabase
from backend.store.sqlite import SqliteDatabase

PutHook = Callable[[Conn, str, Mapping[str, Any]], object]  # (conn, thread_id, channel values)
DeleteHook = Callable[[Conn, str], None]  # (conn, thread_id)
SETUP_LOCK = 7_243_110_002  # pg_advisory_lock key: one replica runs the saver's own migrations at a time


class HookedCheckpointer:
    """The methods both checkpointers share; mixed in before the LangGraph saver they extend."""

    db: Database
    _on_put: PutHook | None
    _on_delete: DeleteHook | None
    WRITES_TABLE = "writes"  # where the saver keeps pending writes

    def put(
        self,
        config: RunnableConfig,
        checkpoint: Checkpoint,
        metadata: CheckpointMetadata,
        new_versions: ChannelVersions,
    ) -> RunnableConfig:
        """Save a checkpoint and, in the same transaction, whatever the put hook derives from it."""
        with self.db.transaction() as conn:
            saved = super().put(config, checkpoint, metadata, new_versions)  # type: ignore[misc]
            if self._on_put:
                self._on_put(conn, str(config["configurable"]["thread_id"]), checkpoint["channel_values"])
        return saved

    def put_writes(
        self, config: RunnableConfig, writes: Sequence[tuple[str, Any]], task_id: str, task_path: str = ""
    ) -> None:
        """Store a task's pending writes in one transaction."""
        with self.db.transaction():
            super().put_writes(config, writes, task_id, task_path)  # type: ignore[misc]

    def delete_thread(self, thread_id: str) -> None:
        """Delete a thread's checkpoints, writes and hooked rows in one transaction: all or nothing."""
        with self.db.transaction() as conn:
            super().delete_thread(thread_id)  # type: ignore[misc]
            if self._on_delete:
                self._on_delete(conn, str(thread_id))

    def discard_after(self, thread_id: str, checkpoint_id: str | None) -> int:
        """Delete the thread's checkpoints newer than checkpoint_id (all of them when None); returns how many."""
        with self.db.transaction() as conn:
            newer = "AND checkpoint_id > ?" if checkpoint_id else ""
            args = (thread_id, checkpoint_id) if checkpoint_id else (thread_id,)
            conn.execute(f"DELETE FROM {self.WRITES_TABLE} WHERE thread_id = ? {newer}", args)
            return conn.execute(f"DELETE FROM checkpoints WHERE thread_id = ? {newer}", args).rowcount

    def prune_before(self, thread_id: str, checkpoint_id: str) -> int:
        """Delete the thread's checkpoints older than checkpoint_id, and what only they used; returns how many."""
        with self.db.transaction() as conn:
            args = (thread_id, checkpoint_id)
            conn.execute(f"DELETE FROM {self.WRITES_TABLE} WHERE thread_id = ? AND checkpoint_id < ?", args)
            pruned = conn.execute("DELETE FROM checkpoints WHERE thread_id = ? AND checkpoint_id < ?", args).rowcount
            self.drop_unused(conn, thread_id)
            return pruned

    def drop_unused(self, conn: Conn, thread_id: str) -> None:
        """Remove what no checkpoint of the thread refers to any more (SQLite: nothing; each checkpoint is whole)."""

    def discard_unfinished(self, thread_id: str, base: str | None, run_id: str) -> bool:
        """Drop what a run checkpointed after `base`, unless its final checkpoint (with its turn) is already stored.

        A cancellation can land after the final checkpoint committed and before the caller heard of it: that turn
        is complete and kept. Returns True when something was dropped or nothing was there to keep.
        """
        with self.db.transaction():
            latest = self.get_tuple({"configurable": {"thread_id": thread_id, "checkpoint_ns": ""}})  # type: ignore[attr-defined]
            record = latest.checkpoint["channel_values"].get("turn_record") if latest else None
            if record and record.get("run_id") == run_id:
                return False
            self.discard_after(thread_id, base)
            return True

    # --- async API: the same methods as jobs of the database's workers --------------------------------

    async def aget_tuple(self, config: RunnableConfig) -> CheckpointTuple | None:
        return await self.db.call(lambda: self.get_tuple(config))  # type: ignore[attr-defined]

    async def alist(
        self,
        config: RunnableConfig | None,
        *,
        filter: dict[str, Any] | None = None,
        before: RunnableConfig | None = None,
        limit: int | None = None,
    ) -> AsyncIterator[CheckpointTuple]:
        tuples = await self.db.call(lambda: list(self.list(config, filter=filter, before=before, limit=limit)))  # type: ignore[attr-defined]
        for item in tuples:
            yield item

    async def aput(
        self,
        config: RunnableConfig,
        checkpoint: Checkpoint,
        metadata: CheckpointMetadata,
        new_versions: ChannelVersions,
    ) -> RunnableConfig:
        return await self.db.call(lambda: self.put(config, checkpoint, metadata, new_versions))

    async def aput_writes(
        self, config: RunnableConfig, writes: Sequence[tuple[str, Any]], task_id: str, task_path: str = ""
    ) -> None:
        await self.db.call(lambda: self.put_writes(config, writes, task_id, task_path))

    async def adelete_thread(self, thread_id: str) -> None:
        await self.db.call(lambda: self.delete_thread(thread_id))

    async def adiscard_after(self, thread_id: str, checkpoint_id: str | None) -> int:
        """Async discard_after."""
        return await self.db.call(lambda: self.discard_after(thread_id, checkpoint_id))

    async def aprune_before(self, thread_id: str, checkpoint_id: str) -> int:
        """Async prune_before."""
        return await self.db.call(lambda: self.prune_before(thread_id, checkpoint_id))

    async def adiscard_unfinished(self, thread_id: str, base: str | None, run_id: str) -> bool:
        """Async discard_unfinished."""
        return await self.db.call(lambda: self.discard_unfinished(thread_id, base, run_id))

    async def aget_delta_channel_history(self, *, config: RunnableConfig, channels: Sequence[str]) -> Mapping:
        return await self.db.call(lambda: self.get_delta_channel_history(config=config, channels=channels))  # type: ignore[attr-defined]


class SqliteCheckpointer(HookedCheckpointer, SqliteSaver):
    """Checkpoints in the Ragline SQLite file; async methods run whole transactions in its worker thread."""

    def __init__(self, db: SqliteDatabase, on_put: PutHook | None = None, on_delete: DeleteHook | None = None) -> None:
        super().__init__(db.conn)
        self.db = db
        self.lock = db.lock  # one re-entrant lock for the connection, shared with the other stores
        self._on_put, self._on_delete = on_put, on_delete
        with self.lock:  # now, outside any transaction: setup's executescript would commit one half-way
            self.setup()

    @contextmanager
    def cursor(self, transaction: bool = True) -> Iterator[sqlite3.Cursor]:
        """A cursor; transactions are opened and closed by the callers below, never committed half-way."""
        with self.lock:
            self.setup()
            cur = self.conn.cursor()
            try:
                yield cur
            finally:
                cur.close()


class PostgresCheckpointer(HookedCheckpointer, PostgresSaver):
    """Checkpoints in Postgres on the shared pool: the saver's statements join the job's transaction if any."""

    WRITES_TABLE = "checkpoint_writes"

    def __init__(
        self, db: PostgresDatabase, on_put: PutHook | None = None, on_delete: DeleteHook | None = None
    ) -> None:
        super().__init__(db.pool)
        self.db = db
        self._on_put, self._on_delete = on_put, on_delete
        with psycopg.connect(db.url, autocommit=True) as lock:  # replicas starting together: one migrates
            lock.execute("SELECT pg_advisory_lock(%s)", (SETUP_LOCK,))
            self.setup()

    def drop_unused(self, conn: Conn, thread_id: str) -> None:
        """Delete the thread's channel values (blobs) that no remaining checkpoint refers to."""
        conn.execute(
            "DELETE FROM checkpoint_blobs b WHERE b.thread_id = ? AND NOT EXISTS (SELECT 1 FROM checkpoints c "
            "WHERE c.thread_id = b.thread_id AND c.checkpoint_ns = b.checkpoint_ns "
            "AND c.checkpoint -> 'channel_versions' ->> b.channel = b.version)",
            (thread_id,),
        )

    @contextmanager
    def _cursor(self, *, pipeline: bool = False) -> Iterator[psycopg.Cursor]:
        """A cursor on the transaction running in this thread, or on a pooled connection (autocommit)."""
        with self.db.connection() as conn, conn.raw.cursor(binary=True, row_factory=dict_row) as cur:  # type: ignore[attr-defined]
            yield cur


def checkpointer_for(db: Database, on_put: PutHook | None = None, on_delete: DeleteHook | None = None):
    """The checkpointer for the database's engine (call it in a worker thread: setup touches the database)."""
    if isinstance(db, PostgresDatabase):
        return PostgresCheckpointer(db, on_put, on_delete)
    assert isinstance(db, SqliteDatabase)
    return SqliteCheckpointer(db, on_put, on_delete)


Checkpointer = SqliteCheckpointer | PostgresCheckpointer
