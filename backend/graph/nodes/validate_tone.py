"""validate_tone: house rules for answers (no emoji, no "As an AI…", no trailing questions unless asked).

Contract: reads `answer`, `question`; writes `validation.tone` {appropriate, adjustments, original_text} and,
when a rule rewrote it, `answer`.
"""

from langgraph.runtime import Runtime

from backend.contract.types import ToneCheck
from backend.graph.deps import GraphDeps
from backend.graph.report import report
from backend.graph.state import ChatState
from backend.graph.triage import decided
from backend.guardrails.tone import check_tone

NODE = "validate_tone"


async def validate_tone(state: ChatState, runtime: Runtime[GraphDeps]) -> dict:
    """Rewrite the answer when a tone rule applies."""
    if decided(state) or not state.get("answer"):
        return {}
    result = check_tone(state["answer"], state["question"])
    changed = result.text != state["answer"]
    check = ToneCheck(
        appropriate=result.appropriate,
        adjustments=result.adjustments,
        original_text=state["answer"] if changed else "",
    )
    out: dict = {"validation": {"tone": check}, **report(runtime, NODE, detail=", ".join(result.adjustments) or None)}
    return {**out, "answer": result.text} if changed else out
