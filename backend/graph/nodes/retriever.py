"""retriever: build the turn's context: fresh passages, the previous turn's sources, older cited ones; a follow-up whose
carried scope holds nothing on its subject searches every document instead (and the scope ends)."""

from langchain_core.messages import HumanMessage
from langgraph.runtime import Runtime

from backend.contract.text import strip_mentions
from backend.contract.types import Source
from backend.graph.deps import GraphDeps
from backend.graph.history import shown_ids
from backend.graph.model import chat_model
from backend.graph.prompts import QUERY_VARIANTS
from backend.graph.report import progress, report
from backend.graph.state import ChatState
from backend.memory.followup import new_subject_search
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


SHOWN_QUERY_CHARS = 90


def searched_for(state: ChatState) -> str:
    """' for “…”' naming the query a follow-up is searched as, when it is not the question as typed ("and for
    capital cities?" is searched as "What is the hotel limit per night, for capital cities?"); "" otherwise, and
    for a clarification, which searches nothing new."""
    query = state.get("rewritten_query") or ""
    reused = (state.get("context_decision") or {}).get("decision") == "reuse"
    if reused or not query or query.strip() == strip_mentions(state.get("question", "")).strip():
        return ""
    shown = query if len(query) <= SHOWN_QUERY_CHARS else query[: SHOWN_QUERY_CHARS - 1].rstrip() + "…"
    return f" for “{shown}”"


async def retrieve(state: ChatState, runtime: Runtime[GraphDeps]) -> dict:
    """Set documents (numbered by the thread's ledger) and fresh_ids, following the context decision."""
    scope, searched = state.get("targeted_documents") or None, searched_for(state)
    if scope or searched:
        progress(runtime, NODE, f"Searching {', '.join(scope) if scope else 'documents'}{searched}…")
    out = await _context(state, runtime, scope)
    dropped = out["dropped"]
    label = f"Ignored {len(dropped)} passage(s) containing instructions aimed at the model" if dropped else None
    note = f"; dropped {len(dropped)} passage(s) that give the model instructions: {', '.join(dropped)}"
    # what this search found first, as the answer's sources list them when it cites none ("3 passages found ·
    # none cited" under "Sources (3)"); passages carried from earlier turns after it (tester: "6 passages found"
    # over a list of 4)
    count, earlier = len(out["fresh_ids"]), len(out["documents"]) - len(out["fresh_ids"])
    detail = f"{count} passage{'' if count == 1 else 's'}" + (f", and {earlier} from earlier turns" if earlier else "")
    detail += note if dropped else ""
    return {**out, **report(runtime, NODE, label, detail)}


async def _fresh(state: ChatState, runtime: Runtime[GraphDeps], scope: list[str] | None) -> tuple[list[Source], dict]:
    """The search's passages, and what changes when a follow-up leaves the scope it carried: a carried scope is
    kept only while its documents are among the best passages of the whole search, so a follow-up on another
    subject ("and what are the core hours?" after "@travel-policy …") is not answered from the wrong document."""
    deps, query = runtime.context, state["rewritten_query"]
    subject, anchors = new_subject_search(query)
    k, extra = deps.settings.retrieval_top_k, [*([subject] if subject else []), *await variants(query, runtime)]
    if not scope or state.get("scope_source") != "carried":
        return await deps.retriever.search(query, k, scope, extra, anchors), {}
    everywhere = await deps.retriever.search(query, k, None, extra, anchors)
    if not everywhere or any(s["document"] in scope for s in everywhere):
        return await deps.retriever.search(query, k, scope, extra, anchors), {}
    names = ", ".join(scope)
    progress(runtime, NODE, f"Nothing on this in {names}: searching every document…")
    reason = f"{state.get('route_reason', '')}; nothing in {names} matched, so every document was searched"
    return everywhere, {"targeted_documents": [], "scope_source": "none", "route_reason": reason}


async def _context(state: ChatState, runtime: Runtime[GraphDeps], scope: list[str] | None) -> dict:
    deps = runtime.context
    decision = state.get("context_decision", {}).get("decision", "fresh")
    memory = state.get("use_memory", True)
    carried = carried_sources(state, deps.settings.memory_context_budget) if decision != "fresh" and memory else []
    # a document the asker lost access to is not read again, nor a passage of a file replaced since
    current = await deps.retriever.current(readable_only(carried, deps.readable))
    fresh: list[Source] = []
    left: dict = {}  # the carried scope left behind, when it was
    if decision != "reuse" or len(current) < len(carried):  # "Check the mileage rate again" after a new version
        fresh, left = await _fresh(state, runtime, scope)
    fresh, dropped = drop_hostile(fresh)
    if not memory:
        return {"documents": fresh, "fresh_ids": [s["id"] for s in fresh], "dropped": dropped, **left}
    ledger = state.get("ledger", {})
    fresh = assign_ids(ledger, fresh)
    context = assign_ids(ledger, [*fresh, *current])
    shown = as_sources(ledger, sorted(shown_ids(state, deps.settings), key=lambda i: int(i[1:])))
    shown = await deps.retriever.current(readable_only(shown, deps.readable))
    in_view = [s for s in shown if s["id"] not in {c["id"] for c in context}]
    return {"documents": [*context, *in_view], "fresh_ids": [s["id"] for s in fresh], "dropped": dropped, **left}
