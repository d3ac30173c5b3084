"""ThreadQueue: one turn at a time per thread; later turns on the same thread wait in arrival order."""

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager


class ThreadQueue:
    """Per-thread FIFO locks, created on demand and dropped when nobody holds or waits for them."""

    def __init__(self) -> None:
        self._locks: dict[str, asyncio.Lock] = {}
        self._users: dict[str, int] = {}

    def ahead(self, thread_id: str) -> int:
        """Turns running or waiting on the thread right now."""
        return self._users.get(thread_id, 0)

    @asynccontextmanager
    async def turn(self, thread_id: str) -> AsyncIterator[None]:
        """Hold the thread for one turn; waits behind the turns that arrived first (a cancelled waiter leaves)."""
        lock = self._locks.setdefault(thread_id, asyncio.Lock())
        self._users[thread_id] = self._users.get(thread_id, 0) + 1
        try:
            async with lock:
                yield
        finally:
            self._users[thread_id] -= 1
            if not self._users[thread_id]:
                del self._users[thread_id], self._locks[thread_id]
