"""The account tables on each engine: SQLite files create and upgrade themselves here; Postgres gets them from the
migration backend/store/migrations/versions/0002_accounts.py, and setup only checks they are there.

Where the engines differ the SQL stays the same: e-mails and group names are unique whatever their case and
composition, as contract.text.fold_name folds them: the unique indexes (SQLite's COLLATE NOCASE, Postgres' on
lower(…)) fold less, so every lookup and the check before a write compare with store.database.same_name, in the
writing transaction (SQLite's unicode_lower, Postgres' lower(normalize(…))); read_only is an INTEGER
0/1 on both. Insertion order, the tie-break of lists made in the same millisecond, is SQLite's rowid and a `seq`
column in Postgres (INSERTION_ORDER).
"""

import sqlite3

from backend.store.database import Conn, Dialect

SQLITE_SCHEMA = """
CREATE TABLE IF NOT EXISTS users (
    id TEXT PRIMARY KEY,
    email TEXT NOT NULL UNIQUE COLLATE NOCASE,
    display_name TEXT NOT NULL,
    role TEXT NOT NULL CHECK (role IN ('admin', 'user')),
    password_hash TEXT NOT NULL,
    created_at TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS users_email_lower ON users(lower(email));
CREATE TABLE IF NOT EXISTS sessions (
    token_hash TEXT PRIMARY KEY,
    user_id TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
    created_at TEXT NOT NULL,
    expires_at TEXT NOT NULL,
    last_seen_at TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS sessions_user ON sessions(user_id);
CREATE TABLE IF NOT EXISTS api_keys (
    id TEXT PRIMARY KEY,
    user_id TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
    name TEXT NOT NULL,
    prefix TEXT NOT NULL,
    key_hash TEXT NOT NULL UNIQUE,
    created_at TEXT NOT NULL,
    last_used_at TEXT,
    revoked_at TEXT,
    read_only INTEGER NOT NULL DEFAULT 0,
    expires_at TEXT
);
CREATE INDEX IF NOT EXISTS api_keys_user ON api_keys(user_id);
CREATE TABLE IF NOT EXISTS groups (
    id TEXT PRIMARY KEY,
    name TEXT NOT NULL UNIQUE COLLATE NOCASE,
    created_at TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS group_members (
    group_id TEXT NOT NULL REFERENCES groups(id) ON DELETE CASCADE,
    user_id TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
    PRIMARY KEY (group_id, user_id)
);
CREATE INDEX IF NOT EXISTS group_members_user ON group_members(user_id);
CREATE TABLE IF NOT EXISTS profiles (
    user_id TEXT PRIMARY KEY REFERENCES users(id) ON DELETE CASCADE,
    job_title TEXT NOT NULL,
    team TEXT NOT NULL,
    language TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS invitations (
    id TEXT PRIMARY KEY,
    token_hash TEXT NOT NULL UNIQUE,
    email TEXT COLLATE NOCASE,
    role TEXT NOT NULL CHECK (role IN ('admin', 'user')),
    created_by TEXT NOT NULL,
    created_at TEXT NOT NULL,
    expires_at TEXT NOT NULL,
    used_at TEXT,
    revoked_at TEXT
);
"""
ADDED_KEY_COLUMNS = {"read_only": "INTEGER NOT NULL DEFAULT 0", "expires_at": "TEXT"}  # to files made before them
TABLES = ("users", "sessions", "api_keys", "groups", "group_members", "profiles", "invitations")
INSERTION_ORDER: dict[Dialect, str] = {"sqlite": "rowid", "postgres": "seq"}


def add_missing_columns(conn: sqlite3.Connection) -> None:
    """Add the columns a SQLite file made by an older Ragline misses (in the caller's transaction)."""
    have = {row[1] for row in conn.execute("PRAGMA table_info(api_keys)")}
    for column, kind in ADDED_KEY_COLUMNS.items():
        if column not in have:
            conn.execute(f"ALTER TABLE api_keys ADD COLUMN {column} {kind}")


def check_postgres_tables(conn: Conn) -> None:
    """RuntimeError naming the account tables a Postgres database misses (it was not migrated)."""
    rows = conn.execute(
        "SELECT table_name FROM information_schema.tables WHERE table_schema = current_schema()"
    ).fetchall()
    missing = sorted(set(TABLES) - {row[0] for row in rows})
    if missing:
        raise RuntimeError(f"the account tables {', '.join(missing)} are missing: run backend.store.migrate.upgrade")
