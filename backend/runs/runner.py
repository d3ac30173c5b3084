"""TurnRunner: run a chat turn on a thread as a server-side run, so that the thread's history stays whole.

- A run lives on the server, in its own task: its events are numbered (the SSE `id:`), kept in memory while it
  runs and appended to the run log (runs/log.py); any number of clients follow it and re-attach after a given
  number (`follow`). A client that leaves does not end the run unless it asked for that (`abandon`).
- Stop (`cancel`) cancels the run's task with a plain asyncio cancellation, which LangGraph turns into cancelling
  the model request; the partial answer is kept as a `stopped` row beside the thread's history (never in a
  checkpoint, so never in the model's memory) and the last event says so.
- One turn at a time per thread (ThreadQueue): a second question on a busy thread waits in order, and says so in
  a status event.
- A turn starts from the thread's last complete checkpoint; leftovers of an interrupted turn are dropped first.
- A turn that fails or is cancelled leaves the checkpoints as they were: what it checkpointed is discarded.
- The turn's rows (thread, turn) are committed with its final checkpoint by the checkpointer's hook, so the
  `done` event goes out only after the whole turn is stored.
- At start-up, runs the log still shows `running` (their server died) become `interrupted`, with the text their
  token events carried (`recover`).
- Replicas on one Postgres database (`watch`): a run started on one is followed from the shared log on another,
  and stopped from another through the log; the runs of a replica whose heartbeat stopped are interrupted by a
  live one. SQLite files serve one server: there, `recover` at start-up takes every run left `running`.

A run's task (waiting, the turn, what is kept or discarded) is in runs/driver.py, TurnRunner's base; who asks and
what to run in runs/spec.py; what is kept of a run that did not finish in runs/unfinished.py.
"""

import asyncio
import logging
import uuid
from collections.abc import AsyncIterator
from contextlib import suppress
from datetime import UTC, datetime, timedelta
from typing import Literal

from langgraph.graph.state import CompiledStateGraph
from pydantic import BaseModel

from backend.clock import now
from backend.contract.events import SSE_EVENTS, DoneEvent, ErrorEvent, MetadataEvent, StoppedEvent
from backend.contract.types import GuardrailMode, Mode
from backend.graph.deps import GraphDeps
from backend.llm.factory import Models
from backend.runs.driver import FOLLOW_POLL_SECONDS, RunDriver
from backend.runs.live import LiveRun, Numbered
from backend.runs.log import RECOVERED_GAP, RunLog
from backend.runs.queue import ThreadQueue
from backend.runs.spec import Asker, TurnSpec
from backend.runs.summary import SummaryScheduler
from backend.runs.unfinished import logged_steps
from backend.store.checkpointer import Checkpointer
from backend.streaming import guarded_input

log = logging.getLogger(__name__)
EVENT_TYPES = {name: cls for cls, name in SSE_EVENTS.items()}
WATCH_SECONDS = 0.25  # how often a replica looks for Stop asked through another one
RECOVER_EVERY = 20  # …and, every this many looks, for the runs of a dead replica
STOP_WAIT_SECONDS = 30.0
OnDisconnect = Literal["continue", "cancel"]


def _said_last(run: LiveRun) -> bool:
    """The run has emitted its last event (done, error, stopped) and is only tidying up: not answering any more."""
    return bool(run.events) and isinstance(run.events[-1], (DoneEvent, ErrorEvent, StoppedEvent))


