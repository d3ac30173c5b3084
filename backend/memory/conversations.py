"""ConversationStore: threads and their finished turns, as rows beside the checkpoints in the same database.

The rows are a projection of the checkpoints: `record_turn` runs inside the transaction that commits a turn's
final checkpoint (see store/checkpointer.py), and `delete_thread_rows` inside the one that deletes a thread's
checkpoints. So the thread page, the export and the model's memory can never disagree, whatever is killed when.

`conversation_keys` maps the hash of a conversation as an OpenAI client holds it (see backend/completions.py) to
the thread that holds it, so the client's next request, which repeats that conversation, continues the thread.
"""

import json
from collections.abc import Mapping
from typing import Any

from backend.contract.text import title_from
from backend.contract.types import StoredTurn
from backend.store.database import Conn, Cursor, Database

LOCAL_OWNER = "local"
VIA_API = "via-api:"  # conversation_keys: a key of this prefix marks its thread as held through /v1
_VIA_API_COLUMN = "EXISTS (SELECT 1 FROM conversation_keys k WHERE k.key = ? || threads.thread_id) AS via_api"
JSON_COLUMNS = ("scope", "sources", "steps", "triage", "validation")
_SCHEMA = """
CREATE TABLE IF NOT EXISTS threads (
    thread_id TEXT PRIMARY KEY,
    owner TEXT NOT NULL,
    title TEXT NOT NULL,
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL
);
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
);
CREATE TABLE IF NOT EXISTS conversation_keys (
    key TEXT PRIMARY KEY,
    thread_id TEXT NOT NULL,
    created_at TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS conversation_keys_thread ON conversation_keys(thread_id);
CREATE TABLE IF NOT EXISTS thread_owners (
    thread_id TEXT PRIMARY KEY,
    owner TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS thread_owners_owner ON thread_owners(owner);
"""
_ADDED_COLUMNS = {  # columns added after the first release, with their defaults for older rows
    "run_id": "TEXT NOT NULL DEFAULT ''",
    "route_reason": "TEXT NOT NULL DEFAULT ''",
    "triage": "TEXT NOT NULL DEFAULT 'null'",
    "validation": "TEXT NOT NULL DEFAULT 'null'",
    "status": "TEXT NOT NULL DEFAULT 'completed'",
    "scope": "TEXT NOT NULL DEFAULT 'null'",
}
TURN_COLUMNS = (
    *("thread_id", "turn", "run_id", "question", "answer", "rewritten_query", "intent", "route_reason"),
    *("sources", "steps", "triage", "validation", "provider", "model", "latency_ms", "use_memory", "status"),
    *("created_at", "scope"),
)


def create_tables(conn: Conn) -> None:
    """Create or upgrade the tables of a SQLite file (idempotent; Postgres tables come from its migrations)."""
    conn.executescript(_SCHEMA)
    have = {row[1] for row in conn.execute("PRAGMA table_info(turns)")}
    for name, decl in _ADDED_COLUMNS.items():
        if name not in have:
            conn.execute(f"ALTER TABLE turns ADD COLUMN {name} {decl}")
    conn.execute("CREATE UNIQUE INDEX IF NOT EXISTS turns_run_id ON turns(run_id) WHERE run_id != ''")
    conn.execute(
        "INSERT INTO thread_owners (thread_id, owner) SELECT thread_id, owner FROM threads WHERE true "
        "ON CONFLICT DO NOTHING"
    )


