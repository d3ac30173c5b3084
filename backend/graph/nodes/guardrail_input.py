"""guardrail_input: injection, jailbreak, toxicity and PII checks on the question.

Contract: reads `question` (the API already redacted PII that the policy redacts, so checkpoints never hold it)
and `input_redactions`; writes `triage` (log line; on block: route "blocked", skip_llm, early_response),
`answer` on block, and `validation.input` {action, categories, reason, scores}.
"""

from langgraph.runtime import Runtime

from backend.graph.deps import GraphDeps
from backend.graph.report import report
from backend.graph.state import ChatState
from backend.graph.triage import log, short_circuit
from backend.guardrails.policy import block_message, check_input

NODE = "guardrail_input"


async def guardrail_input(state: ChatState, runtime: Runtime[GraphDeps]) -> dict:
    """Block what the policy blocks; record what was redacted."""
    verdict = check_input(state["question"], runtime.context.policy)
    redacted = state.get("input_redactions", [])
    categories = verdict.categories or redacted
    check = {"action": verdict.action, "categories": categories, "reason": verdict.reason, "scores": verdict.scores}
    if verdict.action == "block":
        out = short_circuit(NODE, "blocked", block_message(verdict), f"BLOCK ({verdict.reason})")
        return {**out, "validation": {"input": check}, **report(runtime, NODE, "Message blocked", verdict.reason)}
    line = f"REDACT ({', '.join(t.lower() for t in redacted)})" if redacted else "PASS"
    detail = f"redacted {', '.join(redacted)}" if redacted else None
    return {**log(f"{NODE}: {line}"), "validation": {"input": check}, **report(runtime, NODE, detail=detail)}
