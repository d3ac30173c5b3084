"""A run's place in its thread's order of turns (`turn_no`), given when its row is written.

Replicas took a thread's turns in the order of `created_at`, stamped before the row was inserted: a run whose row
became visible late could find itself first while the other replica had already gone ahead, and both turns ran at
once (one was lost). The number is now given under the thread's advisory lock in the same transaction as the
insert, so a run numbered n has seen every run numbered below it.

Revision ID: 0006_run_turn_order
Revises: 0005_turn_scope
"""

from alembic import op

revision = "0006_run_turn_order"
down_revision = "0005_turn_scope"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.execute("ALTER TABLE runs ADD COLUMN turn_no INTEGER NOT NULL DEFAULT 0")
    op.execute("CREATE INDEX runs_by_thread ON runs(thread_id, turn_no)")


def downgrade() -> None:
    op.execute("DROP INDEX runs_by_thread")
    op.execute("ALTER TABLE runs DROP COLUMN turn_no")