def record_turn(conn: Conn, thread_id: str, values: Mapping[str, Any]) -> bool:
    """Checkpoint hook: store the turn a checkpoint finishes (once per run) and create or touch its thread.

    Also stores a run that did not finish (status `stopped` or `interrupted`, called with {"turn_record": …}):
    a row beside the history that no checkpoint holds, so the model's memory never sees it. True when inserted.
    """
    record = values.get("turn_record")
    if not record or not record.get("run_id"):
        return False
    row = {**record, "thread_id": thread_id, "turn": 0}
    row |= {c: json.dumps(record.get(c)) for c in JSON_COLUMNS}
    cols = [c for c in TURN_COLUMNS if c != "turn"]
    row["use_memory"] = bool(row.get("use_memory"))
    inserted = conn.execute(
        f"INSERT INTO turns (turn, {', '.join(cols)}) "
        f"SELECT COALESCE(MAX(turn), 0) + 1, {', '.join('?' * len(cols))} FROM turns WHERE thread_id = ? "
        "ON CONFLICT DO NOTHING",
        (*(row[c] for c in cols), thread_id),
    ).rowcount
    if inserted:
        claimed = conn.execute("SELECT owner FROM thread_owners WHERE thread_id = ?", (thread_id,)).fetchone()
        owner = values.get("owner") or (claimed[0] if claimed else LOCAL_OWNER)
        conn.execute(
            "INSERT INTO thread_owners (thread_id, owner) VALUES (?, ?) ON CONFLICT DO NOTHING", (thread_id, owner)
        )
        conn.execute(
            "INSERT INTO threads (thread_id, owner, title, created_at, updated_at) VALUES (?, ?, ?, ?, ?) "
            "ON CONFLICT(thread_id) DO UPDATE SET updated_at = excluded.updated_at",
            (
                thread_id,
                owner,
                title_from(record["question"]),
                *[record["created_at"]] * 2,
            ),
        )
    return bool(inserted)


def delete_thread_rows(conn: Conn, thread_id: str) -> None:
    """Checkpoint hook: remove a thread's rows in the transaction that deletes its checkpoints."""
    conn.execute("DELETE FROM turns WHERE thread_id = ?", (thread_id,))
    conn.execute("DELETE FROM threads WHERE thread_id = ?", (thread_id,))
    conn.execute("DELETE FROM conversation_keys WHERE thread_id = ?", (thread_id,))
    conn.execute("DELETE FROM thread_owners WHERE thread_id = ?", (thread_id,))


def _flagged(row: dict) -> dict:
    """A thread row with via_api as a bool (SQLite says 1 or 0)."""
    return {**row, "via_api": bool(row["via_api"])}


def _dicts(cur: Cursor) -> list[dict]:
    cols = [c[0] for c in cur.description]
    return [dict(zip(cols, row, strict=True)) for row in cur.fetchall()]


def _turn(row: dict) -> StoredTurn:
    for c in JSON_COLUMNS:
        row[c] = json.loads(row[c])
    row["use_memory"] = bool(row["use_memory"])
    return StoredTurn(**row)  # type: ignore[typeddict-item]


