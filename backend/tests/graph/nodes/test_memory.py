from langchain_core.messages import AIMessage, HumanMessage

from backend.graph.nodes.memory import remember
from backend.tests.fakes import runtime, source


async def test_remember_stores_original_question_and_answer_with_sources_without_text():
    state = {
        "question": "@Policy.pdf notice?",
        "rewritten_query": "notice?",
        "answer": "30 days [S1].",
        "sources": [source("S1", "Policy.pdf", "long text")],
    }
    out = await remember(state, runtime())
    human, ai = out["messages"]
    assert isinstance(human, HumanMessage) and human.text == "@Policy.pdf notice?"
    assert isinstance(ai, AIMessage) and ai.text == "30 days [S1]."
    assert ai.additional_kwargs["sources"][0]["document"] == "Policy.pdf"
    assert "text" not in ai.additional_kwargs["sources"][0]
    assert ai.additional_kwargs["rewritten_query"] == "notice?"
