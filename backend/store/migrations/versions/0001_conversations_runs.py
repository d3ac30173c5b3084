"""Threads, turns, conversation keys, thread owners; runs, their event logs and the replicas running them.

Revision ID: 0001_conversations_runs
Revises:
"""

from alembic import op

revision = "0001_conversations_runs"
down_revision = None
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.execute(
        """
        CREATE TABLE threads (
            seq BIGSERIAL UNIQUE,  -- creation order, the tie-break of the thread list (SQLite's rowid)
            thread_id TEXT PRIMARY KEY,
            owner TEXT NOT NULL,
            title TEXT NOT NULL,
            created_at TEXT NOT NULL,
            updated_at TEXT NOT NULL
        );
        CREATE INDEX threads_owner ON threads(owner, updated_at);
        CREATE TABLE turns (
            thread_id TEXT NOT NULL,
            turn INTEGER NOT NULL,
            run_id TEXT NOT NULL DEFAULT '',
            question TEXT NOT NULL,
            answer TEXT NOT NULL,
            rewritten_query TEXT NOT NULL,
            intent TEXT NOT NULL,
            route_reason TEXT NOT NULL DEFAULT '',
            sources TEXT NOT NULL,
            steps TEXT NOT NULL,
            triage TEXT NOT NULL DEFAULT 'null',
            validation TEXT NOT NULL DEFAULT 'null',
            provider TEXT NOT NULL,
            model TEXT NOT NULL,
            latency_ms DOUBLE PRECISION NOT NULL,
            use_memory BOOLEAN NOT NULL,
            status TEXT NOT NULL DEFAULT 'completed',
            created_at TEXT NOT NULL,
            PRIMARY KEY (thread_id, turn)
        );
        CREATE UNIQUE INDEX turns_run_id ON turns(run_id) WHERE run_id != '';
        CREATE TABLE conversation_keys (
            key TEXT PRIMARY KEY,
            thread_id TEXT NOT NULL,
            created_at TEXT NOT NULL
        );
        CREATE INDEX conversation_keys_thread ON conversation_keys(thread_id);
        CREATE TABLE thread_owners (
            thread_id TEXT PRIMARY KEY,
            owner TEXT NOT NULL
        );
        CREATE INDEX thread_owners_owner ON thread_owners(owner);
        CREATE TABLE runs (
            run_id TEXT PRIMARY KEY,
            thread_id TEXT NOT NULL,
            question TEXT NOT NULL,
            status TEXT NOT NULL,
            created_at TEXT NOT NULL,
            finished_at TEXT,
            last_event_id INTEGER NOT NULL DEFAULT 0,
            replica TEXT NOT NULL DEFAULT '',  -- the server process running it
            stop_requested INTEGER NOT NULL DEFAULT 0  -- Stop asked through another replica
        );
        CREATE INDEX runs_by_status ON runs(status, finished_at);
        CREATE TABLE replicas (
            replica_id TEXT PRIMARY KEY,
            started_at TEXT NOT NULL,
            seen_at TEXT NOT NULL  -- its heartbeat: a replica not seen for a while is dead, its runs interrupted
        );
        CREATE TABLE run_events (
            run_id TEXT NOT NULL,
            seq INTEGER NOT NULL,
            event TEXT NOT NULL,
            data TEXT NOT NULL,
            PRIMARY KEY (run_id, seq)
        );
        """
    )


def downgrade() -> None:
    op.execute("DROP TABLE replicas, run_events, runs, thread_owners, conversation_keys, turns, threads")
