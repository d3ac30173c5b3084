"""SqliteAccountStore: the AccountStore on one SQLite file (accounts.sqlite in RAG_DATA_DIR).

Every method is one job of the database's worker thread: a write's checks and statements commit together, and no
transaction is ever held across an await.
"""

import sqlite3

from backend.accounts.store import (
    SESSION_ID_CHARS,
    ApiKey,
    EmailTaken,
    Group,
    GroupTaken,
    Invitation,
    InvitationInvalid,
    NotFirstUser,
    Profile,
    Session,
    User,
)
from backend.store.sqlite import SqliteDatabase

_SCHEMA = """
CREATE TABLE IF NOT EXISTS users (
    id TEXT PRIMARY KEY,
    email TEXT NOT NULL UNIQUE COLLATE NOCASE,
    display_name TEXT NOT NULL,
    role TEXT NOT NULL CHECK (role IN ('admin', 'user')),
    password_hash TEXT NOT NULL,
    created_at TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS sessions (
    token_hash TEXT PRIMARY KEY,
    user_id TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
    created_at TEXT NOT NULL,
    expires_at TEXT NOT NULL,
    last_seen_at TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS sessions_user ON sessions(user_id);
CREATE TABLE IF NOT EXISTS api_keys (
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
CREATE INDEX IF NOT EXISTS api_keys_user ON api_keys(user_id);
CREATE TABLE IF NOT EXISTS groups (
    id TEXT PRIMARY KEY,
    name TEXT NOT NULL UNIQUE COLLATE NOCASE,
    created_at TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS group_members (
    group_id TEXT NOT NULL REFERENCES groups(id) ON DELETE CASCADE,
    user_id TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
    PRIMARY KEY (group_id, user_id)
);
CREATE INDEX IF NOT EXISTS group_members_user ON group_members(user_id);
CREATE TABLE IF NOT EXISTS profiles (
    user_id TEXT PRIMARY KEY REFERENCES users(id) ON DELETE CASCADE,
    job_title TEXT NOT NULL,
    team TEXT NOT NULL,
    language TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS invitations (
    id TEXT PRIMARY KEY,
    token_hash TEXT NOT NULL UNIQUE,
    email TEXT COLLATE NOCASE,
    role TEXT NOT NULL CHECK (role IN ('admin', 'user')),
    created_by TEXT NOT NULL,
    created_at TEXT NOT NULL,
    expires_at TEXT NOT NULL,
    used_at TEXT,
    revoked_at TEXT
);
"""
INVITATION_COLUMNS = "id, email, role, created_by, created_at, expires_at, used_at, revoked_at"
USER_COLUMNS = "id, email, display_name, role, created_at"
KEY_COLUMNS = "id, user_id, name, prefix, created_at, last_used_at, revoked_at, read_only, expires_at"
ADDED_KEY_COLUMNS = {"read_only": "INTEGER NOT NULL DEFAULT 0", "expires_at": "TEXT"}  # to files made before them


def _user(row: tuple) -> User:
    return User(*row)


