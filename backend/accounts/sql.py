"""SqlAccountStore: the AccountStore on a Database, SQLite (accounts.sqlite in RAG_DATA_DIR) or Postgres.

Every method is one job of the database's worker thread: a write's checks and statements commit together, and no
transaction is ever held across an await. The SQL is the same on both engines; what differs is in schema.py (the
tables, insertion order) and in create_user's lock.
"""

from backend.accounts.schema import INSERTION_ORDER, SQLITE_SCHEMA, add_missing_columns, check_postgres_tables
from backend.accounts.store import (
    SESSION_ID_CHARS,
    ApiKey,
    EmailTaken,
    Group,
    GroupTaken,
    Invitation,
    InvitationInvalid,
    LastAdmin,
    NotFirstUser,
    Profile,
    Session,
    User,
)
from backend.store.database import Conn, Database, same_name
from backend.store.sqlite import SqliteDatabase

INVITATION_COLUMNS = "id, email, role, created_by, created_at, expires_at, used_at, revoked_at"
USER_COLUMNS = "id, email, display_name, role, created_at"
KEY_COLUMNS = "id, user_id, name, prefix, created_at, last_used_at, revoked_at, read_only, expires_at"
INSERT_USER = f"INSERT INTO users ({USER_COLUMNS}, password_hash) VALUES (?, ?, ?, ?, ?, ?)"


def _user(row: tuple) -> User:
    return User(*row)


