"""LiveRun: a run in progress on this server, its numbered events in memory, followed by any number of clients."""

import asyncio
from collections.abc import AsyncIterator
from dataclasses import dataclass, field

from pydantic import BaseModel

Numbered = tuple[int, BaseModel]  # (sequence number, payload); the first event is number 1


@dataclass
class LiveRun:
    """A run's identity, its events so far, its task and whether Stop was asked for."""

    run_id: str
    thread_id: str
    question: str
    created_at: str
    events: list[BaseModel] = field(default_factory=list)
    status: str = "running"
    finished: bool = False  # the run has emitted its last event
    stop_requested: bool = False
    kept: bool = False  # cancelled after its turn was stored whole
    shutdown: bool = False  # cancelled because the server stops: the log keeps it `running`, start-up interrupts it
    task: asyncio.Task | None = None
    _new: asyncio.Event = field(default_factory=asyncio.Event)

    def emit(self, event: BaseModel) -> int:
        """Append an event and wake the followers; returns its sequence number."""
        self.events.append(event)
        self._wake()
        return len(self.events)

    def end(self, status: str) -> None:
        """No more events: followers return once they have read them all."""
        self.status, self.finished = status, True
        self._wake()

    async def follow(self, after: int = 0) -> AsyncIterator[Numbered]:
        """Events numbered above `after`, then each new one as it comes, until the run ends."""
        seq = after
        while True:
            new = self._new  # taken before looking, so an event emitted after the look wakes us
            while seq < len(self.events):
                seq += 1
                yield seq, self.events[seq - 1]
            if self.finished:
                return
            await new.wait()

    def _wake(self) -> None:
        self._new.set()
        self._new = asyncio.Event()
