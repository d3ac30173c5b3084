"""RunDriver: the task side of a run, the base of runs/runner.TurnRunner (which starts runs, and follows, stops and
recovers them). A run's task waits for its turn on the thread (on this replica and on others sharing the log), runs
the graph from the thread's last complete checkpoint, discards what a failed or cancelled turn checkpointed, keeps a
stopped run's partial answer beside the thread, and logs every event and the run's final status."""

import asyncio
import dataclasses
import logging
from contextlib import aclosing

from langgraph.graph.state import CompiledStateGraph
from pydantic import BaseModel

from backend.clock import now
from backend.contract.events import SSE_EVENTS, DoneEvent, ErrorEvent, StatusEvent, StoppedEvent
from backend.graph.deps import GraphDeps
from backend.graph.report import steps_said
from backend.llm.factory import Models
from backend.llm.lease import ModelLease
from backend.memory.conversations import record_turn
from backend.runs.live import LiveRun
from backend.runs.log import RunLog
from backend.runs.queue import ThreadQueue
from backend.runs.spec import TurnSpec
from backend.runs.summary import SummaryScheduler
from backend.runs.unfinished import partial_answer, unfinished_record
from backend.store.checkpointer import Checkpointer
from backend.streaming import final_events, turn_events

log = logging.getLogger(__name__)
FOLLOW_POLL_SECONDS = 0.1  # how often a run of another replica is read from the log (it writes every 50 ms)
ENDED_KEPT = 256  # recently ended runs remembered, so a log read just before one ended does not list it as answering


