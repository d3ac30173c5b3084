"""KnowledgeIndex: the document registry, chunk texts and keyword search, on a Database (backend/store).

On SQLite (knowledge.sqlite) keyword search is FTS5's BM25 and the file upgrades itself in place (its schema is in
backend/rag/index_schema.py, the words a query searches for in backend/rag/terms.py); on Postgres the tables come
from the Alembic migration 0003_knowledge and keyword search is BM25 computed over full-text search (a generated
`tsvector` column with a GIN index; backend/rag/pgkeywords.py). Each document has an active `version`; its chunks
are replaced in one transaction, so a search never sees a mix of old and new chunks and never finds the document
missing. The vector store holds the vectors under the same (document id, version, chunk index); hits from any other
version are ignored.
"""

import json
from contextlib import AbstractContextManager
from dataclasses import dataclass
from typing import Any, Literal

from backend.clock import now
from backend.rag import pgkeywords
from backend.rag.chunking import Chunk
from backend.rag.index_schema import setup_sqlite
from backend.rag.loaders import DocumentError
from backend.rag.terms import content_terms, fts_query
from backend.store.database import Conn, Cursor, Database, same_name


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


def _dicts(cursor: Cursor, description: Any) -> list[dict[str, Any]]:
    names = [column[0] for column in description or ()]
    return [dict(zip(names, row, strict=True)) for row in cursor.fetchall()]


# the active version's chunks, with their document's name (not `c.*`: on Postgres it would drag the tsvector along)
_CHUNK = 'c.doc_id, c.version, c.idx, c.text, c.page, c.section, c.start, c."end", c.hash, d.name AS document'
_ACTIVE = "FROM chunks c JOIN documents d ON d.id = c.doc_id AND d.version = c.version"
_AFTER = {False: ("ready", 1.0), True: ("queued", 0.0)}  # status and progress once a version is active
SPANS_PER_READ = 100  # spans or documents per read: under SQLite's expression depth (1000) and variable (32766) limits
# keyword search per engine, with {scope} to fill
_KEYWORDS = {
    "sqlite": f"SELECT {_CHUNK}, -bm25(chunks_fts) AS score FROM chunks_fts "
    "JOIN chunks c ON c.rowid = chunks_fts.rowid JOIN documents d ON d.id = c.doc_id AND d.version = c.version "
    "WHERE chunks_fts MATCH ? {scope} "
    "ORDER BY bm25(chunks_fts) LIMIT ?",
    "postgres": pgkeywords.SEARCH.replace("{columns}", _CHUNK),  # BM25 in SQL over full-text search
}


