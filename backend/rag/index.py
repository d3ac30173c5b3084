"""KnowledgeIndex: the document registry, chunk texts and the BM25 index (SQLite FTS5), in one file on disk.

Each document has an active `version`; its chunks are replaced in one transaction, so a search never sees a
mix of old and new chunks and never finds the document missing. Chroma holds the vectors under the same
(document id, version, chunk index); hits from any other version are ignored.
"""

import json
import re
import sqlite3
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from backend.clock import now
from backend.rag.chunking import Chunk

_SCHEMA = """
CREATE TABLE IF NOT EXISTS documents (
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
);
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

STOPWORDS = frozenset(
    (
        "a",
        "an",
        "and",
        "are",
        "as",
        "at",
        "be",
        "but",
        "by",
        "can",
        "do",
        "does",
        "for",
        "from",
        "has",
        "have",
        "how",
        "i",
        "if",
        "in",
        "into",
        "is",
        "it",
        "its",
        "me",
        "my",
        "of",
        "on",
        "or",
        "our",
        "should",
        "so",
        "than",
        "that",
        "the",
        "their",
        "them",
        "then",
        "there",
        "these",
        "they",
        "this",
        "to",
        "was",
        "we",
        "were",
        "what",
        "when",
        "where",
        "which",
        "who",
        "why",
        "will",
        "with",
        "would",
        "you",
        "your",
        "about",
        "any",
        "all",
        "also",
    )
)
_TERM_RE = re.compile(r"\w+", re.UNICODE)
# knowledge.sqlite made before collections: names were unique over the whole registry; now within a collection
_ADD_COLLECTION = """
CREATE TABLE documents_new (
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
);
INSERT INTO documents_new (id, name, type, size, pages, chunks, sha256, version, status, progress, error,
    ingested_at, flagged)
SELECT id, name, type, size, pages, chunks, sha256, version, status, progress, error, ingested_at, flagged
FROM documents;
DROP TABLE documents;
ALTER TABLE documents_new RENAME TO documents;
"""


@dataclass(frozen=True)
class DocumentRecord:
    """One registry row."""

    id: str
    name: str
    type: str
    size: int
    pages: int | None
    chunks: int
    sha256: str
    version: int
    status: str
    progress: float
    error: str | None
    ingested_at: str | None
    flagged: int = 0  # chunks the injection detector flagged at ingest
    collection: str = ""  # the collection's id; "" for a document filed in none (RAG_AUTH=off, or the CLI)


@dataclass(frozen=True)
class StoredChunk:
    """A chunk of a document's active version."""

    doc_id: str
    document: str
    version: int
    idx: int
    text: str
    page: int | None
    section: str | None
    start: int
    end: int
    hash: str


def fts_query(text: str) -> str | None:
    """An FTS5 OR-query of the text's content words (quoted, so user text can never be FTS syntax)."""
    terms = [t for t in dict.fromkeys(w.lower() for w in _TERM_RE.findall(text)) if t not in STOPWORDS]
    return " OR ".join(f'"{t}"' for t in terms) or None


