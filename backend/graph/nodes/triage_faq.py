"""triage_faq: a confident match in the curated FAQ (RAG_FAQ_PATH) is answered at once, without the model.

Contract: reads `question`, `mode`, `triage`; on a match writes `answer` and `triage` {route "faq", skip_llm,
early_response, faq: {id, matched, score, sources}}.
"""

from langgraph.runtime import Runtime

from backend.graph.deps import GraphDeps
from backend.graph.report import report
from backend.graph.state import ChatState
from backend.graph.triage import decided, log, short_circuit
from backend.guardrails.faq import match_faq

NODE = "triage_faq"


async def triage_faq(state: ChatState, runtime: Runtime[GraphDeps]) -> dict:
    """Answer from the FAQ in auto mode when the question is one of its questions (not when aimed with @), using
    only entries whose sources the asker may read: another's answer falls through to the filtered search."""
    if decided(state):
        return {}
    faq = runtime.context.faq
    match = None
    if faq and runtime.context.readable is not None:  # only entries whose every source the asker may read
        readable = set(await runtime.context.retriever.document_names())
        faq = [entry for entry in faq if set(entry.sources) <= readable]
    if faq and state.get("mode", "auto") == "auto" and "@" not in state["question"]:
        match = match_faq(state["question"], faq)
    if match is None:
        return {**log(f"{NODE}: PASS"), **report(runtime, NODE)}
    out = short_circuit(NODE, "faq", match.entry.answer, f"ANSWERED ({match.entry.id})")
    out["triage"]["faq"] = {
        "id": match.entry.id,
        "matched": match.question,
        "score": round(match.score, 3),
        "sources": list(match.entry.sources),
    }
    return {**out, **report(runtime, NODE, "Answered from the FAQ", match.entry.id)}
