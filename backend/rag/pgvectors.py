"""PgVectorStore: chunk vectors in Postgres (pgvector), through the part of Chroma's Collection API Ragline calls.

`add`, `query`, `get` and `delete` take the arguments and return the shapes Chroma does (lists of lists per query
for `query`, flat lists for `get`), and distances are cosine distances (1 - cosine similarity), as in Chroma's
cosine space, so the relevance thresholds in settings mean the same on both. The table and its HNSW index
(`vector_cosine_ops`) come from migration 0003_knowledge. Vectors travel as text ('[0.1,0.2,…]'::vector), so no
extra Python package is needed. `where` accepts only the filters Ragline uses: on `document_id` and `version`,
equality, `$in`, `$ne`, and `$and` of those; anything else raises UnsupportedFilter.
"""

import json
from collections.abc import Mapping, Sequence
from typing import Any

from backend.store.database import Conn, Database

FIELDS = ("document_id", "version")  # the metadata keys with a column of their own, the only ones filtered on
HNSW_EF_SEARCH = 40  # pgvector's default candidate list; raised to n_results when more are asked for
Where = Mapping[str, Any]


class UnsupportedFilter(ValueError):
    """A `where` Ragline does not use and PgVectorStore therefore does not translate."""


class DimensionMismatch(ValueError):
    """Vectors of another size than the table's column (another embedding model than the schema was made for)."""


def where_sql(where: Where | None) -> tuple[str, list[Any]]:
    """A WHERE condition and its parameters for a Chroma `where` of the supported forms ("TRUE" for none)."""
    if not where:
        return "TRUE", []
    if len(where) != 1:
        raise UnsupportedFilter(f"one key per filter (use $and): {where!r}")
    ((key, value),) = where.items()
    if key == "$and" and isinstance(value, list) and value:
        parts = [where_sql(w) for w in value]
        return " AND ".join(f"({sql})" for sql, _ in parts), [a for _, args in parts for a in args]
    if key not in FIELDS:
        raise UnsupportedFilter(f"filters on {', '.join(FIELDS)} or $and only, not {key!r}")
    if not isinstance(value, Mapping):
        return f"{key} = ?", [value]
    if len(value) == 1 and "$in" in value and isinstance(value["$in"], list):
        return f"{key} = ANY(?)", [list(value["$in"])]
    if len(value) == 1 and "$ne" in value:
        return f"{key} <> ?", [value["$ne"]]
    raise UnsupportedFilter(f"operators $in and $ne only, not {value!r}")


def vector_text(vector: Sequence[float]) -> str:
    """pgvector's text form of a vector."""
    return "[" + ",".join(repr(float(x)) for x in vector) + "]"


