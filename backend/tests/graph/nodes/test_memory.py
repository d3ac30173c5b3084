from langchain_core.messages import AIMessage, HumanMessage

from backend.graph.nodes.memory import remember
from backend.memory.ledger import source_key
from backend.tests.fakes import runtime, source

DOCS = [source("S3", "Policy.pdf", "Notice is 2 months."), source("S4", "faq.md", "Parking is free.")]


def state(**extra) -> dict:
    return {
        "question": "@Policy.pdf notice?",
        "rewritten_query": "notice period",
        "intent": "rag",
        "documents": DOCS,
        "fresh_ids": ["S3", "S4"],
        "targeted_documents": ["Policy.pdf"],
        **extra,
    }


async def test_remember_stores_original_question_and_answer_with_cited_sources_only():
    out = await remember(state(answer="Two months [S3]."), runtime())
    human, ai = out["messages"]
    assert isinstance(human, HumanMessage) and human.text == "@Policy.pdf notice?"
    assert isinstance(ai, AIMessage) and ai.text == "Two months [S3]."
    assert [s["id"] for s in out["sources"]] == ["S3"]
    assert "text" not in ai.additional_kwargs["sources"][0]


async def test_remember_removes_citations_to_unknown_sources():
    out = await remember(state(answer="Two months [S3][S9]. Free parking [S12] ."), runtime())
    assert out["answer"] == "Two months [S3]. Free parking."
    assert out["validation"]["citations"] == {"cited": ["S3"], "removed": ["S9", "S12"]}


async def test_remember_when_nothing_cited_lists_fresh_sources_as_uncited():
    out = await remember(state(answer="Two months."), runtime())
    assert [(s["id"], s["cited"]) for s in out["sources"]] == [("S3", False), ("S4", False)]


async def test_remember_updates_ledger_context_cited_index_scope():
    out = await remember(state(answer="Two months [S3].", ledger={"S1": {"key": "k"}}, cited=["S1"]), runtime())
    assert set(out["ledger"]) == {"S1", "S3", "S4"} and out["ledger"]["S3"]["key"] == source_key(DOCS[0])
    assert out["last_context"] == ["S3", "S4"] and out["cited"] == ["S1", "S3"]
    entry = out["qa_index"][-1]
    assert entry["id"] == 1 and entry["sources"] == ["S3"] and "notice" in entry["topics"]
    assert out["scope"] == ["Policy.pdf"] and out["last_intent"] == "rag" and out["last_query"] == "notice period"


async def test_remember_with_memory_off_writes_nothing_but_the_answer_and_its_record():
    out = await remember(state(answer="Two months [S3].", use_memory=False), runtime())
    assert set(out) == {"answer", "sources", "validation", "turn_record", "steps"}
    assert out["turn_record"]["use_memory"] is False and out["turn_record"]["answer"] == "Two months [S3]."