class KnowledgeIndex:
    """Thread-safe access to knowledge.sqlite (callers run it in a worker thread from async code)."""

    def __init__(self, path: Path) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        self._conn = sqlite3.connect(path, check_same_thread=False, isolation_level=None)
        self._conn.row_factory = sqlite3.Row
        self._lock = threading.RLock()
        self._conn.execute("PRAGMA journal_mode=WAL")
        self._conn.executescript(_SCHEMA)
        columns = {r[1] for r in self._conn.execute("PRAGMA table_info(documents)")}
        if "flagged" not in columns:  # knowledge.sqlite made before chunks were scanned for injections
            self._conn.execute("ALTER TABLE documents ADD COLUMN flagged INTEGER NOT NULL DEFAULT 0")
        if "collection" not in columns:
            try:
                self._conn.executescript(f"BEGIN IMMEDIATE;{_ADD_COLLECTION}COMMIT;")
            except sqlite3.Error:
                self._conn.execute("ROLLBACK")
                raise

    def close(self) -> None:
        """Close the connection once no other thread is using it."""
        with self._lock:
            self._conn.close()

    @contextmanager
    def transaction(self) -> Iterator[sqlite3.Connection]:
        with self._lock:
            self._conn.execute("BEGIN IMMEDIATE")
            try:
                yield self._conn
            except BaseException:
                self._conn.execute("ROLLBACK")
                raise
            self._conn.execute("COMMIT")

    def rows(self, sql: str, args: tuple = ()) -> list[sqlite3.Row]:
        """The rows of one read."""
        with self._lock:
            return self._conn.execute(sql, args).fetchall()

    # --- documents ---------------------------------------------------------------------------

    def documents(self) -> list[DocumentRecord]:
        """Every document, by name."""
        return [DocumentRecord(**dict(r)) for r in self.rows("SELECT * FROM documents ORDER BY name")]

    def document(self, doc_id: str) -> DocumentRecord | None:
        """One document by id."""
        rows = self.rows("SELECT * FROM documents WHERE id = ?", (doc_id,))
        return DocumentRecord(**dict(rows[0])) if rows else None

    def by_name(self, name: str, collection: str = "") -> DocumentRecord | None:
        """One document of a collection by name, case-insensitive."""
        rows = self.rows("SELECT * FROM documents WHERE name = ? AND collection = ?", (name, collection))
        return DocumentRecord(**dict(rows[0])) if rows else None

    def upsert_pending(self, doc_id: str, name: str, type_: str, size: int, collection: str = "") -> None:
        """Create the row for a new upload (status queued) in a collection, or mark an existing one queued."""
        with self.transaction() as c:
            c.execute(
                "INSERT INTO documents (id, name, type, size, status, collection) VALUES (?, ?, ?, ?, 'queued', ?) "
                "ON CONFLICT(id) DO UPDATE SET status = 'queued', progress = 0, error = NULL",
                (doc_id, name, type_, size, collection),
            )

    def set_status(self, doc_id: str, status: str, progress: float = 0.0, error: str | None = None) -> None:
        """Record a job's status and progress (0..1)."""
        with self.transaction() as c:
            c.execute(
                "UPDATE documents SET status = ?, progress = ?, error = ? WHERE id = ?",
                (status, progress, error, doc_id),
            )

    def activate(
        self,
        doc_id: str,
        version: int,
        chunks: list[Chunk],
        *,
        type_: str,
        size: int,
        pages: int | None,
        sha256: str,
        flagged: int = 0,
        text: str | None = None,
        page_spans: list[tuple[int, int, int]] | None = None,
    ) -> None:
        """Swap the document's chunks (and its text, which their spans index) for `version`'s and mark it ready."""
        with self.transaction() as c:
            if text is not None:
                c.execute(
                    "INSERT OR REPLACE INTO texts (doc_id, version, text, pages) VALUES (?, ?, ?, ?)",
                    (doc_id, version, text, json.dumps(page_spans) if page_spans else None),
                )
            c.execute("DELETE FROM chunks WHERE doc_id = ?", (doc_id,))
            c.executemany(
                "INSERT INTO chunks (doc_id, version, idx, text, page, section, start, end, hash) "
                "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                [(doc_id, version, k.index, k.text, k.page, k.section, k.start, k.end, k.hash) for k in chunks],
            )
            c.execute(
                "UPDATE documents SET type = ?, size = ?, pages = ?, chunks = ?, sha256 = ?, version = ?, "
                "status = 'ready', progress = 1, error = NULL, ingested_at = ?, flagged = ? WHERE id = ?",
                (type_, size, pages, len(chunks), sha256, version, now(), flagged, doc_id),
            )

    def delete(self, doc_id: str) -> bool:
        """Remove a document and its chunks; False when it did not exist."""
        with self.transaction() as c:
            c.execute("DELETE FROM chunks WHERE doc_id = ?", (doc_id,))
            c.execute("DELETE FROM texts WHERE doc_id = ?", (doc_id,))
            return c.execute("DELETE FROM documents WHERE id = ?", (doc_id,)).rowcount > 0

    def document_text(self, doc_id: str) -> tuple[str, list[tuple[int, int, int]] | None] | None:
        """The document's text and its PDF pages as (page, start, end) spans; None if not stored."""
        rows = self.rows("SELECT text, pages FROM texts WHERE doc_id = ?", (doc_id,))
        if not rows:
            return None
        pages = rows[0]["pages"]
        return rows[0]["text"], [tuple(p) for p in json.loads(pages)] if pages else None

    def active_versions(self) -> dict[str, int]:
        """Document id -> searchable version, for documents that have one."""
        return {r["id"]: r["version"] for r in self.rows("SELECT id, version FROM documents WHERE version > 0")}

    # --- chunks ------------------------------------------------------------------------------

    def bm25(self, query: str, limit: int, doc_ids: list[str] | None = None) -> list[tuple[StoredChunk, float]]:
        """Best chunks by BM25 (higher score is better), optionally only from some documents (none: no chunks)."""
        match = fts_query(query)
        if match is None or doc_ids is not None and not doc_ids:
            return []
        scope = f"AND c.doc_id IN ({','.join('?' * len(doc_ids))})" if doc_ids is not None else ""
        rows = self.rows(
            "SELECT c.*, d.name AS document, -bm25(chunks_fts) AS score FROM chunks_fts "
            "JOIN chunks c ON c.rowid = chunks_fts.rowid JOIN documents d ON d.id = c.doc_id AND d.version = c.version "
            f"WHERE chunks_fts MATCH ? {scope} ORDER BY bm25(chunks_fts) LIMIT ?",
            (match, *(doc_ids or []), limit),
        )
        return [(_chunk(r), float(r["score"])) for r in rows]

    def chunks_between(self, doc_id: str, first: int, last: int) -> list[StoredChunk]:
        """The active version's chunks with index in [first, last], in order."""
        rows = self.rows(
            "SELECT c.*, d.name AS document FROM chunks c "
            "JOIN documents d ON d.id = c.doc_id AND d.version = c.version "
            "WHERE c.doc_id = ? AND c.idx BETWEEN ? AND ? ORDER BY c.idx",
            (doc_id, first, last),
        )
        return [_chunk(r) for r in rows]

    def count_chunks(self) -> int:
        """Chunks of active versions."""
        return int(self.rows("SELECT COALESCE(SUM(chunks), 0) AS n FROM documents WHERE version > 0")[0]["n"])


def _chunk(row: sqlite3.Row) -> StoredChunk:
    return StoredChunk(
        doc_id=row["doc_id"],
        document=row["document"],
        version=row["version"],
        idx=row["idx"],
        text=row["text"],
        page=row["page"],
        section=row["section"],
        start=row["start"],
        end=row["end"],
        hash=row["hash"],
    )