class TurnRunner(RunDriver):
    """Runs turns for the API."""

    def __init__(
        self,
        graph: CompiledStateGraph,
        deps: GraphDeps,
        checkpointer: Checkpointer,
        summaries: SummaryScheduler,
        models: Models,
        runlog: RunLog,
    ) -> None:
        self.graph, self.deps, self.checkpointer, self.summaries = graph, deps, checkpointer, summaries
        self.models, self.runlog = models, runlog
        self.queue = ThreadQueue()
        self.live: dict[str, LiveRun] = {}  # runs of this server that have not been fully logged yet
        self.ended: dict[str, None] = {}  # this server's latest runs that left `live` (an ordered set, trimmed)

    async def start(
        self,
        question: str,
        mode: Mode,
        thread_id: str | None = None,
        use_memory: bool = True,
        guardrail: GuardrailMode = "enforce",
        asker: Asker | None = None,
        keep_scope: bool = True,
    ) -> LiveRun:
        """Start a run in its own task and return it; its first event is metadata. `asker.readable`: the ids of the
        documents the asker may read, the only ones the turn searches, mentions and cites (None: all)."""
        thread_id = thread_id or str(uuid.uuid4())
        spec = TurnSpec(
            question, mode, thread_id, str(uuid.uuid4()), use_memory, guardrail, asker or Asker(), keep_scope
        )
        stored_question, _ = guarded_input(question, self.deps)  # what the thread may show: PII redacted
        run = LiveRun(spec.run_id, spec.thread_id, stored_question, now())
        logged = asyncio.ensure_future(self.runlog.start(run.run_id, run.thread_id, run.question, run.created_at))
        try:
            await asyncio.shield(logged)
        except asyncio.CancelledError:  # the caller left (a stream's client) while the run was being logged
            await asyncio.shield(self._unlog(logged, run.run_id))
            raise
        self.live[run.run_id] = run
        self._emit(run, MetadataEvent(thread_id=spec.thread_id, run_id=spec.run_id))
        run.task = asyncio.create_task(self._drive(spec, run), name=f"turn:{spec.thread_id}")
        return run

    async def events(
        self,
        question: str,
        mode: Mode,
        thread_id: str | None = None,
        use_memory: bool = True,
        on_disconnect: OnDisconnect = "cancel",
        guardrail: GuardrailMode = "enforce",
        asker: Asker | None = None,
        keep_scope: bool = True,
    ) -> AsyncIterator[BaseModel]:
        """A new run's payloads: metadata, (a wait), status…, tokens…, sources, then done, error or stopped.

        Closing the iterator early cancels the run (and keeps nothing of it) unless on_disconnect is "continue".
        """
        run = await self.start(question, mode, thread_id, use_memory, guardrail, asker, keep_scope)
        try:
            async for _, event in run.follow():
                yield event
        finally:
            if on_disconnect == "cancel":
                await self.abandon(run)

    async def _unlog(self, logged: asyncio.Future, run_id: str) -> None:
        """A run logged as `running` that never ran is logged `cancelled`, once its row is in: left `running`, it
        was the thread's active run until a restart (a reload followed it forever; another replica's turns on the
        thread waited for it)."""
        with suppress(Exception):
            await logged
            await self.runlog.finish(run_id, "cancelled", 0, now())

    async def follow(self, run_id: str, after: int = 0) -> AsyncIterator[Numbered]:
        """A run's numbered events after `after`: live ones until it ends, or its log (finished, or running on
        another replica: then the log is read until the run ends there)."""
        run = self.live.get(run_id)
        if run is not None:
            async for numbered in run.follow(after):
                yield numbered
            return
        seq = after
        while True:
            row = await self.runlog.run(run_id)  # read before the events: a finished run's events are all logged
            for number, name, data in await self.runlog.events(run_id, seq):
                seq = number
                yield number, EVENT_TYPES[name].model_validate_json(data)
            if row is None or row["status"] != "running":
                return
            await asyncio.sleep(FOLLOW_POLL_SECONDS)

    async def info(self, run_id: str) -> dict | None:
        """The run's id, thread, question, status, start time and latest event number; None when unknown."""
        run = self.live.get(run_id)
        if run is None:
            row = await self.runlog.run(run_id)
            if row is not None and row["status"] == "running":  # on another replica: its events so far
                row["last_event_id"] = await self.runlog.last_event(run_id)
            return row and {k: v for k, v in row.items() if k != "replica"}
        fields = ("run_id", "thread_id", "question", "status", "created_at")
        return {f: getattr(run, f) for f in fields} | {"last_event_id": len(run.events)}

    async def answering(self) -> list[dict]:
        """Runs still answering, on any replica, oldest first (run_id, thread_id, question, created_at), from the
        shared log; but one of this replica's that has ended is not, while its status is still being logged or
        when it was logged once the log was read. (One that has just started may be logged before it is in
        `live`.)"""
        here = self.runlog.replica_id
        return [
            run
            for run in await self.runlog.running()
            if run["replica"] != here
            or ((live := self.live.get(run["run_id"])) is None and run["run_id"] not in self.ended)  # starting
            or (live is not None and not live.finished and not _said_last(live))
        ]

    def active(self, thread_id: str) -> LiveRun | None:
        """The oldest run of the thread that is still answering (or waiting for its turn)."""
        return next((r for r in self.live.values() if r.thread_id == thread_id and not r.finished), None)

    async def cancel(self, run: LiveRun) -> None:
        """Stop a running run: cancel its task (and so the model request) and wait until it has ended."""
        run.stop_requested = True
        await self.abandon(run)

    async def stop(self, run_id: str) -> bool:
        """Stop a run on this replica or, through the log, on another one, and wait until it has ended there;
        False when it is not running."""
        if (run := self.live.get(run_id)) is not None:
            if run.finished:
                return False
            await self.cancel(run)
            return True
        if not await self.runlog.request_stop(run_id):
            return False
        for _ in range(int(STOP_WAIT_SECONDS / FOLLOW_POLL_SECONDS)):
            row = await self.runlog.run(run_id)
            if row is None or row["status"] != "running":
                break
            await asyncio.sleep(FOLLOW_POLL_SECONDS)
        return True

    async def watch(self) -> None:
        """Replicas on one database: stop the runs whose Stop was asked through another replica, and interrupt the
        runs of replicas that died. Runs for the server's life."""
        looks = 0
        while True:
            await asyncio.sleep(WATCH_SECONDS)
            looks += 1
            try:
                if self.live:
                    for run_id in await self.runlog.stop_requests():
                        if (run := self.live.get(run_id)) is not None:
                            asyncio.create_task(self.cancel(run), name=f"stop:{run_id}")
                if looks % RECOVER_EVERY == 0:
                    await self.recover(dead_only=True)
            except Exception:  # a database hiccup must not end the watch; the next look retries
                log.exception("watching the shared run log failed")

    async def abandon(self, run: LiveRun) -> None:
        """Cancel the run's task unless it has emitted its last event, and wait for it; nothing else is kept."""
        if run.task is None or run.finished:
            return
        run.task.cancel()  # now, before any await: the caller may itself be cancelled repeatedly
        await asyncio.shield(asyncio.gather(run.task, return_exceptions=True))

    async def close(self) -> None:
        """Server shutdown: cancel the runs still going; the log keeps them `running` for the next start-up."""
        for run in list(self.live.values()):
            run.shutdown = True
            await self.abandon(run)

    async def recover(self, dead_only: bool = False) -> int:
        """Mark the runs a dead server left `running` as interrupted, each with its partial text in its thread.
        dead_only: only those of replicas whose heartbeat stopped (replicas sharing Postgres)."""
        runs = await self.runlog.unfinished(dead_only)
        for row in runs:
            if not await self.runlog.claim(row):
                continue  # another replica is taking care of it
            run = LiveRun(row["run_id"], row["thread_id"], row["question"], row["created_at"])
            if not await self._keep_unfinished(run, "interrupted", row["answer"], logged_steps(row["statuses"])):
                await self.runlog.finish(run.run_id, "completed", row["last_event_id"], now())  # it was stored
                continue
            seq = row["last_event_id"] + RECOVERED_GAP  # above what the dead server may have sent unwritten
            stopped = StoppedEvent(run_id=run.run_id, status="interrupted", answer=row["answer"])
            self.runlog.append(run.run_id, seq, "stopped", stopped.model_dump_json())
            await self.runlog.finish(run.run_id, "interrupted", seq, now())
            log.warning("run %s on thread %s was interrupted by a restart", run.run_id, run.thread_id)
        return len(runs)

    async def prune(self, hours: float) -> int:
        """Delete the logs of runs that finished more than `hours` ago."""
        cutoff = (datetime.now(UTC) - timedelta(hours=hours)).isoformat(timespec="milliseconds")
        return await self.runlog.prune(cutoff)
