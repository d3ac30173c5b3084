"""retriever: build the turn's context: fresh passages, the previous turn's sources, older cited ones."""

from langchain_core.messages import HumanMessage
from langgraph.runtime import Runtime

from backend.graph.deps import GraphDeps
from backend.graph.prompts import QUERY_VARIANTS
from backend.graph.state import ChatState, Source
from backend.memory.ledger import as_sources, assign_ids
from backend.rag.chunking import estimate_tokens
from backend.rag.ingestion import hostile


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


def drop_hostile(sources: list[Source]) -> tuple[list[Source], list[str]]:
    """Passages without instructions aimed at the model, and the documents of the ones dropped."""
    kept = [s for s in sources if not hostile(s["text"])]
    return kept, [s["document"] for s in sources if s not in kept]


async def variants(query: str, deps: GraphDeps) -> list[str]:
    """Other phrasings of the query from one model call, when multi-query expansion is on (off by default)."""
    n = deps.settings.multi_query
    if n <= 0:
        return []
    reply = await deps.chat_model.ainvoke([HumanMessage(content=QUERY_VARIANTS.format(n=n, question=query))])
    lines = [ln.strip(" -*\t\"'") for ln in reply.text.splitlines()]
    return [ln for ln in lines if ln and ln.lower() != query.lower() and len(ln) < 300][:n]


async def retrieve(state: ChatState, runtime: Runtime[GraphDeps]) -> dict:
    """Set documents (numbered by the thread's ledger) and fresh_ids, following the context decision."""
    deps = runtime.context
    decision = state.get("context_decision", {}).get("decision", "fresh")
    scope = state.get("targeted_documents") or None
    fresh: list[Source] = []
    if decision != "reuse":
        query = state["rewritten_query"]
        fresh = await deps.retriever.search(query, deps.settings.retrieval_top_k, scope, await variants(query, deps))
    fresh, dropped = drop_hostile(fresh)
    if not state.get("use_memory", True):
        return {"documents": fresh, "fresh_ids": [s["id"] for s in fresh], "dropped": dropped}
    carried = carried_sources(state, deps.settings.memory_context_budget) if decision != "fresh" else []
    fresh = assign_ids(state.get("ledger", {}), fresh)
    context = assign_ids(state.get("ledger", {}), [*fresh, *carried])
    return {"documents": context, "fresh_ids": [s["id"] for s in fresh], "dropped": dropped}
