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
from backend.guardrails.text import split_notes
from backend.guardrails.tone import check_tone

NODE = "validate_tone"


async def validate_tone(state: ChatState, runtime: Runtime[GraphDeps]) -> dict:
    """Rewrite the answer when a tone rule applies."""
    if decided(state) or not state.get("answer"):
        return {}
    body, notes = split_notes(state["answer"])  # the checks' closing notes are theirs: "… anything else?" stays
    result = check_tone(body, state["question"])  # the answer's last sentence before them
    text = "\n\n".join([result.text, *notes])
    changed = text != state["answer"]
    check = ToneCheck(
        appropriate=result.appropriate,
        adjustments=result.adjustments,
        original_text=state["answer"] if changed else "",
    )
    out: dict = {"validation": {"tone": check}, **report(runtime, NODE, detail=", ".join(result.adjustments) or None)}
    return {**out, "answer": text} if changed else out