class SqliteAccountStore:
    """Accounts, sessions and API keys in SQLite."""

    def __init__(self, db: SqliteDatabase) -> None:
        self._db = db

    async def setup(self) -> None:
        """Create the tables (idempotent)."""
        await self._db.call(lambda: self._db.conn.executescript(_SCHEMA))

        def upgrade(conn: sqlite3.Connection) -> None:
            have = {row[1] for row in conn.execute("PRAGMA table_info(api_keys)")}
            for column, kind in ADDED_KEY_COLUMNS.items():
                if column not in have:
                    conn.execute(f"ALTER TABLE api_keys ADD COLUMN {column} {kind}")

        await self._db.write(upgrade)

    async def count_users(self) -> int:
        """How many accounts exist."""
        return await self._db.read(lambda c: c.execute("SELECT COUNT(*) FROM users").fetchone()[0])

    async def create_user(self, user: User, password_hash: str, *, only_if_first: bool = False) -> User:
        """Store a new account; EmailTaken, or NotFirstUser when only_if_first and an account exists."""

        def job(conn: sqlite3.Connection) -> None:
            if only_if_first and conn.execute("SELECT 1 FROM users LIMIT 1").fetchone():
                raise NotFirstUser
            try:
                conn.execute(
                    f"INSERT INTO users ({USER_COLUMNS}, password_hash) VALUES (?, ?, ?, ?, ?, ?)",
                    (user.id, user.email, user.display_name, user.role, user.created_at, password_hash),
                )
            except sqlite3.IntegrityError as exc:
                raise EmailTaken(user.email) from exc

        await self._db.write(job)
        return user

    async def user(self, user_id: str) -> User | None:
        """An account by id."""
        row = await self._db.read(
            lambda c: c.execute(f"SELECT {USER_COLUMNS} FROM users WHERE id = ?", (user_id,)).fetchone()
        )
        return _user(row) if row else None

    async def user_by_email(self, email: str) -> tuple[User, str] | None:
        """An account and its password hash, by e-mail (case-insensitive)."""
        sql = f"SELECT {USER_COLUMNS}, password_hash FROM users WHERE email = ?"
        row = await self._db.read(lambda c: c.execute(sql, (email,)).fetchone())
        return (_user(row[:-1]), row[-1]) if row else None

    async def users(self) -> list[User]:
        """Every account, oldest first."""
        sql = f"SELECT {USER_COLUMNS} FROM users ORDER BY created_at, rowid"
        return [_user(r) for r in await self._db.read(lambda c: c.execute(sql).fetchall())]

    async def first_admin(self) -> User | None:
        """The oldest admin account."""
        sql = f"SELECT {USER_COLUMNS} FROM users WHERE role = 'admin' ORDER BY created_at, rowid LIMIT 1"
        row = await self._db.read(lambda c: c.execute(sql).fetchone())
        return _user(row) if row else None

    async def delete_user(self, user_id: str) -> bool:
        """Remove an account with its sessions and keys, in one transaction."""

        def job(conn: sqlite3.Connection) -> bool:
            conn.execute("DELETE FROM sessions WHERE user_id = ?", (user_id,))
            conn.execute("DELETE FROM api_keys WHERE user_id = ?", (user_id,))
            conn.execute("DELETE FROM group_members WHERE user_id = ?", (user_id,))
            conn.execute("DELETE FROM profiles WHERE user_id = ?", (user_id,))
            return conn.execute("DELETE FROM users WHERE id = ?", (user_id,)).rowcount > 0

        return await self._db.write(job)

    async def profile(self, user_id: str) -> Profile:
        """A user's profile (empty fields when never set)."""
        sql = "SELECT job_title, team, language FROM profiles WHERE user_id = ?"
        row = await self._db.read(lambda c: c.execute(sql, (user_id,)).fetchone())
        return Profile(*row) if row else Profile()

    async def set_profile(self, user_id: str, profile: Profile) -> None:
        """Replace a user's profile."""
        sql = "INSERT OR REPLACE INTO profiles (user_id, job_title, team, language) VALUES (?, ?, ?, ?)"
        await self._db.write(lambda c: c.execute(sql, (user_id, profile.job_title, profile.team, profile.language)))

    async def create_invitation(self, invitation: Invitation, token_hash: str) -> None:
        """Store a new invitation (only a hash of its token)."""
        sql = f"INSERT INTO invitations ({INVITATION_COLUMNS}, token_hash) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)"
        i = invitation
        values = (i.id, i.email, i.role, i.created_by, i.created_at, i.expires_at, i.used_at, i.revoked_at)
        await self._db.write(lambda c: c.execute(sql, (*values, token_hash)))

    async def invitations(self) -> list[Invitation]:
        """Every invitation, newest first."""
        sql = f"SELECT {INVITATION_COLUMNS} FROM invitations ORDER BY created_at DESC, rowid DESC"
        return [Invitation(*r) for r in await self._db.read(lambda c: c.execute(sql).fetchall())]

    async def invitation(self, token_hash: str, at: str) -> Invitation | None:
        """The invitation of a token while it can be used at `at` (not expired, used or revoked)."""
        sql = (
            f"SELECT {INVITATION_COLUMNS} FROM invitations WHERE token_hash = ? AND expires_at > ? "
            "AND used_at IS NULL AND revoked_at IS NULL"
        )
        row = await self._db.read(lambda c: c.execute(sql, (token_hash, at)).fetchone())
        return Invitation(*row) if row else None

    async def accept_invitation(self, token_hash: str, user: User, password_hash: str, at: str) -> User:
        """Create the account and use up the invitation in one transaction; InvitationInvalid or EmailTaken."""

        def job(conn: sqlite3.Connection) -> None:
            used = conn.execute(
                "UPDATE invitations SET used_at = ? WHERE token_hash = ? AND expires_at > ? AND used_at IS NULL "
                "AND revoked_at IS NULL AND (email IS NULL OR email = ?)",
                (at, token_hash, at, user.email),
            )
            if used.rowcount != 1:
                raise InvitationInvalid
            try:
                conn.execute(
                    f"INSERT INTO users ({USER_COLUMNS}, password_hash) VALUES (?, ?, ?, ?, ?, ?)",
                    (user.id, user.email, user.display_name, user.role, user.created_at, password_hash),
                )
            except sqlite3.IntegrityError as exc:
                raise EmailTaken(user.email) from exc  # the worker rolls the job back: the invitation stays unused

        await self._db.write(job)
        return user

    async def revoke_invitation(self, invitation_id: str, at: str) -> bool:
        """Revoke an unused invitation; False when there is no such unused invitation."""
        sql = "UPDATE invitations SET revoked_at = ? WHERE id = ? AND used_at IS NULL AND revoked_at IS NULL"
        return await self._db.write(lambda c: c.execute(sql, (at, invitation_id)).rowcount > 0)

    async def create_session(self, token_hash: str, user_id: str, created_at: str, expires_at: str) -> None:
        """Store a new session."""
        sql = "INSERT INTO sessions (token_hash, user_id, created_at, expires_at, last_seen_at) VALUES (?, ?, ?, ?, ?)"
        await self._db.write(lambda c: c.execute(sql, (token_hash, user_id, created_at, expires_at, created_at)))

    async def session_user(self, token_hash: str, at: str) -> tuple[User, str] | None:
        """The user of a session that has not expired at `at`, and when it was last seen."""
        cols = ", ".join(f"u.{c.strip()}" for c in USER_COLUMNS.split(","))
        sql = (
            f"SELECT {cols}, s.last_seen_at FROM sessions s JOIN users u ON u.id = s.user_id "
            "WHERE s.token_hash = ? AND s.expires_at > ?"
        )
        row = await self._db.read(lambda c: c.execute(sql, (token_hash, at)).fetchone())
        return (_user(row[:-1]), row[-1]) if row else None

    async def touch_session(self, token_hash: str, last_seen_at: str, expires_at: str) -> None:
        """Record a session's use and push its expiry back."""
        sql = "UPDATE sessions SET last_seen_at = ?, expires_at = ? WHERE token_hash = ?"
        await self._db.write(lambda c: c.execute(sql, (last_seen_at, expires_at, token_hash)))

    async def delete_session(self, token_hash: str) -> None:
        """End a session."""
        await self._db.write(lambda c: c.execute("DELETE FROM sessions WHERE token_hash = ?", (token_hash,)))

    async def sessions(self, user_id: str, at: str) -> list[Session]:
        """A user's sessions that have not expired at `at`, most recently seen first."""
        sql = (
            f"SELECT substr(token_hash, 1, {SESSION_ID_CHARS}), created_at, last_seen_at, expires_at FROM sessions "
            "WHERE user_id = ? AND expires_at > ? ORDER BY last_seen_at DESC"
        )
        rows = await self._db.read(lambda c: c.execute(sql, (user_id, at)).fetchall())
        return [Session(*row) for row in rows]

    async def delete_user_session(self, user_id: str, session_id: str) -> bool:
        """End one of the user's sessions by its id; False when the user has no such session."""
        if len(session_id) != SESSION_ID_CHARS:  # a shorter id would match several sessions
            return False
        sql = f"DELETE FROM sessions WHERE user_id = ? AND substr(token_hash, 1, {SESSION_ID_CHARS}) = ?"
        return await self._db.write(lambda c: c.execute(sql, (user_id, session_id)).rowcount > 0)

    async def create_key(self, key: ApiKey, key_hash: str) -> None:
        """Store a new API key."""
        sql = f"INSERT INTO api_keys ({KEY_COLUMNS}, key_hash) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"
        values = (
            *(key.id, key.user_id, key.name, key.prefix, key.created_at, key.last_used_at, key.revoked_at),
            int(key.read_only),
            key.expires_at,
        )
        await self._db.write(lambda c: c.execute(sql, (*values, key_hash)))

    async def keys(self, user_id: str) -> list[ApiKey]:
        """A user's API keys, newest first, revoked ones included."""
        sql = f"SELECT {KEY_COLUMNS} FROM api_keys WHERE user_id = ? ORDER BY created_at DESC, rowid DESC"
        rows = await self._db.read(lambda c: c.execute(sql, (user_id,)).fetchall())
        return [ApiKey(*r[:7], bool(r[7]), r[8]) for r in rows]

    async def revoke_key(self, user_id: str, key_id: str, at: str) -> bool:
        """Revoke one of the user's keys (once); False when the user has no such key."""
        sql = "UPDATE api_keys SET revoked_at = COALESCE(revoked_at, ?) WHERE id = ? AND user_id = ?"
        return await self._db.write(lambda c: c.execute(sql, (at, key_id, user_id)).rowcount > 0)

    async def key_user(self, key_hash: str, at: str, touch_after: str = "") -> tuple[User, bool] | None:
        """The owner of a key that is neither revoked nor expired at `at`, and whether the key is read-only; its use
        is recorded when last recorded before `touch_after` (so most requests only read)."""
        cols = ", ".join(f"u.{c.strip()}" for c in USER_COLUMNS.split(","))
        sql = (
            f"SELECT {cols}, k.read_only, k.last_used_at FROM api_keys k JOIN users u ON u.id = k.user_id "
            "WHERE k.key_hash = ? AND k.revoked_at IS NULL AND (k.expires_at IS NULL OR k.expires_at > ?)"
        )

        def job() -> tuple[User, bool] | None:
            with self._db.lock:
                row = self._db.conn.execute(sql, (key_hash, at)).fetchone()
            if row is None:
                return None
            if row[-1] is None or row[-1] < (touch_after or at):
                with self._db.transaction() as conn:
                    conn.execute("UPDATE api_keys SET last_used_at = ? WHERE key_hash = ?", (at, key_hash))
            return _user(row[:-2]), bool(row[-2])

        return await self._db.call(job)

    async def create_group(self, group: Group) -> Group:
        """Store a new group (GroupTaken when the name is used)."""

        def job(conn: sqlite3.Connection) -> None:
            try:
                sql = "INSERT INTO groups (id, name, created_at) VALUES (?, ?, ?)"
                conn.execute(sql, (group.id, group.name, group.created_at))
            except sqlite3.IntegrityError as exc:
                raise GroupTaken(group.name) from exc

        await self._db.write(job)
        return group

    async def groups(self) -> list[Group]:
        """Every group with its members, by name."""

        def job(c: sqlite3.Connection) -> list[Group]:
            rows = c.execute("SELECT id, name, created_at FROM groups ORDER BY name COLLATE NOCASE, id").fetchall()
            members: dict[str, list[str]] = {}
            for group_id, user_id in c.execute("SELECT group_id, user_id FROM group_members ORDER BY user_id"):
                members.setdefault(group_id, []).append(user_id)
            return [Group(r[0], r[1], r[2], tuple(members.get(r[0], []))) for r in rows]

        return await self._db.read(job)

    async def set_member(self, group_id: str, user_id: str, member: bool) -> bool:
        """Add or remove a user; False when the group or the user does not exist."""

        def job(conn: sqlite3.Connection) -> bool:
            group = conn.execute("SELECT 1 FROM groups WHERE id = ?", (group_id,)).fetchone()
            user = conn.execute("SELECT 1 FROM users WHERE id = ?", (user_id,)).fetchone()
            if not group or not user:
                return False
            if member:
                conn.execute(
                    "INSERT OR IGNORE INTO group_members (group_id, user_id) VALUES (?, ?)", (group_id, user_id)
                )
            else:
                conn.execute("DELETE FROM group_members WHERE group_id = ? AND user_id = ?", (group_id, user_id))
            return True

        return await self._db.write(job)

    async def user_groups(self, user_id: str) -> frozenset[str]:
        """The ids of the groups a user belongs to."""
        sql = "SELECT group_id FROM group_members WHERE user_id = ?"
        return frozenset(r[0] for r in await self._db.read(lambda c: c.execute(sql, (user_id,)).fetchall()))
