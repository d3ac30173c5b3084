"""memory: settle the answer's citations and commit the finished turn; the only node that writes memory.

Contract: reads the whole turn; writes `answer`, `sources`, `validation.citations`, `turn_record` (the turn as
the thread page and the export show it, committed in the same transaction as this checkpoint) and, with memory
on, every memory layer (messages, ledger, last_context, cited, qa_index, scope, last_intent, last_query).
"""

import time

from langchain_core.messages import AIMessage, HumanMessage
from langgraph.runtime import Runtime

from backend.clock import now
from backend.contract.citations import CITATION_RE, cited_ids, tidy
from backend.contract.types import CitationCheck, Scope, Source, TurnRecord, UnsupportedClaim, Validation, public
from backend.graph.deps import GraphDeps
from backend.graph.report import report
from backend.graph.state import ChatState, TranscriptEntry
from backend.memory.followup import entities
from backend.memory.ledger import drop_unknown_citations, entries
from backend.rag.terms import fts_query

NODE = "memory"
ANSWER_PREVIEW_CHARS = 300


def settle_citations(state: ChatState) -> tuple[str, list[Source], CitationCheck]:
    """The answer without citations to unknown sources, the sources it cites, and what was done."""
    docs = state.get("documents", [])
    known = {d["id"] for d in docs}
    answer, removed = drop_unknown_citations(state.get("answer", ""), known)
    cited = cited_ids(answer)
    by_id = {d["id"]: d for d in docs}
    sources = [by_id[i] for i in cited]
    if not sources and state.get("intent") == "rag":  # the model cited nothing: show what it was given
        fresh = set(state.get("fresh_ids", []))
        sources = [Source(**{**d, "cited": False}) for d in docs if d["id"] in fresh]  # type: ignore[typeddict-item]
    return answer, sources, CitationCheck(cited=cited, removed=removed)


def topics(question: str, query: str) -> list[str]:
    """A few topic tags for the Q&A index: entities first, then content words of the query."""
    words = [w.strip('"') for w in (fts_query(query) or "").split(" OR ")]
    return list(dict.fromkeys([*entities(f"{question} {query}"), *words]))[:5]


def unsupported_spans(sentences: list[str], answer: str) -> list[UnsupportedClaim]:
    """Where each unsupported sentence (markers removed) is in the final answer; ones no longer there are left out."""
    spans, cursor = [], 0
    for sentence in sentences:
        bare = tidy(CITATION_RE.sub("", sentence))
        at = answer.find(bare, cursor)
        if bare and at >= 0:
            spans.append(UnsupportedClaim(text=bare, start=at, end=at + len(bare)))
            cursor = at + len(bare)
    return spans


def final_validation(state: ChatState, answer: str, citations: CitationCheck) -> Validation:
    """The turn's validation with the citations settled and unsupported claims located in the final answer."""
    validation = Validation(**{**state.get("validation", {}), "citations": citations})  # type: ignore[typeddict-item]
    if sources := validation.get("sources"):
        spans = unsupported_spans(sources["unsupported_sentences"], answer) if not sources.get("not_found") else []
        validation["sources"] = {**sources, "unsupported": spans}
    return validation


def turn_scope(state: ChatState) -> Scope | None:
    """The documents this turn's search was limited to, and why (None: it searched every readable document)."""
    source, documents = state.get("scope_source", "none"), state.get("targeted_documents", [])
    if state.get("intent") != "rag" or not documents or source not in ("mention", "carried"):
        return None
    return Scope(documents=list(documents), source=source)


def turn_record(state: ChatState, deps: GraphDeps, answer: str, sources: list[Source], citations: dict) -> TurnRecord:
    """The finished turn as it is stored and shown."""
    validation = final_validation(state, answer, citations)  # type: ignore[arg-type]
    return TurnRecord(
        run_id=state.get("run_id", ""),
        question=state["question"],
        answer=answer,
        rewritten_query=state.get("rewritten_query", state["question"]),
        intent=state.get("intent", "chat"),
        route_reason=state.get("route_reason", ""),
        scope=turn_scope(state),
        sources=[public(s) for s in sources],
        steps=list(state.get("steps", [])),
        triage=state.get("triage") or None,
        validation=validation,  # type: ignore[typeddict-item]
        provider=deps.provider,
        model=deps.model_name,
        latency_ms=round((time.time() - state.get("started_at", time.time())) * 1000, 1),
        use_memory=state.get("use_memory", True),
        status="completed",
        created_at=now(),
    )


def memory_layers(state: ChatState, answer: str, sources: list[Source], cited: list[str]) -> dict:
    """The exchange appended to every memory layer."""
    message = AIMessage(
        content=answer, additional_kwargs={"sources": [public(s) for s in sources], "query": state["rewritten_query"]}
    )
    index, docs = state.get("qa_index", []), state.get("documents", [])
    rag = state.get("intent") == "rag"
    line = {
        "id": len(index) + 1,
        "question": state["question"],
        "query": state.get("rewritten_query", ""),
        "topics": topics(state["question"], state.get("rewritten_query", "")),
        "sources": cited,
        "answer": answer[:ANSWER_PREVIEW_CHARS],
    }
    window = {"window_start": state.get("window_start", 0), "window_note": state.get("window_note", "")}
    sent = state.get("sent") or {"prompt": state["question"], "sources": [], **window}  # no generator: as it was
    entry = TranscriptEntry(question=state["question"], prompt=sent["prompt"], answer=answer, sources=sent["sources"])
    return {
        "transcript": [*state.get("transcript", []), entry],
        "window_start": sent["window_start"],
        "window_note": sent["window_note"],
        "messages": [HumanMessage(content=state["question"]), message],
        "ledger": {**state.get("ledger", {}), **entries(docs)},
        "last_context": [d["id"] for d in docs] if rag else state.get("last_context", []),
        "cited": list(dict.fromkeys([*state.get("cited", []), *cited])),
        "qa_index": [*index, line],
        "scope": state.get("targeted_documents", []) if rag else state.get("scope", []),
        "last_intent": state.get("intent", "chat"),
        "last_query": state.get("rewritten_query", ""),
        "last_base_query": state.get("base_query") or state.get("rewritten_query", ""),
    }


async def remember(state: ChatState, runtime: Runtime[GraphDeps]) -> dict:
    """Set the final answer, sources and turn record; with memory on, append the exchange to memory."""
    answer, sources, citations = settle_citations(state)
    record = turn_record(state, runtime.context, answer, sources, citations)
    out: dict = {
        "answer": answer,
        "sources": sources,
        "validation": record["validation"],
        "turn_record": record,
        **report(runtime, NODE),
    }
    if state.get("use_memory", True):
        out |= memory_layers(state, answer, sources, citations["cited"])
    return out
