import time

from langchain_core.messages import HumanMessage

from backend.llm.fake import CONVERSATIONAL_REPLY, INVENT_TRIGGER, INVENTED_CLAIM, ScriptedChatModel, best_sentence


def kb(question: str) -> HumanMessage:
    body = "[S1] a.md\nCats sleep a lot. Dogs bark loudly.\n\n[S2] b.md, page 2\nThe Zephyr-9 costs 240 euros."
    return HumanMessage(f"<knowledge_base>\n{body}\n</knowledge_base>\n\nQuestion: {question}")


async def test_fake_quotes_best_sentence_of_each_source_with_marker():
    model = ScriptedChatModel()
    reply = await model.ainvoke([kb("Why do dogs bark?")])
    assert reply.text == "According to the documents: Dogs bark loudly [S1]. The Zephyr-9 costs 240 euros [S2]."


async def test_fake_adds_an_invented_claim_only_when_the_question_asks_for_it():
    model = ScriptedChatModel()
    plain = await model.ainvoke([kb("Why do dogs bark?")])
    invented = await model.ainvoke([kb(f"Why do dogs bark? {INVENT_TRIGGER}")])
    assert INVENTED_CLAIM not in plain.text
    assert invented.text.endswith(INVENTED_CLAIM)


async def test_fake_streams_word_by_word_at_configured_rate():
    model = ScriptedChatModel(tokens_per_second=100)
    start = time.perf_counter()
    chunks = [c.text async for c in model.astream([HumanMessage("hi")]) if c.text]
    elapsed = time.perf_counter() - start
    assert "".join(chunks) == CONVERSATIONAL_REPLY
    assert len(chunks) == len(CONVERSATIONAL_REPLY.split())
    assert elapsed >= (len(chunks) - 1) / 100


def test_best_sentence_skips_headings_and_prefers_overlap():
    assert best_sentence("# Title\n\nAlpha beta. Gamma delta zephyr.", "zephyr gamma") == "Gamma delta zephyr."
