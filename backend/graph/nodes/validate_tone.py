"""validate_tone: house rules for answers (no emoji, no "As an AI…", no trailing questions unless asked).

Contract: reads `answer`, `question`; writes `validation.tone` {appropriate, adjustments, original_text} and,
when a rule rewrote it, `answer`.
"""

from langgraph.runtime import Runtime

from backend.graph.deps import GraphDeps
from backend.graph.state import ChatState
from backend.graph.triage import decided
from backend.guardrails.tone import check_tone


async def validate_tone(state: ChatState, runtime: Runtime[GraphDeps]) -> dict:
    """Rewrite the answer when a tone rule applies."""
    if decided(state) or not state.get("answer"):
        return {}
    result = check_tone(state["answer"], state["question"])
    report = {"appropriate": result.appropriate, "adjustments": result.adjustments, "original_text": ""}
    out: dict = {"validation": {**state.get("validation", {}), "tone": report}}
    if result.text != state["answer"]:
        report["original_text"] = state["answer"]
        out["answer"] = result.text
    return out
