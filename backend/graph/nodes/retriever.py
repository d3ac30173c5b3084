"""retriever: build the turn's context: fresh passages, the previous turn's sources, older cited ones."""

from langgraph.runtime import Runtime

from backend.graph.deps import GraphDeps
from backend.graph.state import ChatState, Source
from backend.memory.ledger import as_sources, assign_ids
from backend.rag.chunking import estimate_tokens


def carried_sources(state: ChatState, budget: int) -> list[Source]:
    """Previous turn's full context, then older cited sources (newest first), within a token budget."""
    ledger, last = state.get("ledger", {}), state.get("last_context", [])
    older = [sid for sid in reversed(state.get("cited", [])) if sid not in last]
    chosen, used = [], 0
    for s in as_sources(ledger, [*last, *older]):
        cost = estimate_tokens(s["text"])
        if used + cost <= budget:
            chosen.append(s)
            used += cost
    return chosen


async def retrieve(state: ChatState, runtime: Runtime[GraphDeps]) -> dict:
    """Set documents (numbered by the thread's ledger) and fresh_ids, following the context decision."""
    deps = runtime.context
    decision = state.get("context_decision", {}).get("decision", "fresh")
    scope = state.get("targeted_documents") or None
    fresh = (
        []
        if decision == "reuse"
        else await deps.retriever.search(state["rewritten_query"], deps.settings.retrieval_top_k, scope)
    )
    if not state.get("use_memory", True):
        return {"documents": fresh, "fresh_ids": [s["id"] for s in fresh]}
    carried = carried_sources(state, deps.settings.memory_context_budget) if decision != "fresh" else []
    fresh = assign_ids(state.get("ledger", {}), fresh)
    context = assign_ids(state.get("ledger", {}), [*fresh, *carried])
    return {"documents": context, "fresh_ids": [s["id"] for s in fresh]}
