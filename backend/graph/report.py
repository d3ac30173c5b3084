"""How a node tells the client what it is doing and what it decided: LangGraph's stream writer.

`report` ends a node's status with its decision and keeps the line for the turn's record; `progress` changes
the running node's label ("Searching employee-handbook.md…"). The SSE layer maps these custom stream events;
it never reads node outputs by name. A turn cut short keeps the lines its status events said (`steps_said`).
"""

from collections.abc import Iterable
from typing import Any

from langgraph.runtime import Runtime

from backend.contract.events import StatusEvent

NODE_LABELS = {
    "start_turn": "Starting",
    "guardrail_input": "Checking the message",
    "triage_relevance": "Checking the topic",
    "triage_faq": "Looking in the FAQ",
    "triage_intent": "Recognising small talk",
    "router": "Understanding question",
    "rewriter": "Checking the conversation",
    "retriever": "Searching documents",
    "generator": "Writing answer",
    "validate_answerable": "Checking the sources answer the question",
    "validate_sources": "Checking the answer against the sources",
    "validate_tone": "Checking the tone",
    "guardrail_output": "Checking the answer",
    "memory": "Saving conversation",
}
SILENT_NODES = frozenset({"start_turn"})  # bookkeeping, not worth a status line


def report(runtime: Runtime[Any], node: str, label: str | None = None, detail: str | None = None) -> dict:
    """Say what the node decided (shown when it ends) and return the step line for the turn's record."""
    label = label or NODE_LABELS[node]
    runtime.stream_writer({"kind": "report", "node": node, "label": label, "detail": detail})
    return {"steps": [step_line(node, label, detail)]}


def step_line(node: str, label: str, detail: str | None = None) -> str:
    """One step as a turn's record keeps it: "retriever: Searching documents (8 passages)"."""
    return f"{node}: {label}" + (f" ({detail})" if detail else "")


def steps_said(events: Iterable[StatusEvent]) -> list[str]:
    """The step lines of a turn that did not finish, from the status events it sent, in the order the nodes
    started: what each node that ended decided, and the latest label of one still at work, ending in "…"."""
    steps: list[StatusEvent] = []
    for event in events:
        if event.node not in NODE_LABELS:
            continue  # the thread queue's wait is not a step of the turn
        open_ = [i for i, s in enumerate(steps) if s.node == event.node and s.phase != "end"]
        if event.phase == "start" or not open_:
            steps.append(event)
        else:  # progress relabels the node's open step, end closes it with what it decided
            steps[open_[-1]] = event.model_copy(update={"detail": event.detail or steps[open_[-1]].detail})
    return [step_line(s.node, _said(s), s.detail) for s in steps]


def _said(step: StatusEvent) -> str:
    """An ended step's label as a finished turn keeps it; one still at work ends in "…", as the page showed it, so a
    reader of the record tells the two apart ("Searching Budget (draft).md…" is not a search that found "draft")."""
    label = step.label.removesuffix("…")
    return label if step.phase == "end" else f"{label}…"


def progress(runtime: Runtime[Any], node: str, label: str) -> None:
    """Replace the running node's label while it works."""
    runtime.stream_writer({"kind": "progress", "node": node, "label": label})
