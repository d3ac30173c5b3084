"""The run log's tables in a SQLite file (runs.sqlite); on Postgres they come from the migrations."""

from backend.store.database import Conn, Database

_SCHEMA = """
CREATE TABLE IF NOT EXISTS runs (
    run_id TEXT PRIMARY KEY,
    thread_id TEXT NOT NULL,
    question TEXT NOT NULL,
    status TEXT NOT NULL,
    created_at TEXT NOT NULL,
    finished_at TEXT,
    last_event_id INTEGER NOT NULL DEFAULT 0,
    replica TEXT NOT NULL DEFAULT '',
    stop_requested INTEGER NOT NULL DEFAULT 0,
    turn_no INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX IF NOT EXISTS runs_by_status ON runs(status, finished_at);
CREATE TABLE IF NOT EXISTS replicas (
    replica_id TEXT PRIMARY KEY,
    started_at TEXT NOT NULL,
    seen_at TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS run_events (
    run_id TEXT NOT NULL,
    seq INTEGER NOT NULL,
    event TEXT NOT NULL,
    data TEXT NOT NULL,
    PRIMARY KEY (run_id, seq)
) WITHOUT ROWID;
"""
_ADDED_RUN_COLUMNS = {
    "replica": "TEXT NOT NULL DEFAULT ''",
    "stop_requested": "INTEGER NOT NULL DEFAULT 0",
    "turn_no": "INTEGER NOT NULL DEFAULT 0",
}


async def create_tables(db: Database) -> None:
    """Create or upgrade a SQLite file's tables (Postgres tables come from its migrations)."""
    if db.dialect == "sqlite":
        await db.call(lambda: db.conn.executescript(_SCHEMA))  # type: ignore[attr-defined]
        await db.write(_add_run_columns)


def _add_run_columns(conn: Conn) -> None:
    """Columns added to runs.sqlite files made before replicas and turn numbers (and the index on the latter)."""
    have = {row[1] for row in conn.execute("PRAGMA table_info(runs)")}
    for name, decl in _ADDED_RUN_COLUMNS.items():
        if name not in have:
            conn.execute(f"ALTER TABLE runs ADD COLUMN {name} {decl}")
    conn.execute("CREATE INDEX IF NOT EXISTS runs_by_thread ON runs(thread_id, turn_no)")
