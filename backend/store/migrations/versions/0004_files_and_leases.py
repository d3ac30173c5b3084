"""Uploaded originals in the database (every replica serves them); ingestion leases.

Revision ID: 0004_files_and_leases
Revises: 0003_knowledge
"""

from alembic import op

revision = "0004_files_and_leases"
down_revision = "0003_knowledge"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.execute(
        """
        CREATE TABLE document_files (
            doc_id TEXT PRIMARY KEY,
            data BYTEA NOT NULL
        );
        CREATE TABLE document_leases (
            doc_id TEXT PRIMARY KEY,
            owner TEXT NOT NULL,  -- the server process queueing or ingesting it
            until TEXT NOT NULL  -- renewed while it works; after this, that process is dead
        );
        """
    )


def downgrade() -> None:
    op.execute("DROP TABLE document_leases, document_files")
