"""A turn's scope: the documents its search was limited to (an @-mention, or kept by a follow-up).

Revision ID: 0005_turn_scope
Revises: 0004_files_and_leases
"""

from alembic import op

revision = "0005_turn_scope"
down_revision = "0004_files_and_leases"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.execute("ALTER TABLE turns ADD COLUMN scope TEXT NOT NULL DEFAULT 'null'")


def downgrade() -> None:
    op.execute("ALTER TABLE turns DROP COLUMN scope")