class KnowledgeIndex:
    """The registry and keyword search on a Database; blocking (callers run it in a worker thread from async code)."""

    def __init__(self, db: Database) -> None:
        self.db = db
        if db.dialect == "sqlite":
            setup_sqlite(db)
        self._same_name = self.same_name("name")
        self._corpus = pgkeywords.CorpusStats(db)

    def same_name(self, column: str, other: str = "?") -> str:
        """SQL comparing a name column with a parameter (or another column) regardless of case and composition."""
        return same_name(self.db.dialect, column, other)

    def transaction(self) -> AbstractContextManager[Conn]:
        """A transaction on the index's database (see Database.transaction)."""
        return self.db.transaction()

    def rows(self, sql: str, args: tuple = ()) -> list[dict[str, Any]]:
        """The rows of one read, as dicts by column name."""
        with self.db.connection() as conn:
            cursor = conn.execute(sql, args)
            return _dicts(cursor, cursor.description)  # type: ignore[attr-defined]

    # --- documents ---------------------------------------------------------------------------

    def documents(self) -> list[DocumentRecord]:
        """Every document, by name."""
        return [DocumentRecord(**r) for r in self.rows("SELECT * FROM documents ORDER BY lower(name), id")]

    def document(self, doc_id: str) -> DocumentRecord | None:
        """One document by id."""
        rows = self.rows("SELECT * FROM documents WHERE id = ?", (doc_id,))
        return DocumentRecord(**rows[0]) if rows else None

    def by_name(self, name: str, collection: str = "") -> DocumentRecord | None:
        """One document of a collection by name, case-insensitive."""
        rows = self.rows(f"SELECT * FROM documents WHERE {self._same_name} AND collection = ?", (name, collection))
        return DocumentRecord(**rows[0]) if rows else None

    def locking(self, mode: str) -> str:
        """A row-lock clause for a SELECT on Postgres ("UPDATE", "KEY SHARE"); SQLite's writes are serialised."""
        return f" FOR {mode}" if self.db.dialect == "postgres" else ""

    def upsert_pending(
        self, doc_id: str, name: str, type_: str, size: int, collection: str = ""
    ) -> Literal["new", "replaced"] | None:
        """Mark the collection's document of that name queued ("replaced") when it is `doc_id`, or create it as
        `doc_id` (status queued, "new") when the collection has no document of that name, in one transaction.

        None, with nothing written, when the collection was removed, when `doc_id` is already another collection's
        (it moved meanwhile), or when another upload registered the name first (the caller reads the name again).
        The collection's row is locked until the row is in: a removal waits, then finds the collection not empty.
        """
        with self.transaction() as c:
            exists = f"SELECT 1 FROM collections WHERE id = ?{self.locking('KEY SHARE')}"
            if collection and not c.execute(exists, (collection,)).fetchone():
                return None
            named = f"SELECT id FROM documents WHERE {self._same_name} AND collection = ?{self.locking('UPDATE')}"
            row = c.execute(named, (name, collection)).fetchone()
            if row is not None:
                if row[0] != doc_id:
                    return None
                c.execute("UPDATE documents SET status = 'queued', progress = 0, error = NULL WHERE id = ?", (doc_id,))
                return "replaced"
            # ON CONFLICT DO NOTHING: on Postgres another transaction may insert the name (or the id) after the
            # SELECT; the insert then waits for it and writes nothing (SQLite's writes are serialised)
            written = c.execute(
                "INSERT INTO documents (id, name, type, size, status, collection) VALUES (?, ?, ?, ?, 'queued', ?) "
                "ON CONFLICT DO NOTHING",
                (doc_id, name, type_, size, collection),
            )
            return "new" if written.rowcount > 0 else None

    def set_status(self, doc_id: str, status: str, progress: float = 0.0, error: str | None = None) -> bool:
        """Record a job's status and progress (0..1); False when the document is gone."""
        with self.transaction() as c:
            updated = c.execute(
                "UPDATE documents SET status = ?, progress = ?, error = ? WHERE id = ?",
                (status, progress, error, doc_id),
            )
            return updated.rowcount > 0

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
        queued: bool = False,
    ) -> None:
        """Swap the document's chunks (and its text, which their spans index) for `version`'s and mark it ready, or
        queued when a newer version waits behind it. DocumentError 409, with nothing written, when the document was
        removed meanwhile (with its collection)."""
        with self.transaction() as c:
            if text is not None:
                c.execute(
                    "INSERT INTO texts (doc_id, version, text, pages) VALUES (?, ?, ?, ?) ON CONFLICT (doc_id) "
                    "DO UPDATE SET version = excluded.version, text = excluded.text, pages = excluded.pages",
                    (doc_id, version, text, json.dumps(page_spans) if page_spans else None),
                )
            c.execute("DELETE FROM chunks WHERE doc_id = ?", (doc_id,))
            c.executemany(
                'INSERT INTO chunks (doc_id, version, idx, text, page, section, start, "end", hash) '
                "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                [(doc_id, version, k.index, k.text, k.page, k.section, k.start, k.end, k.hash) for k in chunks],
            )
            updated = c.execute(
                "UPDATE documents SET type = ?, size = ?, pages = ?, chunks = ?, sha256 = ?, version = ?, "
                "status = ?, progress = ?, error = NULL, ingested_at = ?, flagged = ? WHERE id = ?",
                (type_, size, pages, len(chunks), sha256, version, *_AFTER[queued], now(), flagged, doc_id),
            )
            if updated.rowcount == 0:
                raise DocumentError(409, f"document {doc_id} was removed before its ingestion finished")
        self._corpus.stale()

    def settle_queued(self, doc_id: str) -> None:
        """A document left "queued" with no version coming: ready with the version it has, or failed without one."""
        with self.transaction() as c:
            c.execute(
                "UPDATE documents SET status = CASE WHEN version > 0 THEN 'ready' ELSE 'failed' END, progress = 1, "
                "error = CASE WHEN version > 0 THEN error ELSE 'the upload was not ingested; upload it again' END "
                "WHERE id = ? AND status = 'queued'",
                (doc_id,),
            )

    def delete(self, doc_id: str) -> bool:
        """Remove a document and its chunks; False when it did not exist."""
        with self.transaction() as c:
            c.execute("DELETE FROM chunks WHERE doc_id = ?", (doc_id,))
            c.execute("DELETE FROM texts WHERE doc_id = ?", (doc_id,))
            existed = c.execute("DELETE FROM documents WHERE id = ?", (doc_id,)).rowcount > 0
        self._corpus.stale()
        return existed

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
        """Best chunks by BM25 (higher is better; FTS5's on SQLite, backend/rag/pgkeywords.py's on Postgres),
        optionally only from some documents (none: no chunks)."""
        terms = content_terms(query)
        if not terms or doc_ids is not None and not doc_ids:
            return []
        scope = f"AND c.doc_id IN ({','.join('?' * len(doc_ids))})" if doc_ids is not None else ""
        args: tuple = (fts_query(query), *(doc_ids or []), limit)
        if self.db.dialect == "postgres":
            chunks, mean_length = self._corpus.get()
            args = (" ".join(terms), chunks, *(doc_ids or []), mean_length, limit)
        rows = self.rows(_KEYWORDS[self.db.dialect].replace("{scope}", scope), args)
        return [(_chunk(r), float(r["score"])) for r in rows]

    def active_texts(self, doc_ids: list[str]) -> list[tuple[str, int, str]]:
        """(document id, version, text) of every chunk of these documents' active versions."""
        found: list[tuple[str, int, str]] = []
        for start in range(0, len(doc_ids), SPANS_PER_READ):
            ids = doc_ids[start : start + SPANS_PER_READ]
            sql = f"SELECT c.doc_id, c.version, c.text {_ACTIVE} WHERE c.doc_id IN ({', '.join('?' for _ in ids)})"
            found += [(r["doc_id"], r["version"], r["text"]) for r in self.rows(sql, tuple(ids))]
        return found

    def sections(self) -> list[tuple[str, str]]:
        """(document id, section heading) of every active version's chunks that have one, each pair once."""
        rows = self.rows(f"SELECT DISTINCT c.doc_id, c.section {_ACTIVE} WHERE c.section IS NOT NULL")
        return [(r["doc_id"], r["section"]) for r in rows]

    def chunks_between(self, doc_id: str, first: int, last: int) -> list[StoredChunk]:
        """The active version's chunks with index in [first, last], in order."""
        rows = self.rows(
            f"SELECT {_CHUNK} {_ACTIVE} WHERE c.doc_id = ? AND c.idx BETWEEN ? AND ? ORDER BY c.idx",
            (doc_id, first, last),
        )
        return [_chunk(r) for r in rows]

    def chunks_in(self, spans: list[tuple[str, int, int]]) -> dict[tuple[str, int, int], list[StoredChunk]]:
        """The active version's chunks of several (document id, first, last) spans, by span, in order: one read per
        SPANS_PER_READ spans (a round trip per span is what a search's passages cost on Postgres otherwise)."""
        found: dict[tuple[str, int, int], list[StoredChunk]] = {span: [] for span in spans}
        batch = list(found)
        for start in range(0, len(batch), SPANS_PER_READ):
            part = batch[start : start + SPANS_PER_READ]
            where = " OR ".join(["(c.doc_id = ? AND c.idx BETWEEN ? AND ?)"] * len(part))
            sql = f"SELECT {_CHUNK} {_ACTIVE} WHERE {where} ORDER BY c.doc_id, c.idx"
            for chunk in map(_chunk, self.rows(sql, tuple(x for span in part for x in span))):
                for doc, first, last in part:
                    if doc == chunk.doc_id and first <= chunk.idx <= last:
                        found[(doc, first, last)].append(chunk)
        return found

    def count_chunks(self) -> int:
        """Chunks of active versions."""
        return int(self.rows("SELECT COALESCE(SUM(chunks), 0) AS n FROM documents WHERE version > 0")[0]["n"])


def _chunk(row: dict[str, Any]) -> StoredChunk:
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