class RunDriver:
    """Drives runs' tasks: the turn, its events in the log, and what is kept when it does not finish."""

    graph: CompiledStateGraph
    deps: GraphDeps
    checkpointer: Checkpointer
    summaries: SummaryScheduler
    models: Models
    runlog: RunLog
    queue: ThreadQueue
    live: dict[str, LiveRun]  # runs of this server that have not been fully logged yet
    ended: dict[str, None]  # this server's latest runs that left `live` (an ordered set, trimmed)

    def _emit(self, run: LiveRun, event: BaseModel) -> None:
        seq = run.emit(event)
        self.runlog.append(run.run_id, seq, SSE_EVENTS[type(event)], event.model_dump_json())

    async def _drive(self, spec: TurnSpec, run: LiveRun) -> None:
        """The run's task: the turn, then its final status in the log."""
        status = "failed"
        try:
            status = "completed" if await self._run(spec, run) else "failed"
        except asyncio.CancelledError:
            status = await asyncio.shield(self._after_cancel(spec, run))
            raise
        except Exception as exc:
            log.exception("run %s failed", run.run_id)
            self._emit(run, ErrorEvent(code="internal_error", message=f"The turn failed ({type(exc).__name__})."))
        finally:
            run.end(status)
            try:
                await asyncio.shield(self.runlog.finish(run.run_id, status, len(run.events), now()))
            finally:
                self.live.pop(run.run_id, None)
                self.ended[run.run_id] = None  # logged as running when `answering` read the log, ended since
                while len(self.ended) > ENDED_KEPT:
                    del self.ended[next(iter(self.ended))]

    async def _after_cancel(self, spec: TurnSpec, run: LiveRun) -> str:
        """A cancelled run's last events and status: done if its turn was stored whole, stopped if Stop ended it."""
        if run.kept:  # the cancellation landed after the final checkpoint committed: the turn is complete
            record = (await self.graph.aget_state({"configurable": {"thread_id": spec.thread_id}})).values
            for event in final_events(record["turn_record"], partial_answer(run.events), spec.thread_id):
                self._emit(run, event)
            return "completed"
        if run.shutdown:
            return "running"  # the next start-up marks it interrupted, with its partial text
        if run.stop_requested:
            self._emit(run, StoppedEvent(run_id=run.run_id, status="stopped", answer=partial_answer(run.events)))
            return "stopped"
        message = "The client that asked this question left, so the run was cancelled; nothing of it was kept."
        self._emit(run, ErrorEvent(code="cancelled", message=message))  # for anyone else following or replaying it
        return "cancelled"

    async def _run(self, spec: TurnSpec, run: LiveRun) -> bool:
        """The turn itself: wait for the thread, run the graph, keep or discard what it wrote; True when stored."""
        ahead = self.queue.ahead(spec.thread_id)
        if ahead:
            label = f"Waiting for the previous question on this thread to finish ({ahead} ahead)…"
            self._emit(run, StatusEvent(node="queue", phase="start", label=label))
        async with self.queue.turn(spec.thread_id):
            ahead = await self._wait_for_other_replicas(run, ahead)
            if ahead:
                self._emit(run, StatusEvent(node="queue", phase="end", label="The previous question has finished"))
            completed = await self._turn(spec, run)
        if completed and spec.use_memory:
            self.summaries.schedule(spec.thread_id)  # after `done` went out: off the latency path
        return completed

    async def _wait_for_other_replicas(self, run: LiveRun, ahead: int) -> int:
        """Replicas sharing the database: wait while the thread runs an earlier turn on another replica (one turn
        at a time per thread, in the order their runs were logged, whichever replica took each). Returns how many
        turns were waited for."""
        if not self.runlog.shared:
            return ahead
        waited = False
        while elsewhere := await self.runlog.ahead_elsewhere(run.thread_id, run.run_id):
            if not waited and not ahead:
                label = f"Waiting for the previous question on this thread to finish ({elsewhere} ahead)…"
                self._emit(run, StatusEvent(node="queue", phase="start", label=label))
            waited = True
            await asyncio.sleep(FOLLOW_POLL_SECONDS)
        return ahead or int(waited)

    async def _turn(self, spec: TurnSpec, run: LiveRun) -> bool:
        """Run the graph from a clean base; True when the turn completed (and is stored)."""
        await self.summaries.settle(spec.thread_id)  # never let a summary update race this turn
        base = await self.clean_base(spec.thread_id)
        completed = False
        m = self.models
        lease = ModelLease(m.gate, spec.thread_id, m.kv, m.pin_slots, memory=spec.use_memory)
        lease.prefetch()  # after a restart the thread's KV cache is read while the first nodes run
        readable = spec.asker.readable
        retriever = self.deps.retriever.scoped(readable) if readable is not None else self.deps.retriever
        deps = dataclasses.replace(
            self.deps, lease=lease, retriever=retriever, readable=readable, user_context=spec.asker.context
        )
        turn = turn_events(
            self.graph,
            deps,
            spec.question,
            spec.mode,
            spec.thread_id,
            spec.run_id,
            spec.use_memory,
            spec.guardrail,
            spec.keep_scope,
        )
        try:
            async with aclosing(turn) as events:
                async for event in events:
                    completed = completed or isinstance(event, DoneEvent)
                    self._emit(run, event)
                    await self.runlog.keep_up(run.run_id)
        finally:
            await lease.finish(keep=completed)  # saves the thread's KV cache, frees the slot for the next turn
            if not completed:  # failed or cancelled: what the turn checkpointed goes, unless it was all stored
                discard = self.checkpointer.adiscard_unfinished(spec.thread_id, base, spec.run_id)
                run.kept = not await asyncio.shield(discard)
                if run.stop_requested and not run.kept:  # while the thread is still held: the row comes in order
                    steps = steps_said(e for e in run.events if isinstance(e, StatusEvent))
                    await asyncio.shield(self._keep_unfinished(run, "stopped", partial_answer(run.events), steps))
        return completed

    async def _keep_unfinished(self, run: LiveRun, status: str, answer: str, steps: list[str]) -> bool:
        """Store a stopped or interrupted run's partial answer and steps beside the thread's history; False if
        already there."""
        record = unfinished_record(run, answer, status, steps, self.deps.provider, self.deps.model_name)
        return await self.checkpointer.db.write(lambda c: record_turn(c, run.thread_id, {"turn_record": record}))

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
