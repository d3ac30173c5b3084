"""How a node tells the client what it is doing and what it decided: LangGraph's stream writer.

`report` ends a node's status with its decision and keeps the line for the turn's record; `progress` changes
the running node's label ("Searching employee-handbook.md…"). The SSE layer maps these custom stream events;
it never reads node outputs by name.
"""

from typing import Any

from langgraph.runtime import Runtime

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
    return {"steps": [f"{node}: {label}" + (f" ({detail})" if detail else "")]}


def progress(runtime: Runtime[Any], node: str, label: str) -> None:
    """Replace the running node's label while it works."""
    runtime.stream_writer({"kind": "progress", "node": node, "label": label})
