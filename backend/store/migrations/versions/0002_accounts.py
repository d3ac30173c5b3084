"""Accounts: users, sessions, API keys, groups and their members, profiles, invitations.

The columns and constraints of the SQLite file (backend/accounts/schema.py), with Postgres' ways: e-mails and group
names unique whatever their case through unique indexes on lower(…) (SQLite: COLLATE NOCASE), and a `seq` column
on the listed tables for the tie-break of their order (SQLite's rowid). read_only stays an INTEGER 0/1.

Revision ID: 0002_accounts
Revises: 0001_conversations_runs
"""

from alembic import op

revision = "0002_accounts"
down_revision = "0001_conversations_runs"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.execute(
        """
        CREATE TABLE users (
            seq BIGSERIAL UNIQUE,  -- creation order, the tie-break of the user list (SQLite's rowid)
            id TEXT PRIMARY KEY,
            email TEXT NOT NULL,
            display_name TEXT NOT NULL,
            role TEXT NOT NULL CHECK (role IN ('admin', 'user')),
            password_hash TEXT NOT NULL,
            created_at TEXT NOT NULL
        );
        CREATE UNIQUE INDEX users_email ON users(lower(email));
        CREATE TABLE sessions (
            token_hash TEXT PRIMARY KEY,
            user_id TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
            created_at TEXT NOT NULL,
            expires_at TEXT NOT NULL,
            last_seen_at TEXT NOT NULL
        );
        CREATE INDEX sessions_user ON sessions(user_id);
        CREATE TABLE api_keys (
            seq BIGSERIAL UNIQUE,  -- creation order, the tie-break of a user's key list
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
        CREATE INDEX api_keys_user ON api_keys(user_id);
        CREATE TABLE groups (
            id TEXT PRIMARY KEY,
            name TEXT NOT NULL,
            created_at TEXT NOT NULL
        );
        CREATE UNIQUE INDEX groups_name ON groups(lower(name));
        CREATE TABLE group_members (
            group_id TEXT NOT NULL REFERENCES groups(id) ON DELETE CASCADE,
            user_id TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
            PRIMARY KEY (group_id, user_id)
        );
        CREATE INDEX group_members_user ON group_members(user_id);
        CREATE TABLE profiles (
            user_id TEXT PRIMARY KEY REFERENCES users(id) ON DELETE CASCADE,
            job_title TEXT NOT NULL,
            team TEXT NOT NULL,
            language TEXT NOT NULL
        );
        CREATE TABLE invitations (
            seq BIGSERIAL UNIQUE,  -- creation order, the tie-break of the invitation list
            id TEXT PRIMARY KEY,
            token_hash TEXT NOT NULL UNIQUE,
            email TEXT,
            role TEXT NOT NULL CHECK (role IN ('admin', 'user')),
            created_by TEXT NOT NULL,
            created_at TEXT NOT NULL,
            expires_at TEXT NOT NULL,
            used_at TEXT,
            revoked_at TEXT
        );
        """
    )


def downgrade() -> None:
    op.execute("DROP TABLE invitations, profiles, group_members, groups, api_keys, sessions, users")