class SqlAccountStore:
    """Accounts, sessions, API keys, groups, profiles and invitations in SQLite or Postgres."""

    def __init__(self, db: Database) -> None:
        self._db = db
        self._order = INSERTION_ORDER[db.dialect]

    async def setup(self) -> None:
        """SQLite: create or upgrade the tables (idempotent). Postgres: check the migration made them."""
        db = self._db
        if not isinstance(db, SqliteDatabase):
            await db.read(check_postgres_tables)
            return
        await db.call(lambda: db.conn.executescript(SQLITE_SCHEMA))
        await db.write(add_missing_columns)

    async def count_users(self) -> int:
        """How many accounts exist."""
        return await self._db.read(lambda c: c.execute("SELECT COUNT(*) FROM users").fetchone()[0])

    async def create_user(self, user: User, password_hash: str, *, only_if_first: bool = False) -> User:
        """Store a new account; EmailTaken, or NotFirstUser when only_if_first and an account exists."""

        def job(conn: Conn) -> None:
            if only_if_first:
                if self._db.dialect == "postgres":  # replicas set up at once: the second waits, then sees the first
                    conn.execute("LOCK TABLE users IN SHARE ROW EXCLUSIVE MODE")
                if conn.execute("SELECT 1 FROM users LIMIT 1").fetchone():  # SQLite: BEGIN IMMEDIATE serialises
                    raise NotFirstUser
            self._insert_user(conn, user, password_hash)

        await self._db.write(job)
        return user

    def _insert_user(self, conn: Conn, user: User, password_hash: str) -> None:
        """Insert an account in the caller's transaction; EmailTaken when its e-mail is used, whatever its case and
        composition (the unique indexes fold ASCII letters only on SQLite, and neither engine's composes)."""
        if self._db.dialect == "postgres":  # two new accounts at once: the second waits, then sees the first
            conn.execute("LOCK TABLE users IN SHARE ROW EXCLUSIVE MODE")
        if conn.execute(f"SELECT 1 FROM users WHERE {same_name(self._db.dialect, 'email')}", (user.email,)).fetchone():
            raise EmailTaken(user.email)
        try:
            conn.execute(
                INSERT_USER, (user.id, user.email, user.display_name, user.role, user.created_at, password_hash)
            )
        except self._db.integrity_error as exc:
            raise EmailTaken(user.email) from exc  # the transaction rolls back as a whole

    async def user(self, user_id: str) -> User | None:
        """An account by id."""
        row = await self._db.read(
            lambda c: c.execute(f"SELECT {USER_COLUMNS} FROM users WHERE id = ?", (user_id,)).fetchone()
        )
        return _user(row) if row else None

    async def user_by_email(self, email: str) -> tuple[User, str] | None:
        """An account and its password hash, by e-mail (whatever its case and composition). Of two accounts that
        older versions let differ by case beyond ASCII or by composition, the one spelt exactly so, else the oldest."""
        sql = (
            f"SELECT {USER_COLUMNS}, password_hash FROM users WHERE {same_name(self._db.dialect, 'email')} "
            "ORDER BY CASE WHEN email = ? THEN 0 ELSE 1 END, created_at"
        )
        row = await self._db.read(lambda c: c.execute(sql, (email, email)).fetchone())
        return (_user(row[:-1]), row[-1]) if row else None

    async def users(self) -> list[User]:
        """Every account, oldest first."""
        sql = f"SELECT {USER_COLUMNS} FROM users ORDER BY created_at, {self._order}"
        return [_user(r) for r in await self._db.read(lambda c: c.execute(sql).fetchall())]

    async def first_admin(self) -> User | None:
        """The oldest admin account."""
        sql = f"SELECT {USER_COLUMNS} FROM users WHERE role = 'admin' ORDER BY created_at, {self._order} LIMIT 1"
        row = await self._db.read(lambda c: c.execute(sql).fetchone())
        return _user(row) if row else None

    async def delete_user(self, user_id: str) -> bool:
        """Remove an account with its sessions and keys, in one transaction; LastAdmin when it is the only admin."""

        def job(conn: Conn) -> bool:
            # Postgres: lock the admin rows, so a delete running at the same time waits, then sees this one's result
            # (SQLite: BEGIN IMMEDIATE runs one writer at a time)
            lock = " FOR UPDATE" if self._db.dialect == "postgres" else ""
            admins = [row[0] for row in conn.execute(f"SELECT id FROM users WHERE role = 'admin'{lock}").fetchall()]
            if admins == [user_id]:
                raise LastAdmin
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
        sql = (
            "INSERT INTO profiles (user_id, job_title, team, language) VALUES (?, ?, ?, ?) ON CONFLICT (user_id) "
            "DO UPDATE SET job_title = excluded.job_title, team = excluded.team, language = excluded.language"
        )
        await self._db.write(lambda c: c.execute(sql, (user_id, profile.job_title, profile.team, profile.language)))

    async def create_invitation(self, invitation: Invitation, token_hash: str) -> None:
        """Store a new invitation (only a hash of its token)."""
        sql = f"INSERT INTO invitations ({INVITATION_COLUMNS}, token_hash) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)"
        i = invitation
        values = (i.id, i.email, i.role, i.created_by, i.created_at, i.expires_at, i.used_at, i.revoked_at)
        await self._db.write(lambda c: c.execute(sql, (*values, token_hash)))

    async def invitations(self) -> list[Invitation]:
        """Every invitation, newest first."""
        sql = f"SELECT {INVITATION_COLUMNS} FROM invitations ORDER BY created_at DESC, {self._order} DESC"
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

        def job(conn: Conn) -> None:
            used = conn.execute(
                "UPDATE invitations SET used_at = ? WHERE token_hash = ? AND expires_at > ? AND used_at IS NULL "
                f"AND revoked_at IS NULL AND (email IS NULL OR {same_name(self._db.dialect, 'email')})",
                (at, token_hash, at, user.email),
            )
            if used.rowcount != 1:
                raise InvitationInvalid
            self._insert_user(conn, user, password_hash)  # EmailTaken rolls back the job: the invitation stays unused

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
        sql = f"SELECT {KEY_COLUMNS} FROM api_keys WHERE user_id = ? ORDER BY created_at DESC, {self._order} DESC"
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
            with self._db.connection() as conn:
                row = conn.execute(sql, (key_hash, at)).fetchone()
            if row is None:
                return None
            if row[-1] is None or row[-1] < (touch_after or at):
                with self._db.transaction() as conn:
                    conn.execute("UPDATE api_keys SET last_used_at = ? WHERE key_hash = ?", (at, key_hash))
            return _user(row[:-2]), bool(row[-2])

        return await self._db.call(job)

    async def create_group(self, group: Group) -> Group:
        """Store a new group (GroupTaken when the name is used)."""

        def job(conn: Conn) -> None:
            self._group_name_free(conn, group.name, group.id)
            try:
                sql = "INSERT INTO groups (id, name, created_at) VALUES (?, ?, ?)"
                conn.execute(sql, (group.id, group.name, group.created_at))
            except self._db.integrity_error as exc:
                raise GroupTaken(group.name) from exc

        await self._db.write(job)
        return group

    async def rename_group(self, group_id: str, name: str) -> bool:
        """Give a group another name (GroupTaken when another has it); False when there is no such group."""

        def job(conn: Conn) -> bool:
            self._group_name_free(conn, name, group_id)
            try:
                return conn.execute("UPDATE groups SET name = ? WHERE id = ?", (name, group_id)).rowcount > 0
            except self._db.integrity_error as exc:
                raise GroupTaken(name) from exc

        return await self._db.write(job)

    def _group_name_free(self, conn: Conn, name: str, group_id: str) -> None:
        """GroupTaken when another group has the name whatever its case (SQLite's unique index folds ASCII only)."""
        taken = f"SELECT 1 FROM groups WHERE id != ? AND {same_name(self._db.dialect, 'name')}"
        if conn.execute(taken, (group_id, name)).fetchone():
            raise GroupTaken(name)

    async def delete_group(self, group_id: str) -> bool:
        """Remove a group and its memberships; False when there is no such group."""

        def job(conn: Conn) -> bool:
            conn.execute("DELETE FROM group_members WHERE group_id = ?", (group_id,))
            return conn.execute("DELETE FROM groups WHERE id = ?", (group_id,)).rowcount > 0

        return await self._db.write(job)

    async def groups(self) -> list[Group]:
        """Every group with its members, by name."""

        def job(c: Conn) -> list[Group]:
            rows = c.execute("SELECT id, name, created_at FROM groups ORDER BY lower(name), id").fetchall()
            members: dict[str, list[str]] = {}
            for group_id, user_id in c.execute("SELECT group_id, user_id FROM group_members ORDER BY user_id"):
                members.setdefault(group_id, []).append(user_id)
            return [Group(r[0], r[1], r[2], tuple(members.get(r[0], []))) for r in rows]

        return await self._db.read(job)

    async def set_member(self, group_id: str, user_id: str, member: bool) -> bool:
        """Add or remove a user; False when the group or the user does not exist."""

        def job(conn: Conn) -> bool:
            group = conn.execute("SELECT 1 FROM groups WHERE id = ?", (group_id,)).fetchone()
            user = conn.execute("SELECT 1 FROM users WHERE id = ?", (user_id,)).fetchone()
            if not group or not user:
                return False
            if member:
                sql = "INSERT INTO group_members (group_id, user_id) VALUES (?, ?) ON CONFLICT DO NOTHING"
                conn.execute(sql, (group_id, user_id))
            else:
                conn.execute("DELETE FROM group_members WHERE group_id = ? AND user_id = ?", (group_id, user_id))
            return True

        return await self._db.write(job)

    async def user_groups(self, user_id: str) -> frozenset[str]:
        """The ids of the groups a user belongs to."""
        sql = "SELECT group_id FROM group_members WHERE user_id = ?"
        return frozenset(r[0] for r in await self._db.read(lambda c: c.execute(sql, (user_id,)).fetchall()))
