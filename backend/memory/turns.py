"""TurnStore: one row per completed turn, beside the checkpoints, for listing, export and analysis."""

import json
from dataclasses import asdict, dataclass, field

import aiosqlite

from backend.clock import now

_SCHEMA = """
CREATE TABLE IF NOT EXISTS turns (
    thread_id TEXT NOT NULL,
    turn INTEGER NOT NULL,
    question TEXT NOT NULL,
    answer TEXT NOT NULL,
    rewritten_query TEXT NOT NULL,
    intent TEXT NOT NULL,
    sources TEXT NOT NULL,
    steps TEXT NOT NULL,
    provider TEXT NOT NULL,
    model TEXT NOT NULL,
    latency_ms REAL NOT NULL,
    use_memory INTEGER NOT NULL,
    created_at TEXT NOT NULL,
    PRIMARY KEY (thread_id, turn)
)"""


@dataclass
class Turn:
    """A completed question and answer with how it was produced."""

    thread_id: str
    question: str
    answer: str
    rewritten_query: str
    intent: str
    sources: list[dict]
    steps: list[str]
    provider: str
    model: str
    latency_ms: float
    use_memory: bool = True
    turn: int = 0
    created_at: str = field(default_factory=now)


class TurnStore:
    """Append-only turn rows; deleted with their thread."""

    def __init__(self, conn: aiosqlite.Connection) -> None:
        self._conn = conn

    async def setup(self) -> None:
        """Create the table when missing."""
        await self._conn.execute(_SCHEMA)
        await self._conn.commit()

    async def record(self, turn: Turn) -> Turn:
        """Store a turn as the thread's next turn number; returns it with the number set."""
        cur = await self._conn.execute(
            "SELECT COALESCE(MAX(turn), 0) + 1 FROM turns WHERE thread_id = ?", (turn.thread_id,)
        )
        (turn.turn,) = await cur.fetchone()  # type: ignore[misc]
        row = asdict(turn)
        row["sources"], row["steps"] = json.dumps(turn.sources), json.dumps(turn.steps)
        cols = ", ".join(row)
        await self._conn.execute(
            f"INSERT INTO turns ({cols}) VALUES ({', '.join('?' * len(row))})", tuple(row.values())
        )
        await self._conn.commit()
        return turn

    async def list(self, thread_id: str) -> list[Turn]:
        """A thread's turns in order."""
        cur = await self._conn.execute("SELECT * FROM turns WHERE thread_id = ? ORDER BY turn", (thread_id,))
        cols = [c[0] for c in cur.description]
        turns = []
        for values in await cur.fetchall():
            row = dict(zip(cols, values, strict=True))
            row["sources"], row["steps"] = json.loads(row["sources"]), json.loads(row["steps"])
            row["use_memory"] = bool(row["use_memory"])
            turns.append(Turn(**row))
        return turns

    async def delete_thread(self, thread_id: str) -> None:
        """Remove every turn of a thread."""
        await self._conn.execute("DELETE FROM turns WHERE thread_id = ?", (thread_id,))
        await self._conn.commit()
