"""validate_sources: is the answer supported by the sources it cites? (lexical overlap + embeddings)

Contract: reads `answer`, `documents`, `intent`, `triage`; writes `validation.sources`
{grounded, confidence, issues, unsupported_sentences}; never changes the answer.
"""

from langgraph.runtime import Runtime

from backend.graph.deps import GraphDeps
from backend.graph.state import ChatState
from backend.graph.triage import decided
from backend.guardrails.grounding import check_grounding


async def validate_sources(state: ChatState, runtime: Runtime[GraphDeps]) -> dict:
    """Check each claim of a documents answer against its cited passages."""
    if decided(state) or state.get("intent") != "rag" or not state.get("documents"):
        return {}
    passages = {d["id"]: d["text"] for d in state["documents"]}
    result = check_grounding(state.get("answer", ""), passages, runtime.context.embed)
    report = {
        "grounded": result.grounded,
        "confidence": result.confidence,
        "issues": result.issues,
        "unsupported_sentences": result.unsupported_sentences,
    }
    return {"validation": {**state.get("validation", {}), "sources": report}}
