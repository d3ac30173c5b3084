"""Accounts: sign-up, sign-in, sessions and API keys on an AccountStore; what the auth routes and dependency use."""

import logging
import unicodedata
import uuid
from contextlib import suppress
from contextvars import ContextVar
from dataclasses import dataclass
from datetime import datetime, timedelta

from backend.accounts.limiter import LoginLimiter
from backend.accounts.passwords import Passwords
from backend.accounts.store import AccountStore, ApiKey, EmailTaken, Invitation, NotFirstUser, Role, User
from backend.accounts.tokens import digest, new_api_key, new_secret
from backend.clock import now

log = logging.getLogger(__name__)
TOUCH_EVERY = timedelta(seconds=60)  # a session's last use is written at most this often
# the tokens of the sessions the current request slid (api/session_cookie sends their cookie again); None outside one
slid_sessions: ContextVar[list[str] | None] = ContextVar("slid_sessions", default=None)


class TooManyAttempts(Exception):
    """Too many failed sign-ins from this address for this e-mail; retry after `seconds`."""

    def __init__(self, seconds: float) -> None:
        super().__init__(seconds)
        self.seconds = seconds


@dataclass(frozen=True)
class SignedIn:
    """A new session: its user and the token for the cookie (sent once, stored as a hash)."""

    user: User
    token: str


def composed(email: str) -> str:
    """An e-mail as stored: composed (NFC), otherwise as given ("A" + ring above is kept as "Å")."""
    return unicodedata.normalize("NFC", email)


def _later(delta: timedelta) -> str:
    return (datetime.fromisoformat(now()) + delta).isoformat(timespec="milliseconds")


def _earlier(delta: timedelta) -> str:
    return (datetime.fromisoformat(now()) - delta).isoformat(timespec="milliseconds")


class Accounts:
    """Account operations with their rules: hashed passwords, rate-limited sign-in, hashed tokens."""

    def __init__(self, store: AccountStore, session_hours: float, limiter: LoginLimiter) -> None:
        self.store, self.limiter, self.passwords = store, limiter, Passwords()
        self.session_life = timedelta(hours=session_hours)

    async def create_user(
        self, email: str, display_name: str, password: str, role: Role, *, only_if_first: bool = False
    ) -> User:
        """A new account (EmailTaken, whatever the case and composition of the e-mail taken; NotFirstUser when
        only_if_first and one exists)."""
        email = composed(email)
        user = User(str(uuid.uuid4()), email, display_name or email.split("@")[0], role, now())
        return await self.store.create_user(user, await self.passwords.hash(password), only_if_first=only_if_first)

    async def vouched_account(self, email: str, display_name: str, *, first_is_admin: bool) -> tuple[User, bool]:
        """The account of an e-mail someone else vouched for (a single sign-on provider, an authenticating proxy),
        made without a usable password when there is none; whether it was made now. With `first_is_admin` the
        first account of a fresh install is the admin, as first-run setup makes one."""
        if found := await self.store.user_by_email(email):
            return found[0], False
        secret = new_secret()  # nobody knows it: the account signs in only the way it was vouched for
        try:
            if first_is_admin:
                with suppress(NotFirstUser):
                    return await self.create_user(email, display_name, secret, "admin", only_if_first=True), True
            return await self.create_user(email, display_name, secret, "user"), True
        except EmailTaken:  # made by a request running at the same time
            again = await self.store.user_by_email(email)
            assert again is not None
            return again[0], False

    async def sign_in(self, email: str, password: str, address: str) -> SignedIn | None:
        """A new session for the right password; None for a wrong password or unknown e-mail (the same cost)."""
        wait = self.limiter.wait_seconds(address, email)
        if wait:
            log.warning("sign-in refused: too many failures for %r from %s", email, address)
            raise TooManyAttempts(wait)
        found = await self.store.user_by_email(email)
        if not await self.passwords.verify(password, found[1] if found else None) or found is None:
            self.limiter.failed(address, email)
            log.warning("sign-in failed for %r from %s", email, address)
            return None
        self.limiter.succeeded(address, email)
        log.info("user %s signed in from %s", found[0].id, address)
        return await self.open_session(found[0])

    async def open_session(self, user: User) -> SignedIn:
        """A new session for a user whose identity was checked (a password, or a provider's signed ID token)."""
        token = new_secret()
        await self.store.create_session(digest(token), user.id, now(), _later(self.session_life))
        return SignedIn(user, token)

    async def session_user(self, token: str) -> User | None:
        """The user of a live session (its expiry slides forward with use, noted in slid_sessions), or None."""
        token_hash = digest(token)
        found = await self.store.session_user(token_hash, now())
        if found is None:
            return None
        user, last_seen = found
        if last_seen < _earlier(TOUCH_EVERY):
            await self.store.touch_session(token_hash, now(), _later(self.session_life))
            if (slid := slid_sessions.get()) is not None:
                slid.append(token)
        return user

    async def sign_out(self, token: str) -> None:
        """End the session."""
        await self.store.delete_session(digest(token))

    async def key_user(self, key: str) -> User | None:
        """The owner of a live API key, or None."""
        found = await self.key_owner(key)
        return found[0] if found else None

    async def key_owner(self, key: str) -> tuple[User, bool] | None:
        """The owner of a live API key (neither revoked nor expired) and whether it is read-only, or None."""
        return await self.store.key_user(digest(key), now(), _earlier(TOUCH_EVERY))

    async def new_key(
        self, user: User, name: str, read_only: bool = False, days: float | None = None
    ) -> tuple[ApiKey, str]:
        """A new API key for the user: its record and its secret (shown once)."""
        secret, prefix = new_api_key()
        expires = _later(timedelta(days=days)) if days else None
        key = ApiKey(str(uuid.uuid4()), user.id, name, prefix, now(), None, None, read_only, expires)
        await self.store.create_key(key, digest(secret))
        return key, secret

    async def invite(self, admin: User, email: str | None, role: Role, days: float) -> tuple[Invitation, str]:
        """A new invitation and its token (shown once, in the link; only its hash is kept)."""
        token = new_secret()
        email = email and composed(email)
        invitation = Invitation(str(uuid.uuid4()), email, role, admin.id, now(), _later(timedelta(days=days)))
        await self.store.create_invitation(invitation, digest(token))
        return invitation, token

    async def invitation(self, token: str) -> Invitation | None:
        """The invitation of a token while it can be used."""
        return await self.store.invitation(digest(token), now())

    async def accept(self, token: str, email: str, display_name: str, password: str) -> SignedIn:
        """Create the invited account and sign it in; InvitationInvalid (also for another e-mail than the one
        invited) or EmailTaken."""
        found = await self.store.invitation(digest(token), now())
        role: Role = found.role if found else "user"
        email = composed(email)
        user = User(str(uuid.uuid4()), email, display_name or email.split("@")[0], role, now())
        await self.store.accept_invitation(digest(token), user, await self.passwords.hash(password), now())
        log.info("invitation used: user %s (%s) created", user.id, role)
        return await self.open_session(user)
