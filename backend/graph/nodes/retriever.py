"""retriever: build the turn's context: fresh passages, the previous turn's sources, older cited ones."""

from langchain_core.messages import HumanMessage
from langgraph.runtime import Runtime

from backend.contract.types import Source
from backend.graph.deps import GraphDeps
from backend.graph.history import shown_ids
from backend.graph.model import chat_model
from backend.graph.prompts import QUERY_VARIANTS
from backend.graph.report import progress, report
from backend.graph.state import ChatState
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


def readable_only(sources: list[Source], readable: frozenset[str] | None) -> list[Source]:
    """Sources from the thread's ledger whose document the asker may still read (None: all)."""
    return sources if readable is None else [s for s in sources if s.get("doc_id") in readable]


def drop_hostile(sources: list[Source]) -> tuple[list[Source], list[str]]:
    """Passages without instructions aimed at the model, and the documents of the ones dropped."""
    kept = [s for s in sources if not hostile(s["text"])]
    return kept, [s["document"] for s in sources if s not in kept]


async def variants(query: str, runtime: Runtime[GraphDeps]) -> list[str]:
    """Other phrasings of the query from one model call, when multi-query expansion is on (off by default)."""
    n = runtime.context.settings.multi_query
    if n <= 0:
        return []
    model = await chat_model(runtime, NODE)
    reply = await model.ainvoke([HumanMessage(content=QUERY_VARIANTS.format(n=n, question=query))])
    lines = [ln.strip(" -*\t\"'") for ln in reply.text.splitlines()]
    return [ln for ln in lines if ln and ln.lower() != query.lower() and len(ln) < 300][:n]


NODE = "retriever"


async def retrieve(state: ChatState, runtime: Runtime[GraphDeps]) -> dict:
    """Set documents (numbered by the thread's ledger) and fresh_ids, following the context decision."""
    scope = state.get("targeted_documents") or None
    if scope:
        progress(runtime, NODE, f"Searching {', '.join(scope)}…")
    out = await _context(state, runtime, scope)
    dropped = out["dropped"]
    label = f"Ignored {len(dropped)} passage(s) containing instructions aimed at the model" if dropped else None
    note = f"; dropped {len(dropped)} passage(s) that give the model instructions: {', '.join(dropped)}"
    detail = f"{len(out['documents'])} passages" + (note if dropped else "")
    return {**out, **report(runtime, NODE, label, detail)}


async def _context(state: ChatState, runtime: Runtime[GraphDeps], scope: list[str] | None) -> dict:
    deps = runtime.context
    decision = state.get("context_decision", {}).get("decision", "fresh")
    fresh: list[Source] = []
    if decision != "reuse":
        query = state["rewritten_query"]
        fresh = await deps.retriever.search(query, deps.settings.retrieval_top_k, scope, await variants(query, runtime))
    fresh, dropped = drop_hostile(fresh)
    if not state.get("use_memory", True):
        return {"documents": fresh, "fresh_ids": [s["id"] for s in fresh], "dropped": dropped}
    ledger = state.get("ledger", {})
    carried = carried_sources(state, deps.settings.memory_context_budget) if decision != "fresh" else []
    carried = readable_only(carried, deps.readable)  # a document the asker lost access to is not read again
    fresh = assign_ids(ledger, fresh)
    context = assign_ids(ledger, [*fresh, *carried])
    shown = as_sources(ledger, sorted(shown_ids(state, deps.settings), key=lambda i: int(i[1:])))
    in_view = [s for s in readable_only(shown, deps.readable) if s["id"] not in {c["id"] for c in context}]
    return {"documents": [*context, *in_view], "fresh_ids": [s["id"] for s in fresh], "dropped": dropped}
