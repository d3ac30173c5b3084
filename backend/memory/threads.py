"""ThreadStore: one row per thread (owner, title, timestamps) beside the checkpoints in SQLite."""

import aiosqlite

from backend.clock import now

LOCAL_OWNER = "local"
TITLE_CHARS = 60

_SCHEMA = """
CREATE TABLE IF NOT EXISTS threads (
    thread_id TEXT PRIMARY KEY,
    owner TEXT NOT NULL,
    title TEXT NOT NULL,
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL
)"""


def title_from(question: str) -> str:
    """A thread title from its first question: one line, at most TITLE_CHARS characters."""
    flat = " ".join(question.split())
    return flat if len(flat) <= TITLE_CHARS else flat[: TITLE_CHARS - 1].rstrip() + "…"


class ThreadStore:
    """Thread metadata, so threads can be listed and isolated per owner without reading checkpoints."""

    def __init__(self, conn: aiosqlite.Connection) -> None:
        self._conn = conn

    async def setup(self) -> None:
        """Create the table when missing."""
        await self._conn.execute(_SCHEMA)
        await self._conn.commit()

    async def touch(self, thread_id: str, first_question: str, owner: str = LOCAL_OWNER) -> None:
        """Record a completed turn: create the thread with a title, or bump its updated_at."""
        stamp = now()
        await self._conn.execute(
            "INSERT INTO threads (thread_id, owner, title, created_at, updated_at) VALUES (?, ?, ?, ?, ?) "
            "ON CONFLICT(thread_id) DO UPDATE SET updated_at = excluded.updated_at",
            (thread_id, owner, title_from(first_question), stamp, stamp),
        )
        await self._conn.commit()

    async def list(self, owner: str = LOCAL_OWNER) -> list[dict]:
        """The owner's threads, most recently updated first."""
        cur = await self._conn.execute(
            "SELECT thread_id, title, created_at, updated_at FROM threads WHERE owner = ? "
            "ORDER BY updated_at DESC, rowid DESC",
            (owner,),
        )
        cols = [c[0] for c in cur.description]
        return [dict(zip(cols, row, strict=True)) for row in await cur.fetchall()]

    async def get(self, thread_id: str, owner: str = LOCAL_OWNER) -> dict | None:
        """One thread's row, or None."""
        cur = await self._conn.execute(
            "SELECT thread_id, title, created_at, updated_at FROM threads WHERE thread_id = ? AND owner = ?",
            (thread_id, owner),
        )
        row = await cur.fetchone()
        return dict(zip([c[0] for c in cur.description], row, strict=True)) if row else None

    async def rename(self, thread_id: str, title: str, owner: str = LOCAL_OWNER) -> bool:
        """Set a thread's title; False when the thread does not exist."""
        cur = await self._conn.execute(
            "UPDATE threads SET title = ?, updated_at = ? WHERE thread_id = ? AND owner = ?",
            (title, now(), thread_id, owner),
        )
        await self._conn.commit()
        return cur.rowcount > 0

    async def delete(self, thread_id: str, owner: str = LOCAL_OWNER) -> bool:
        """Remove a thread's row; False when it did not exist."""
        cur = await self._conn.execute("DELETE FROM threads WHERE thread_id = ? AND owner = ?", (thread_id, owner))
        await self._conn.commit()
        return cur.rowcount > 0
