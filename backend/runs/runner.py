"""TurnRunner: run a chat turn on a thread so that the thread's history stays whole.

- The turn runs in its own task; the caller reads its events from a queue. A caller that goes away (client
  disconnect) cancels that task with a plain asyncio cancellation, which LangGraph turns into cancelling the
  model request.
- One turn at a time per thread (ThreadQueue); a turn that has to wait says so in a status event.
- A turn starts from the thread's last complete checkpoint; leftovers of an interrupted turn are dropped first.
- A turn that fails or is cancelled leaves the thread as it was: what it checkpointed is discarded.
- The turn's rows (thread, turn) are committed with its final checkpoint by the checkpointer's hook, so the
  `done` event goes out only after the whole turn is stored.
"""

import asyncio
import dataclasses
import logging
import uuid
from collections.abc import AsyncIterator
from contextlib import aclosing
from dataclasses import dataclass

from langgraph.graph.state import CompiledStateGraph
from pydantic import BaseModel

from backend.contract.events import DoneEvent, MetadataEvent, StatusEvent
from backend.contract.types import Mode
from backend.graph.deps import GraphDeps
from backend.llm.factory import Models
from backend.llm.lease import ModelLease
from backend.runs.queue import ThreadQueue
from backend.runs.summary import SummaryScheduler
from backend.store.checkpointer import SqliteCheckpointer
from backend.streaming import turn_events

log = logging.getLogger(__name__)
END = object()  # the turn task's last item on its queue


@dataclass(frozen=True)
class TurnSpec:
    """What to run."""

    question: str
    mode: Mode
    thread_id: str
    run_id: str
    use_memory: bool


class TurnRunner:
    """Runs turns for the API."""

    def __init__(
        self,
        graph: CompiledStateGraph,
        deps: GraphDeps,
        checkpointer: SqliteCheckpointer,
        summaries: SummaryScheduler,
        models: Models,
    ) -> None:
        self.graph, self.deps, self.checkpointer, self.summaries = graph, deps, checkpointer, summaries
        self.models = models
        self.queue = ThreadQueue()

    async def events(
        self, question: str, mode: Mode, thread_id: str | None = None, use_memory: bool = True
    ) -> AsyncIterator[BaseModel]:
        """The turn's payloads: metadata, (a wait), status…, tokens…, sources, done or error."""
        spec = TurnSpec(question, mode, thread_id or str(uuid.uuid4()), str(uuid.uuid4()), use_memory)
        yield MetadataEvent(thread_id=spec.thread_id, run_id=spec.run_id)
        out: asyncio.Queue = asyncio.Queue()
        task = asyncio.create_task(self._run(spec, out), name=f"turn:{spec.thread_id}")
        try:
            while (event := await out.get()) is not END:
                yield event
        finally:
            if not task.done():
                task.cancel()
            await asyncio.shield(asyncio.gather(task, return_exceptions=True))

    async def _run(self, spec: TurnSpec, out: asyncio.Queue) -> None:
        """The turn itself, in its own task: wait for the thread, run the graph, keep or discard what it wrote."""
        try:
            ahead = self.queue.ahead(spec.thread_id)
            if ahead:
                label = f"Waiting for the previous question on this thread to finish ({ahead} ahead)…"
                out.put_nowait(StatusEvent(node="queue", phase="start", label=label))
            async with self.queue.turn(spec.thread_id):
                if ahead:
                    out.put_nowait(StatusEvent(node="queue", phase="end", label="The previous question has finished"))
                completed = await self._turn(spec, out)
            if completed and spec.use_memory:
                self.summaries.schedule(spec.thread_id)  # after `done` went out: off the latency path
        finally:
            out.put_nowait(END)

    async def _turn(self, spec: TurnSpec, out: asyncio.Queue) -> bool:
        """Run the graph from a clean base; True when the turn completed (and is stored)."""
        await self.summaries.settle(spec.thread_id)  # never let a summary update race this turn
        base = await self.clean_base(spec.thread_id)
        completed = False
        m = self.models
        lease = ModelLease(m.gate, spec.thread_id, m.kv if spec.use_memory else None, m.pin_slots)
        deps = dataclasses.replace(self.deps, lease=lease)
        turn = turn_events(self.graph, deps, spec.question, spec.mode, spec.thread_id, spec.run_id, spec.use_memory)
        try:
            async with aclosing(turn) as events:
                async for event in events:
                    completed = completed or isinstance(event, DoneEvent)
                    out.put_nowait(event)
        finally:
            await lease.finish(keep=completed)  # saves the thread's KV cache, frees the slot for the next turn
            if not completed:  # failed or cancelled: what the turn checkpointed goes, unless it was all stored
                discard = self.checkpointer.adiscard_unfinished(spec.thread_id, base, spec.run_id)
                await asyncio.shield(discard)
        return completed

    async def clean_base(self, thread_id: str) -> str | None:
        """The id of the thread's last complete checkpoint, after dropping any interrupted turn's checkpoints."""
        config = {"configurable": {"thread_id": thread_id}}
        snapshot = await self.graph.aget_state(config)
        if not snapshot.next:
            return snapshot.config.get("configurable", {}).get("checkpoint_id")
        base = None
        async for past in self.graph.aget_state_history(config):
            if not past.next:
                base = past.config["configurable"]["checkpoint_id"]
                break
        dropped = await self.checkpointer.adiscard_after(thread_id, base)
        log.warning("thread %s: dropped %d checkpoint(s) of an interrupted turn", thread_id, dropped)
        return base
