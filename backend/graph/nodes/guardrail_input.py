"""guardrail_input: injection, jailbreak, toxicity and PII checks on the question.

Contract: reads `question` (the API already redacted PII that the policy redacts, so checkpoints never hold it)
and `input_redactions`; writes `triage` (log line; on block: route "blocked", skip_llm, early_response),
`answer` on block, and `validation.input` {action, categories, reason, scores}.
"""

from langgraph.runtime import Runtime

from backend.graph.deps import GraphDeps
from backend.graph.state import ChatState
from backend.graph.triage import log, short_circuit
from backend.guardrails.policy import block_message, check_input


async def guardrail_input(state: ChatState, runtime: Runtime[GraphDeps]) -> dict:
    """Block what the policy blocks; record what was redacted."""
    verdict = check_input(state["question"], runtime.context.policy)
    redacted = state.get("input_redactions", [])
    details = {"action": verdict.action, "categories": verdict.categories or redacted, "reason": verdict.reason}
    validation = {**state.get("validation", {}), "input": details | {"scores": verdict.scores}}
    if verdict.action == "block":
        reply = block_message(verdict)
        return {
            **short_circuit(state, "guardrail_input", "blocked", reply, f"BLOCK ({verdict.reason})"),
            "validation": validation,
        }
    line = f"REDACT ({', '.join(t.lower() for t in redacted)})" if redacted else "PASS"
    return {**log(state, f"guardrail_input: {line}"), "validation": validation}
