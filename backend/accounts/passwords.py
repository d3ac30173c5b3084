"""Password hashing with argon2 (pwdlib), run off the event loop: a hash costs tens of milliseconds of CPU."""

import asyncio
from functools import cached_property

from pwdlib import PasswordHash
from pwdlib.hashers.argon2 import Argon2Hasher

MIN_PASSWORD_CHARS = 8
MAX_PASSWORD_CHARS = 1024


class Passwords:
    """Hash and verify passwords; verifying for an unknown user costs the same as for a known one."""

    @cached_property
    def _hasher(self) -> PasswordHash:
        return PasswordHash((Argon2Hasher(),))

    @cached_property
    def _dummy(self) -> str:
        return self._hasher.hash("not a password anyone has")

    async def hash(self, password: str) -> str:
        """The argon2 hash of a password."""
        return await asyncio.to_thread(self._hasher.hash, password)

    async def verify(self, password: str, password_hash: str | None) -> bool:
        """Whether the password matches; None (no such user) is checked against a dummy hash and never matches."""
        if password_hash is None:
            await asyncio.to_thread(self._hasher.verify, password, self._dummy)
            return False
        return await asyncio.to_thread(self._hasher.verify, password, password_hash)
