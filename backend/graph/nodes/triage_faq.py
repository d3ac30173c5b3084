"""triage_faq: a confident match in the curated FAQ (RAG_FAQ_PATH) is answered at once, without the model.

The answer cites the passage of each of the entry's documents that states it (the closest to the curated answer),
so a reader opens it in one click as for a model's answer, and the citation ledger numbers it for follow-ups.

Contract: reads `question`, `mode`, `triage`, `ledger`; on a match writes `answer` (the entry's, with the markers
of its passages), `documents` and `fresh_ids` (those passages), `intent` "rag" and `route_reason` when it found
any, and `triage` {route "faq", skip_llm, early_response, faq: {id, matched, score, sources}}.
"""

from langgraph.runtime import Runtime

from backend.contract.types import Source
from backend.graph.deps import GraphDeps
from backend.graph.report import report
from backend.graph.state import ChatState
from backend.graph.triage import decided, log, short_circuit
from backend.guardrails.faq import FaqEntry, match_faq
from backend.memory.ledger import assign_ids

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
    passages = await faq_passages(match.entry, state, runtime)
    markers = "".join(f"[{p['id']}]" for p in passages)
    answer = f"{match.entry.answer} {markers}" if markers else match.entry.answer
    out = short_circuit(NODE, "faq", answer, f"ANSWERED ({match.entry.id})")
    out |= {"documents": passages, "fresh_ids": [p["id"] for p in passages]}
    if passages:  # an answer from the documents: a follow-up ("Are you sure?") goes on from its passages
        out |= {"intent": "rag", "route_reason": f"answered from the FAQ ({match.entry.id})"}
    out["triage"]["faq"] = {
        "id": match.entry.id,
        "matched": match.question,
        "score": round(match.score, 3),
        "sources": list(match.entry.sources),
    }
    return {**out, **report(runtime, NODE, "Answered from the FAQ", match.entry.id)}


async def faq_passages(entry: FaqEntry, state: ChatState, runtime: Runtime[GraphDeps]) -> list[Source]:
    """For each of the entry's documents, its passage closest to the curated answer (a document's opening,
    which a search aimed at it always includes, only when nothing else matched), numbered by the thread's ledger.
    A document not in the knowledge base gives none."""
    found: list[Source] = []
    for document in entry.sources:
        hits = await runtime.context.retriever.search(entry.answer, 3, [document])
        if hits:
            found.append(max(hits, key=lambda h: (h.get("relevance") or -1.0, -hits.index(h))))
    return assign_ids(state.get("ledger", {}) if state.get("use_memory", True) else {}, found)
