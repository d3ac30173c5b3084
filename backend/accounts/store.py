"""AccountStore: what the server needs from account storage (SQLite or Postgres: accounts/sql.py), and its records."""

from dataclasses import dataclass
from typing import Literal, Protocol

Role = Literal["admin", "user"]


class EmailTaken(Exception):
    """Another account already uses this e-mail address."""


class NotFirstUser(Exception):
    """An account exists already: the first-run setup is over."""


class GroupTaken(Exception):
    """Another group already has this name."""


@dataclass(frozen=True)
class User:
    """An account as the rest of the server sees it (never its password hash)."""

    id: str
    email: str
    display_name: str
    role: Role
    created_at: str


@dataclass(frozen=True)
class Group:
    """A group of users an admin made; collections are shared with groups."""

    id: str
    name: str
    created_at: str
    members: tuple[str, ...] = ()  # user ids


@dataclass(frozen=True)
class Profile:
    """What a user tells Ragline about themselves, for the prompts' short user context."""

    job_title: str = ""
    team: str = ""
    language: str = ""


class LastAdmin(Exception):
    """Deleting this account would leave no admin: an installation keeps at least one."""


class InvitationInvalid(Exception):
    """No such invitation, or it expired, was used or was revoked (one reason for all, so nothing is revealed)."""


@dataclass(frozen=True)
class Invitation:
    """An admin's invitation: whoever holds its link creates one account (with this e-mail, when it names one)."""

    id: str
    email: str | None
    role: Role
    created_by: str
    created_at: str
    expires_at: str
    used_at: str | None = None
    revoked_at: str | None = None


@dataclass(frozen=True)
class ApiKey:
    """A personal API key: only a hash of the secret is kept; its prefix lets the owner recognise it."""

    id: str
    user_id: str
    name: str
    prefix: str
    created_at: str
    last_used_at: str | None
    revoked_at: str | None
    read_only: bool = False  # may only read: GET requests and searches
    expires_at: str | None = None  # stops working then (None: until revoked)


SESSION_ID_CHARS = 16  # a session is named by this many characters of its token's hash: never the token or hash


@dataclass(frozen=True)
class Session:
    """A signed-in session as its owner sees it: an opaque id, never its token."""

    id: str
    created_at: str
    last_seen_at: str
    expires_at: str


class AccountStore(Protocol):
    """Users, sessions (by token hash) and API keys (by key hash). Times are backend.clock.now() strings."""

    async def setup(self) -> None:
        """Create or upgrade the storage."""

    async def count_users(self) -> int:
        """How many accounts exist."""

    async def create_user(self, user: User, password_hash: str, *, only_if_first: bool = False) -> User:
        """Store a new account; EmailTaken, or NotFirstUser when only_if_first and an account exists."""

    async def user(self, user_id: str) -> User | None:
        """An account by id."""

    async def user_by_email(self, email: str) -> tuple[User, str] | None:
        """An account and its password hash, by e-mail (case-insensitive)."""

    async def users(self) -> list[User]:
        """Every account, oldest first."""

    async def first_admin(self) -> User | None:
        """The oldest admin account."""

    async def delete_user(self, user_id: str) -> bool:
        """Remove an account with its sessions and keys; False when there is none, LastAdmin when it is the only
        admin (checked in the deleting transaction, so two admins deleting each other at once leave one)."""

    async def create_session(self, token_hash: str, user_id: str, created_at: str, expires_at: str) -> None:
        """Store a new session."""

    async def session_user(self, token_hash: str, at: str) -> tuple[User, str] | None:
        """The user of a session that has not expired at `at`, and when it was last seen."""

    async def touch_session(self, token_hash: str, last_seen_at: str, expires_at: str) -> None:
        """Record a session's use and push its expiry back."""

    async def delete_session(self, token_hash: str) -> None:
        """End a session."""

    async def sessions(self, user_id: str, at: str) -> list[Session]:
        """A user's sessions that have not expired at `at`, most recently seen first."""

    async def delete_user_session(self, user_id: str, session_id: str) -> bool:
        """End one of the user's sessions by its id; False when the user has no such session."""

    async def create_key(self, key: ApiKey, key_hash: str) -> None:
        """Store a new API key."""

    async def keys(self, user_id: str) -> list[ApiKey]:
        """A user's API keys, newest first, revoked ones included."""

    async def revoke_key(self, user_id: str, key_id: str, at: str) -> bool:
        """Revoke one of the user's keys; False when the user has no such key."""

    async def key_user(self, key_hash: str, at: str, touch_after: str = "") -> tuple[User, bool] | None:
        """The owner of a key that is neither revoked nor expired at `at`, and whether the key is read-only; records
        its use if last recorded before touch_after."""

    async def profile(self, user_id: str) -> Profile:
        """A user's profile (empty fields when never set)."""

    async def set_profile(self, user_id: str, profile: Profile) -> None:
        """Replace a user's profile."""

    async def create_invitation(self, invitation: Invitation, token_hash: str) -> None:
        """Store a new invitation (only a hash of its token)."""

    async def invitations(self) -> list[Invitation]:
        """Every invitation, newest first."""

    async def invitation(self, token_hash: str, at: str) -> Invitation | None:
        """The invitation of a token while it can be used at `at` (not expired, used or revoked)."""

    async def accept_invitation(self, token_hash: str, user: User, password_hash: str, at: str) -> User:
        """Create the account and use up the invitation in one transaction; InvitationInvalid or EmailTaken."""

    async def revoke_invitation(self, invitation_id: str, at: str) -> bool:
        """Revoke an unused invitation; False when there is no such unused invitation."""

    async def create_group(self, group: Group) -> Group:
        """Store a new group (GroupTaken when the name is used)."""

    async def rename_group(self, group_id: str, name: str) -> bool:
        """Give a group another name (GroupTaken when another has it); False when there is no such group."""

    async def delete_group(self, group_id: str) -> bool:
        """Remove a group and its memberships; False when there is no such group."""

    async def groups(self) -> list[Group]:
        """Every group with its members, by name."""

    async def set_member(self, group_id: str, user_id: str, member: bool) -> bool:
        """Add or remove a user; False when the group or the user does not exist."""

    async def user_groups(self, user_id: str) -> frozenset[str]:
        """The ids of the groups a user belongs to."""
