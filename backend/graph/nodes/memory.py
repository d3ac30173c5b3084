"""memory: settle the answer's citations and commit the finished turn; the only node that writes memory."""

from langchain_core.messages import AIMessage, HumanMessage
from langgraph.runtime import Runtime

from backend.graph.deps import GraphDeps
from backend.graph.state import ChatState, Source
from backend.memory.followup import entities
from backend.memory.ledger import cited_ids, drop_unknown_citations, entries
from backend.rag.index import fts_query

ANSWER_PREVIEW_CHARS = 300


def settle_citations(state: ChatState) -> tuple[str, list[Source], dict]:
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
    return answer, sources, {"cited": cited, "removed": removed}


def topics(question: str, query: str) -> list[str]:
    """A few topic tags for the Q&A index: entities first, then content words of the query."""
    words = [w.strip('"') for w in (fts_query(query) or "").split(" OR ")]
    return list(dict.fromkeys([*entities(f"{question} {query}"), *words]))[:5]


async def remember(state: ChatState, runtime: Runtime[GraphDeps]) -> dict:
    """Set the final answer and sources; with memory on, append the exchange to every memory layer."""
    answer, sources, citations = settle_citations(state)
    out: dict = {
        "answer": answer,
        "sources": sources,
        "validation": {**state.get("validation", {}), "citations": citations},
    }
    if not state.get("use_memory", True):
        return out
    public = [{k: v for k, v in s.items() if k != "text"} for s in sources]
    message = AIMessage(content=answer, additional_kwargs={"sources": public, "query": state.get("rewritten_query")})
    index = state.get("qa_index", [])
    docs = state.get("documents", [])
    rag = state.get("intent") == "rag"
    out |= {
        "messages": [HumanMessage(content=state["question"]), message],
        "ledger": {**state.get("ledger", {}), **entries(docs)},
        "last_context": [d["id"] for d in docs] if rag else state.get("last_context", []),
        "cited": list(dict.fromkeys([*state.get("cited", []), *citations["cited"]])),
        "qa_index": [
            *index,
            {
                "id": len(index) + 1,
                "question": state["question"],
                "query": state.get("rewritten_query", ""),
                "topics": topics(state["question"], state.get("rewritten_query", "")),
                "sources": citations["cited"],
                "answer": answer[:ANSWER_PREVIEW_CHARS],
            },
        ],
        "scope": state.get("targeted_documents", []) if rag else state.get("scope", []),
        "last_intent": state.get("intent", "chat"),
        "last_query": state.get("rewritten_query", ""),
    }
    return out
