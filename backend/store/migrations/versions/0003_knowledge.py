"""Documents, chunks with full-text search, document texts, collections and their group shares; chunk vectors.

Revision ID: 0003_knowledge
Revises: 0002_accounts

The same tables as knowledge.sqlite (backend/rag/index_schema.py, backend/rag/collections.py), with Postgres's own
means where SQLite's differ: names unique per collection case-insensitively through lower(name) (SQLite: COLLATE
NOCASE), keyword search on a generated `tsvector` (english configuration) with a GIN index (SQLite: FTS5), and the
vectors Chroma holds otherwise in `vectors` (pgvector, cosine HNSW; backend/rag/pgvectors.py). The vector size is
the embedder's: the first vectors stored fix the column's size and build the HNSW index (an HNSW index needs one
size); PgVectorStore refuses vectors of another size afterwards with a clear error.
"""

from alembic import op

revision = "0003_knowledge"
down_revision = "0002_accounts"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.execute("CREATE EXTENSION IF NOT EXISTS vector")
    op.execute(
        """
        CREATE TABLE documents (
            id TEXT PRIMARY KEY,
            name TEXT NOT NULL,
            type TEXT NOT NULL,
            size BIGINT NOT NULL DEFAULT 0,
            pages INTEGER,
            chunks INTEGER NOT NULL DEFAULT 0,
            sha256 TEXT NOT NULL DEFAULT '',
            version INTEGER NOT NULL DEFAULT 0,
            status TEXT NOT NULL,
            progress DOUBLE PRECISION NOT NULL DEFAULT 0,
            error TEXT,
            ingested_at TEXT,
            flagged INTEGER NOT NULL DEFAULT 0,
            collection TEXT NOT NULL DEFAULT ''
        );
        CREATE UNIQUE INDEX documents_collection_name ON documents(collection, lower(name));
        CREATE TABLE chunks (
            rowid BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
            doc_id TEXT NOT NULL,
            version INTEGER NOT NULL,
            idx INTEGER NOT NULL,
            text TEXT NOT NULL,
            page INTEGER,
            section TEXT,
            start INTEGER NOT NULL,
            "end" INTEGER NOT NULL,
            hash TEXT NOT NULL,
            tsv tsvector GENERATED ALWAYS AS (to_tsvector('english', text)) STORED,
            UNIQUE (doc_id, version, idx)
        );
        CREATE INDEX chunks_tsv ON chunks USING gin (tsv);
        CREATE TABLE texts (
            doc_id TEXT PRIMARY KEY,
            version INTEGER NOT NULL,
            text TEXT NOT NULL,
            pages TEXT
        );
        CREATE TABLE collections (
            id TEXT PRIMARY KEY,
            name TEXT NOT NULL,
            kind TEXT NOT NULL CHECK (kind IN ('personal', 'team', 'group')),
            owner TEXT NOT NULL,
            users_write INTEGER NOT NULL DEFAULT 0,
            created_at TEXT NOT NULL
        );
        CREATE UNIQUE INDEX collections_personal ON collections(owner) WHERE kind = 'personal';
        CREATE UNIQUE INDEX collections_team_name ON collections(lower(name)) WHERE kind != 'personal';
        CREATE TABLE collection_groups (
            collection_id TEXT NOT NULL,
            group_id TEXT NOT NULL,
            access TEXT NOT NULL CHECK (access IN ('read', 'write')),
            PRIMARY KEY (collection_id, group_id)
        );
        CREATE TABLE vectors (
            id TEXT PRIMARY KEY,
            document_id TEXT NOT NULL,
            version INTEGER NOT NULL,
            embedding vector NOT NULL,  -- its size is set by the first vectors stored (PgVectorStore.add)
            document TEXT,
            metadata JSONB NOT NULL
        );
        CREATE INDEX vectors_document ON vectors(document_id, version);
        """
    )


def downgrade() -> None:
    op.execute("DROP TABLE vectors, collection_groups, collections, texts, chunks, documents")
