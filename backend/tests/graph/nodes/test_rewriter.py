from langchain_core.messages import AIMessage, HumanMessage, SystemMessage

from backend.graph.nodes.rewriter import clean_rewrite, rewrite
from backend.llm.fake import ScriptedChatModel
from backend.tests.fakes import replying, runtime

HISTORY = [HumanMessage("How often is the Zephyr-9 serviced?"), AIMessage("Every 12 months [S1].")]


async def test_rewrite_when_first_turn_then_no_llm_call_and_mentions_stripped():
    model = ScriptedChatModel()
    out = await rewrite({"question": "@Policy.pdf what is the notice period?", "messages": []}, runtime(model))
    assert out == {"rewritten_query": "what is the notice period?"}
    assert model.calls == []


async def test_rewrite_when_history_then_one_call_with_stable_prefix():
    model = ScriptedChatModel()
    await rewrite({"question": "how much does it cost?", "messages": HISTORY}, runtime(model))
    assert len(model.calls) == 1
    sent = model.calls[0]
    assert isinstance(sent[0], SystemMessage)
    assert [m.text for m in sent[1:3]] == [m.text for m in HISTORY]
    assert "how much does it cost?" in sent[-1].text


async def test_rewrite_uses_model_answer_as_query():
    model = replying("How much does servicing a Zephyr-9 cost?")
    out = await rewrite({"question": "how much does it cost?", "messages": HISTORY}, runtime(model))
    assert out["rewritten_query"] == "How much does servicing a Zephyr-9 cost?"


def test_clean_rewrite_strips_labels_quotes_and_rejects_rambling():
    assert clean_rewrite('Standalone question: "What is X?"\nextra', "q") == "What is X?"
    assert clean_rewrite("", "fallback") == "fallback"
    assert clean_rewrite("x" * 500, "short") == "short"