class PgVectorStore:
    """The vectors table behind Chroma's add/query/get/delete."""

    def __init__(self, db: Database, embedding_function: Any = None) -> None:
        if db.dialect != "postgres":
            raise ValueError("PgVectorStore needs a Postgres database")
        self.db = db
        self._embedding_function = embedding_function  # kept for parity with Chroma; callers pass vectors
        self._dimensions: int | None = None

    def dimensions(self, first: int | None = None) -> int:
        """The size of the `embedding` column (pgvector keeps it as the column's type modifier). A new database has
        none yet: with `first`, the first vectors' size becomes it and the HNSW index is built (once, whichever
        replica stores first)."""
        if self._dimensions is None:
            with self.db.transaction() as conn:
                size = _column_size(conn)
                if size < 0 and first is not None:
                    conn.execute("LOCK TABLE vectors IN ACCESS EXCLUSIVE MODE")
                    if (size := _column_size(conn)) < 0:
                        conn.execute(f"ALTER TABLE vectors ALTER COLUMN embedding TYPE vector({int(first)})")
                        conn.execute(
                            "CREATE INDEX IF NOT EXISTS vectors_embedding ON vectors "
                            "USING hnsw (embedding vector_cosine_ops)"
                        )
                        size = int(first)
            if size < 0:
                return -1  # nothing stored yet
            self._dimensions = size
        return self._dimensions

    def add(
        self,
        ids: list[str],
        embeddings: Sequence[Sequence[float]],
        documents: list[str] | None = None,
        metadatas: list[Mapping[str, Any]] | None = None,
    ) -> None:
        """Store vectors under ids, with their text and metadata (which must hold document_id and version)."""
        if not ids:
            return
        want = self.dimensions(first=len(embeddings[0]))
        if wrong := next((len(v) for v in embeddings if len(v) != want), None):
            raise DimensionMismatch(
                f"the vectors table holds {want}-dimensional vectors and the embedder gives {wrong}: "
                "use the embedding model the database was made with, or a new database"
            )
        metas = metadatas or [{} for _ in ids]
        texts = documents or [None for _ in ids]
        rows = [
            (i, m["document_id"], m["version"], vector_text(v), t, json.dumps(dict(m)))
            for i, v, t, m in zip(ids, embeddings, texts, metas, strict=True)
        ]
        with self.db.transaction() as conn:
            conn.executemany(
                "INSERT INTO vectors (id, document_id, version, embedding, document, metadata) "
                "VALUES (?, ?, ?, ?::vector, ?, ?::jsonb) ON CONFLICT (id) DO NOTHING",  # Chroma ignores a known id
                rows,
            )

    def query(
        self,
        query_embeddings: Sequence[Sequence[float]],
        n_results: int = 10,
        where: Where | None = None,
        include: Sequence[str] = ("metadatas", "documents", "distances"),
    ) -> dict[str, Any]:
        """The n_results nearest vectors to each query vector by cosine distance, in Chroma's result shape."""
        condition, args = where_sql(where)
        wanted = ", embedding::text" if "embeddings" in include else ""
        sql = (
            f"SELECT id, embedding <=> ?::vector AS distance, metadata, document{wanted} FROM vectors "
            f"WHERE {condition} ORDER BY distance LIMIT ?"
        )
        out: dict[str, Any] = {"ids": []} | {k: [] for k in ("distances", "metadatas", "documents", "embeddings")}
        with self.db.transaction() as conn:  # set_config(…, true) lasts as long as the transaction
            conn.execute("SELECT set_config('hnsw.ef_search', ?, true)", (str(max(HNSW_EF_SEARCH, n_results)),))
            for vector in query_embeddings:
                params = (vector_text(vector), *args, n_results)
                rows = conn.execute(sql, params).fetchall()
                if where and len(rows) < n_results:
                    rows = _exactly(conn, sql, params)
                out["ids"].append([r[0] for r in rows])
                out["distances"].append([float(r[1]) for r in rows])
                out["metadatas"].append([_metadata(r[2]) for r in rows])
                out["documents"].append([r[3] for r in rows])
                out["embeddings"].append([json.loads(r[4]) for r in rows] if wanted else None)
        return _only(out, include)

    def get(
        self,
        ids: list[str] | None = None,
        where: Where | None = None,
        include: Sequence[str] = ("metadatas", "documents"),
        limit: int | None = None,
        offset: int = 0,
    ) -> dict[str, Any]:
        """The stored vectors with these ids and/or matching `where`, in Chroma's flat result shape; `limit` and
        `offset` page through them in id order."""
        condition, args = where_sql(where)
        if ids is not None:
            condition, args = f"({condition}) AND id = ANY(?)", [*args, list(ids)]
        page = f"LIMIT {int(limit)} OFFSET {int(offset)}" if limit is not None else ""
        with self.db.connection() as conn:
            rows = conn.execute(
                f"SELECT id, metadata, document, embedding::text FROM vectors WHERE {condition} ORDER BY id {page}",
                args,
            ).fetchall()
        out = {
            "ids": [r[0] for r in rows],
            "metadatas": [_metadata(r[1]) for r in rows],
            "documents": [r[2] for r in rows],
            "embeddings": [json.loads(r[3]) for r in rows],
        }
        return _only(out, include)

    def delete(self, ids: list[str] | None = None, where: Where | None = None) -> None:
        """Remove the vectors with these ids and/or matching `where` (neither: nothing, unlike DELETE without WHERE)."""
        if ids is None and not where:
            return
        condition, args = where_sql(where)
        if ids is not None:
            condition, args = f"({condition}) AND id = ANY(?)", [*args, list(ids)]
        with self.db.transaction() as conn:
            conn.execute(f"DELETE FROM vectors WHERE {condition}", args)

    def count(self) -> int:
        """How many vectors are stored."""
        with self.db.connection() as conn:
            return int(conn.execute("SELECT COUNT(*) FROM vectors").fetchone()[0])


def _exactly(conn: Conn, sql: str, params: Sequence[Any]) -> list[Any]:
    """The query again without HNSW: by the document index (or a scan) and a sort. HNSW filters its candidates
    after the fact, so a `where` that rules out the nearest ones leaves fewer than asked (pgserver's pgvector is
    0.6, without 0.8's iterative scans); Chroma's filtered search returns them all, and so does this."""
    conn.execute("SELECT set_config('enable_indexscan', 'off', true)")
    try:
        return conn.execute(sql, params).fetchall()
    finally:
        conn.execute("SELECT set_config('enable_indexscan', 'on', true)")


def _metadata(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else json.loads(value)


def _only(result: dict[str, Any], include: Sequence[str]) -> dict[str, Any]:
    """Chroma's convention: ids always, the other keys when asked for (None otherwise)."""
    return {k: (v if k == "ids" or k in include else None) for k, v in result.items()}


def _column_size(conn: Conn) -> int:
    row = conn.execute(
        "SELECT atttypmod FROM pg_attribute WHERE attrelid = 'vectors'::regclass AND attname = 'embedding'"
    ).fetchone()
    return int(row[0])