class ConversationStore:
    """Reads of threads and turns, and the writes that are not part of a turn (rename)."""

    def __init__(self, db: Database) -> None:
        self._db = db
        self._creation_order = "rowid" if db.dialect == "sqlite" else "seq"  # ties of updated_at: newest first

    async def setup(self) -> None:
        """Create or upgrade the tables of a SQLite file (Postgres is migrated before the server starts)."""
        if self._db.dialect == "sqlite":
            await self._db.call(lambda: create_tables(self._db.conn))  # type: ignore[attr-defined]

    async def threads(self, owner: str = LOCAL_OWNER) -> list[dict]:
        """The owner's threads, most recently updated first; `via_api`: a /v1 client (Open WebUI, the openai SDK)
        has had turns on it (remember_keys marks it)."""
        sql = (
            f"SELECT thread_id, title, created_at, updated_at, {_VIA_API_COLUMN} FROM threads WHERE owner = ? "
            f"ORDER BY updated_at DESC, {self._creation_order} DESC"
        )
        rows = await self._db.read(lambda c: _dicts(c.execute(sql, (VIA_API, owner))))
        return [_flagged(r) for r in rows]

    async def thread(self, thread_id: str, owner: str = LOCAL_OWNER) -> dict | None:
        """One thread's row, or None."""
        sql = (
            f"SELECT thread_id, title, created_at, updated_at, {_VIA_API_COLUMN} FROM threads "
            "WHERE thread_id = ? AND owner = ?"
        )
        rows = await self._db.read(lambda c: _dicts(c.execute(sql, (VIA_API, thread_id, owner))))
        return _flagged(rows[0]) if rows else None

    async def turns(self, thread_id: str) -> list[StoredTurn]:
        """A thread's finished turns in order."""
        sql = f"SELECT {', '.join(TURN_COLUMNS)} FROM turns WHERE thread_id = ? ORDER BY turn"
        return [_turn(r) for r in await self._db.read(lambda c: _dicts(c.execute(sql, (thread_id,))))]

    async def rename(self, thread_id: str, title: str, owner: str = LOCAL_OWNER) -> bool:
        """Set a thread's title; False when the thread does not exist. Its place in the list (`updated_at`, its
        last turn) stays: a rename is not a new message."""
        sql = "UPDATE threads SET title = ? WHERE thread_id = ? AND owner = ?"
        return await self._db.write(lambda c: c.execute(sql, (title, thread_id, owner)).rowcount > 0)

    async def thread_for_key(self, key: str) -> str | None:
        """The one thread whose conversation hashes to key, or None (none, or several: ambiguous)."""
        sql = "SELECT thread_id FROM conversation_keys WHERE key = ? AND thread_id != ''"
        rows = await self._db.read(lambda c: c.execute(sql, (key,)).fetchall())
        return rows[0][0] if rows else None

    async def remember_keys(self, keys: list[str], thread_id: str, created_at: str) -> None:
        """Map each key to the thread; a key another thread already holds maps to neither from now on. The thread is
        marked as held through /v1 by one more key, VIA_API + its id, which no other thread can hold (a
        conversation's own keys can: two threads that asked the same first question share it, and neither has it)."""
        keys = [*keys, f"{VIA_API}{thread_id}"]
        sql = (
            "INSERT INTO conversation_keys (key, thread_id, created_at) VALUES (?, ?, ?) ON CONFLICT(key) DO UPDATE "
            "SET thread_id = CASE WHEN conversation_keys.thread_id = excluded.thread_id "
            "THEN conversation_keys.thread_id ELSE '' END, "
            "created_at = excluded.created_at"
        )
        await self._db.write(lambda c: c.executemany(sql, [(k, thread_id, created_at) for k in keys]))

    async def claim(self, thread_id: str, owner: str) -> bool:
        """Make the owner the thread's owner unless someone is already; True when it is (now) the owner's."""

        def job(conn: Conn) -> bool:
            conn.execute(
                "INSERT INTO thread_owners (thread_id, owner) VALUES (?, ?) ON CONFLICT DO NOTHING", (thread_id, owner)
            )
            row = conn.execute("SELECT owner FROM thread_owners WHERE thread_id = ?", (thread_id,)).fetchone()
            return row[0] == owner

        return await self._db.write(job)

    async def owner_of(self, thread_id: str) -> str | None:
        """Who owns the thread (from its first run on), or None when nobody has run a turn on it."""
        sql = "SELECT owner FROM thread_owners WHERE thread_id = ?"
        row = await self._db.read(lambda c: c.execute(sql, (thread_id,)).fetchone())
        return row[0] if row else None

    async def owned(self, owner: str) -> list[str]:
        """The ids of every thread the owner holds, stored or only claimed by a run."""
        sql = "SELECT thread_id FROM thread_owners WHERE owner = ?"
        return [r[0] for r in await self._db.read(lambda c: c.execute(sql, (owner,)).fetchall())]

    async def adopt(self, from_owner: str, to_owner: str) -> int:
        """Give every thread of one owner to another (the local person's threads to the first admin)."""

        def job(conn: Conn) -> int:
            conn.execute("UPDATE threads SET owner = ? WHERE owner = ?", (to_owner, from_owner))
            return conn.execute("UPDATE thread_owners SET owner = ? WHERE owner = ?", (to_owner, from_owner)).rowcount

        return await self._db.write(job)
