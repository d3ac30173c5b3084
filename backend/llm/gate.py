"""ModelGate: fair access to the model's slots. Turns wait in arrival order and hear their place in the queue;
background work (the rolling summary, priming slots at start) runs only when no turn runs or waits, and a turn
that starts pre-empts it: on a machine with a few cores two requests at once each run at about half speed."""

import asyncio
import logging
from collections import deque
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager

log = logging.getLogger(__name__)
Ahead = Callable[[int], None]  # told how many requests are ahead, whenever that changes


class ModelGate:
    """`size` slots (0: unlimited); FIFO waiters; background holders cancelled when a turn starts.

    A turn that names its thread gets the slot its thread last used when that slot is free: the slot still holds
    the thread's KV cache, so the follow-up's prompt is evaluated only past the previous turn. Otherwise the free
    slot released longest ago is taken (its conversation is the least likely to come back next).
    """

    def __init__(self, size: int) -> None:
        self.size = size
        self._free: list[int] = list(range(size))  # oldest release first
        self._holder: dict[int, str] = {}  # slot -> the thread whose KV cache it holds
        self._waiters: deque[tuple[asyncio.Future, asyncio.Event]] = deque()  # (slot to come, place changed)
        self._background: dict[int, asyncio.Task] = {}  # slot -> task holding it in the background

    @property
    def free(self) -> int:
        """Slots free right now."""
        return len(self._free)

    @property
    def waiting(self) -> int:
        """Turns waiting for a slot right now."""
        return len(self._waiters)

    @property
    def busy(self) -> bool:
        """Whether a turn holds a slot or waits for one."""
        return bool(self._waiters) or self._turns_running()

    def try_acquire(self, thread: str | None = None) -> int | None:
        """A free slot at once (the thread's own when free), or None when none is free or turns are waiting."""
        if self.size <= 0 or not self._free or self._waiters:
            return None
        self._preempt_background()  # on a few CPU cores a background request would halve this turn's speed
        own = next((slot for slot in self._free if thread is not None and self._holder.get(slot) == thread), None)
        slot = own if own is not None else self._free[0]
        self._free.remove(slot)
        return slot

    async def acquire(self, ahead: Ahead | None = None, thread: str | None = None) -> int:
        """A slot for a turn; waits behind earlier turns (cancelling waits leaves the queue at once).

        `ahead` is called from the waiting task itself whenever its place changes (a stream writer must be
        called from the task of its own graph run).
        """
        if self.size <= 0:
            return -1
        if (slot := self.try_acquire(thread)) is not None:
            return slot
        future: asyncio.Future = asyncio.get_running_loop().create_future()
        moved = asyncio.Event()
        self._waiters.append((future, moved))
        self._preempt_background()
        told = None
        try:
            while True:
                place = self._place(future)
                if ahead is not None and place is not None and place != told:
                    told = place
                    ahead(place)
                moved.clear()
                mover = asyncio.ensure_future(moved.wait())
                try:
                    await asyncio.wait({future, mover}, return_when=asyncio.FIRST_COMPLETED)
                finally:
                    mover.cancel()
                if future.done():
                    return future.result()
        except asyncio.CancelledError:
            self._leave(future)
            raise

    def release(self, slot: int, thread: str | None = None) -> None:
        """Give a slot back (holding `thread`'s cache, or some other work's): to the first waiter, else free."""
        if slot < 0:
            return
        self._background.pop(slot, None)
        if thread is None:
            self._holder.pop(slot, None)
        else:
            self._holder[slot] = thread
        while self._waiters:
            future, _ = self._waiters.popleft()
            if not future.done():
                future.set_result(slot)
                self._moved()
                return
        self._free.append(slot)

    @asynccontextmanager
    async def background(self) -> AsyncIterator[int | None]:
        """A slot for background work only if one is free and no turn runs or waits (None otherwise); the holding
        task is cancelled as soon as a turn starts."""
        if self.size <= 0:
            yield -1
            return
        if not self._free or self._waiters or self._turns_running():
            yield None
            return
        slot = self._free.pop(0)
        task = asyncio.current_task()
        if task is not None:
            self._background[slot] = task
        try:
            yield slot
        finally:
            self.release(slot)

    def _turns_running(self) -> bool:
        """Whether a turn holds a slot (every slot not free is a turn's unless background work holds it)."""
        return self.size - len(self._free) > len(self._background)

    def _leave(self, future: asyncio.Future) -> None:
        if future.done() and not future.cancelled():  # got a slot just as it was cancelled: hand it on
            self.release(future.result())
        self._waiters = deque((f, m) for f, m in self._waiters if f is not future)
        self._moved()

    def _place(self, future: asyncio.Future) -> int | None:
        """How many requests are ahead of a waiter: those being served and those waiting before it."""
        for position, (waiter, _) in enumerate(self._waiters):
            if waiter is future:
                return position + self.size - len(self._free)
        return None

    def _moved(self) -> None:
        """Wake every waiter to look at its place again."""
        for _, moved in self._waiters:
            moved.set()

    def _preempt_background(self) -> None:
        for slot, task in list(self._background.items()):
            log.info("a question is waiting for the model: stopping background work on slot %d", slot)
            task.cancel()
            del self._background[slot]
