"""Shared shape of triage decisions: a log line per node, and a short-circuit that answers without the model."""

from backend.graph.state import ChatState


def decided(state: ChatState) -> bool:
    """True when an earlier node already answered (every later triage node passes through)."""
    return bool(state.get("triage", {}).get("skip_llm"))


def log(line: str, **changes: object) -> dict:
    """A triage update: one more log line and the given changes (the state's reducer merges it)."""
    return {"triage": {"triage_log": [line], **changes}}


def short_circuit(node: str, route: str, reply: str, verdict: str) -> dict:
    """Answer now with `reply` (no retrieval, no model); output guardrail and memory still run."""
    return {**log(f"{node}: {verdict}", route=route, skip_llm=True, early_response=reply), "answer": reply}
