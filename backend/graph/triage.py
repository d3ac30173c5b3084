"""Shared shape of triage decisions: a log line per node, and a short-circuit that answers without the model."""

from backend.graph.state import ChatState


def decided(state: ChatState) -> bool:
    """True when an earlier node already answered (every later triage node passes through)."""
    return bool(state.get("triage", {}).get("skip_llm"))


def log(state: ChatState, line: str, **changes: object) -> dict:
    """The triage dict with one more log line and the given changes."""
    triage = dict(state.get("triage") or {})
    triage["triage_log"] = [*triage.get("triage_log", []), line]
    return {"triage": triage | changes}


def short_circuit(state: ChatState, node: str, route: str, reply: str, verdict: str) -> dict:
    """Answer now with `reply` (no retrieval, no model); output guardrail and memory still run."""
    return {**log(state, f"{node}: {verdict}", route=route, skip_llm=True, early_response=reply), "answer": reply}
