"""What is kept of a run that did not finish (stopped, or interrupted by a restart): its partial answer, the steps
its logged status events had shown, and its row in the thread."""

import logging

from pydantic import BaseModel, ValidationError

from backend.contract.events import StatusEvent, TokenEvent
from backend.contract.types import TurnRecord
from backend.graph.report import steps_said
from backend.runs.live import LiveRun

log = logging.getLogger(__name__)


def partial_answer(events: list[BaseModel]) -> str:
    """The answer text a run streamed so far."""
    return "".join(e.text for e in events if isinstance(e, TokenEvent))


def logged_steps(statuses: list[str]) -> list[str]:
    """The step lines of an interrupted run, from its logged status events; an event that no longer reads (a
    newer replica's, a damaged row) is skipped, so one row cannot stop the recovery of every run."""
    events = []
    for data in statuses:
        try:
            events.append(StatusEvent.model_validate_json(data))
        except ValidationError:
            log.warning("skipped a logged status event that does not read: %.200s", data)
    return steps_said(events)


def unfinished_record(
    run: LiveRun, answer: str, status: str, steps: list[str], provider: str = "", model: str = ""
) -> TurnRecord:
    """The thread row of a run that did not finish: its question, partial answer and the steps it had shown (what
    the search found, say), no sources, no memory."""
    return TurnRecord(
        run_id=run.run_id,
        question=run.question,
        answer=answer,
        rewritten_query="",
        intent="",
        route_reason="",
        scope=None,
        sources=[],
        steps=steps,
        triage=None,
        validation=None,
        provider=provider,
        model=model,
        latency_ms=0.0,
        use_memory=False,
        status=status,  # type: ignore[typeddict-item]
        created_at=run.created_at,
    )
