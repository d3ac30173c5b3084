"""guardrail_output: the last check before anything is stored or shown as final.

Contract: reads `answer`, `question`, `documents`; writes `validation.output_guardrail`
{safe, issues, original_text} and, when needed, `answer`: a leaked system prompt is replaced by a fixed reply,
PII not present in the question or sources is redacted, URLs not present in them are removed; a replaced answer
that no longer quotes another document's figure drops `validation.sources.conflicts` (so no badge claims a note).
Runs on every path, short-circuited ones included.
"""

from langgraph.runtime import Runtime

from backend.contract.types import OutputCheck
from backend.graph.deps import GraphDeps
from backend.graph.prompts import leak_checked_prompt
from backend.graph.report import report
from backend.graph.state import ChatState
from backend.graph.triage import log
from backend.guardrails.output import check_output

NODE = "guardrail_output"


async def guardrail_output(state: ChatState, runtime: Runtime[GraphDeps]) -> dict:
    """Make the final answer safe to show and store."""
    answer = state.get("answer", "")
    sources_text = "\n".join(d["text"] for d in state.get("documents", []))
    system = leak_checked_prompt(runtime.context.settings.prompt_style)  # the example answers are no secret
    verdict = check_output(answer, sources_text, state["question"], system)
    check = OutputCheck(safe=verdict.safe, issues=verdict.issues, original_text="" if verdict.safe else answer)
    out: dict = {
        "validation": {"output_guardrail": check},
        **log(f"{NODE}: {'PASS' if verdict.safe else 'FIXED'}"),
        **report(runtime, NODE, detail=", ".join(verdict.issues) or None),
    }
    if verdict.text == answer:
        return out
    sources = (state.get("validation") or {}).get("sources") or {}
    if any(c["says"] not in verdict.text for c in sources.get("conflicts", [])):  # a replaced answer lost its note
        out["validation"]["sources"] = {k: v for k, v in sources.items() if k != "conflicts"}
    return {**out, "answer": verdict.text}
