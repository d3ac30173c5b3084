"""triage_intent: greetings, thanks and small talk get a short canned reply without the model.

Contract: reads `question`, `triage`; on small talk writes `answer` and `triage` {route "<intent>", skip_llm}.
"""

from langgraph.runtime import Runtime

from backend.graph.deps import GraphDeps
from backend.graph.report import report
from backend.graph.state import ChatState
from backend.graph.triage import decided, log, short_circuit
from backend.guardrails.intent import classify_intent

NODE = "triage_intent"


async def triage_intent(state: ChatState, runtime: Runtime[GraphDeps]) -> dict:
    """Small talk answered at once; anything else goes on to the router."""
    if decided(state):
        return {}
    match = classify_intent(state["question"])
    if match is None:
        return {**log(f"{NODE}: PASS"), **report(runtime, NODE)}
    out = short_circuit(NODE, match.intent, match.reply, f"ANSWERED ({match.intent})")
    return {**out, **report(runtime, NODE, "Small talk", match.intent)}
