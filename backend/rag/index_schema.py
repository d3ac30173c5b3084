"""The SQLite schema of the knowledge index (knowledge.sqlite): the documents, chunks and texts tables, the FTS5
index its triggers keep in step with the chunks, and the in-place upgrade of a file made by an older Ragline (on
Postgres the tables come from the Alembic migration 0003_knowledge)."""

import sqlite3

from backend.store.database import Database

# the documents table's columns: made by _SCHEMA, and again by _ADD_COLLECTION when it upgrades an old file
_DOCUMENTS = """
    id TEXT PRIMARY KEY,
    name TEXT NOT NULL COLLATE NOCASE,
    type TEXT NOT NULL,
    size INTEGER NOT NULL DEFAULT 0,
    pages INTEGER,
    chunks INTEGER NOT NULL DEFAULT 0,
    sha256 TEXT NOT NULL DEFAULT '',
    version INTEGER NOT NULL DEFAULT 0,
    status TEXT NOT NULL,
    progress REAL NOT NULL DEFAULT 0,
    error TEXT,
    ingested_at TEXT,
    flagged INTEGER NOT NULL DEFAULT 0,
    collection TEXT NOT NULL DEFAULT '',
    UNIQUE (collection, name)
"""

_SCHEMA = f"""
CREATE TABLE IF NOT EXISTS documents ({_DOCUMENTS});
CREATE TABLE IF NOT EXISTS chunks (
    rowid INTEGER PRIMARY KEY,
    doc_id TEXT NOT NULL,
    version INTEGER NOT NULL,
    idx INTEGER NOT NULL,
    text TEXT NOT NULL,
    page INTEGER,
    section TEXT,
    start INTEGER NOT NULL,
    end INTEGER NOT NULL,
    hash TEXT NOT NULL,
    UNIQUE (doc_id, version, idx)
);
CREATE TABLE IF NOT EXISTS texts (
    doc_id TEXT PRIMARY KEY,
    version INTEGER NOT NULL,
    text TEXT NOT NULL,
    pages TEXT
);
CREATE VIRTUAL TABLE IF NOT EXISTS chunks_fts USING fts5(
    text, content='chunks', content_rowid='rowid', tokenize='porter unicode61 remove_diacritics 2'
);
CREATE TRIGGER IF NOT EXISTS chunks_ai AFTER INSERT ON chunks BEGIN
    INSERT INTO chunks_fts(rowid, text) VALUES (new.rowid, new.text);
END;
CREATE TRIGGER IF NOT EXISTS chunks_ad AFTER DELETE ON chunks BEGIN
    INSERT INTO chunks_fts(chunks_fts, rowid, text) VALUES ('delete', old.rowid, old.text);
END;
"""

# knowledge.sqlite made before collections: names were unique over the whole registry; now within a collection
_ADD_COLLECTION = f"""
CREATE TABLE documents_new ({_DOCUMENTS});
INSERT INTO documents_new (id, name, type, size, pages, chunks, sha256, version, status, progress, error,
    ingested_at, flagged)
SELECT id, name, type, size, pages, chunks, sha256, version, status, progress, error, ingested_at, flagged
FROM documents;
DROP TABLE documents;
ALTER TABLE documents_new RENAME TO documents;
"""


def setup_sqlite(db: Database) -> None:
    """Create knowledge.sqlite's tables, or upgrade a file made by an older Ragline in place."""
    with db.connection() as conn:
        assert isinstance(conn, sqlite3.Connection)
        conn.executescript(_SCHEMA)
        columns = {r[1] for r in conn.execute("PRAGMA table_info(documents)")}
        if "flagged" not in columns:  # knowledge.sqlite made before chunks were scanned for injections
            conn.execute("ALTER TABLE documents ADD COLUMN flagged INTEGER NOT NULL DEFAULT 0")
        if "collection" not in columns:
            try:
                conn.executescript(f"BEGIN IMMEDIATE;{_ADD_COLLECTION}COMMIT;")
            except sqlite3.Error:
                conn.execute("ROLLBACK")
                raise
