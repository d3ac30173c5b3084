"""guardrail_input: injection, jailbreak, toxicity and PII checks on the question.

Injection is scored by the rules, the n-gram classifier and, for a message of 40 words or more where documents are
embedded by the offline MiniLM (`guard_embed`), the classifier over its MiniLM vector.

Contract: reads `question` (the API already redacted PII that the policy redacts, so checkpoints never hold it),
`input_redactions` and `guardrail`; writes `triage` (log line; on block: route "blocked", skip_llm,
early_response), `answer` on block, and `validation.input` {action, categories, reason, scores, can_override}.
A block for injection or jailbreak alone may be overridden: with guardrail "warn" (the user said "this was not an
attack") and RAG_GUARDRAIL_ALLOW_OVERRIDE on, the message goes through with action "warn", logged.
"""

import asyncio
import logging

from langgraph.runtime import Runtime

from backend.graph.deps import GraphDeps
from backend.graph.report import report
from backend.graph.state import ChatState
from backend.graph.triage import log, short_circuit
from backend.guardrails.classifier import judged_by_embedding
from backend.guardrails.policy import InputVerdict, block_message, check_input

NODE = "guardrail_input"
OVERRIDABLE = frozenset({"injection", "jailbreak"})
logger = logging.getLogger(__name__)


async def guardrail_input(state: ChatState, runtime: Runtime[GraphDeps]) -> dict:
    """Block what the policy blocks, unless the user overrode an injection block; record what was redacted."""
    question, embed = state["question"], runtime.context.guard_embed
    if embed is not None and judged_by_embedding(question):  # embedding a long message takes 30-60 ms: off the loop
        verdict = await asyncio.to_thread(check_input, question, runtime.context.policy, embed)
    else:
        verdict = check_input(question, runtime.context.policy)
    redacted = state.get("input_redactions", [])
    categories = verdict.categories or redacted
    check = {"action": verdict.action, "categories": categories, "reason": verdict.reason, "scores": verdict.scores}
    if verdict.action == "block":
        may_override = runtime.context.settings.guardrail_allow_override and overridable(verdict)
        if may_override and state.get("guardrail") == "warn":
            logger.warning("guardrail_input: block overridden by the user (%s): %r", verdict.reason, state["question"])
            line = f"WARN ({verdict.reason}; sent anyway at the user's request)"
            warned = {**check, "action": "warn"}
            return {**log(f"{NODE}: {line}"), "validation": {"input": warned}, **report(runtime, NODE, "Sent anyway")}
        out = short_circuit(NODE, "blocked", block_message(verdict), f"BLOCK ({verdict.reason})")
        blocked = {**check, "can_override": may_override}
        return {**out, "validation": {"input": blocked}, **report(runtime, NODE, "Message blocked", verdict.reason)}
    line = f"REDACT ({', '.join(t.lower() for t in redacted)})" if redacted else "PASS"
    detail = f"redacted {', '.join(redacted)}" if redacted else None
    return {**log(f"{NODE}: {line}"), "validation": {"input": check}, **report(runtime, NODE, detail=detail)}


def overridable(verdict: InputVerdict) -> bool:
    """True when only the injection or jailbreak detectors blocked (never toxicity or personal data)."""
    blocking = {c for c in verdict.categories if ":" not in c}
    return bool(blocking) and blocking <= OVERRIDABLE
