"""SqliteCheckpointer: LangGraph's SqliteSaver on a SqliteDatabase, cancellation-safe, with a commit hook.

Every write is one job in the database's worker thread (see store/sqlite.py), so a cancelled turn never leaves
the file locked. `on_put` runs inside the same transaction as the checkpoint it accompanies: the conversation
rows that describe a finished turn are committed together with the checkpoint that finishes it, or not at all.
"""

import sqlite3
from collections.abc import AsyncIterator, Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from typing import Any

from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.base import ChannelVersions, Checkpoint, CheckpointMetadata, CheckpointTuple
from langgraph.checkpoint.sqlite import SqliteSaver

from backend.store.sqlite import SqliteDatabase

PutHook = Callable[[sqlite3.Connection, str, Mapping[str, Any]], object]  # (conn, thread_id, channel values)
DeleteHook = Callable[[sqlite3.Connection, str], None]  # (conn, thread_id)


class SqliteCheckpointer(SqliteSaver):
    """Checkpoints in the Ragline database; async methods run whole transactions in its worker thread."""

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

    def put(
        self,
        config: RunnableConfig,
        checkpoint: Checkpoint,
        metadata: CheckpointMetadata,
        new_versions: ChannelVersions,
    ) -> RunnableConfig:
        """Save a checkpoint and, in the same transaction, whatever the put hook derives from it."""
        with self.db.transaction() as conn:
            saved = super().put(config, checkpoint, metadata, new_versions)
            if self._on_put:
                self._on_put(conn, str(config["configurable"]["thread_id"]), checkpoint["channel_values"])
        return saved

    def put_writes(
        self, config: RunnableConfig, writes: Sequence[tuple[str, Any]], task_id: str, task_path: str = ""
    ) -> None:
        """Store a task's pending writes in one transaction."""
        with self.db.transaction():
            super().put_writes(config, writes, task_id, task_path)

    def delete_thread(self, thread_id: str) -> None:
        """Delete a thread's checkpoints, writes and hooked rows in one transaction: all or nothing."""
        with self.db.transaction() as conn:
            super().delete_thread(thread_id)
            if self._on_delete:
                self._on_delete(conn, str(thread_id))

    def discard_after(self, thread_id: str, checkpoint_id: str | None) -> int:
        """Delete the thread's checkpoints newer than checkpoint_id (all of them when None); returns how many."""
        with self.db.transaction() as conn:
            newer = "AND checkpoint_id > ?" if checkpoint_id else ""
            args = (thread_id, checkpoint_id) if checkpoint_id else (thread_id,)
            conn.execute(f"DELETE FROM writes WHERE thread_id = ? {newer}", args)
            return conn.execute(f"DELETE FROM checkpoints WHERE thread_id = ? {newer}", args).rowcount

    def discard_unfinished(self, thread_id: str, base: str | None, run_id: str) -> bool:
        """Drop what a run checkpointed after `base`, unless its final checkpoint (with its turn) is already stored.

        A cancellation can land after the final checkpoint committed and before the caller heard of it: that turn
        is complete and kept. Returns True when something was dropped or nothing was there to keep.
        """
        with self.db.transaction():
            latest = self.get_tuple({"configurable": {"thread_id": thread_id, "checkpoint_ns": ""}})
            record = latest.checkpoint["channel_values"].get("turn_record") if latest else None
            if record and record.get("run_id") == run_id:
                return False
            self.discard_after(thread_id, base)
            return True

    # --- async API: the same methods as jobs of the database's worker --------------------------------

    async def aget_tuple(self, config: RunnableConfig) -> CheckpointTuple | None:
        return await self.db.call(lambda: self.get_tuple(config))

    async def alist(
        self,
        config: RunnableConfig | None,
        *,
        filter: dict[str, Any] | None = None,
        before: RunnableConfig | None = None,
        limit: int | None = None,
    ) -> AsyncIterator[CheckpointTuple]:
        tuples = await self.db.call(lambda: list(self.list(config, filter=filter, before=before, limit=limit)))
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

    async def adiscard_unfinished(self, thread_id: str, base: str | None, run_id: str) -> bool:
        """Async discard_unfinished."""
        return await self.db.call(lambda: self.discard_unfinished(thread_id, base, run_id))

    async def aget_delta_channel_history(self, *, config: RunnableConfig, channels: Sequence[str]) -> Mapping:
        return await self.db.call(lambda: self.get_delta_channel_history(config=config, channels=channels))
