import pytest
from langchain_core.messages import AIMessage, HumanMessage, SystemMessage

from backend.graph.nodes.rewriter import clean_rewrite, rewrite
from backend.llm.fake import ScriptedChatModel
from backend.memory.followup import FollowUp, detect
from backend.tests.fakes import FakeRetriever, replying, runtime

HISTORY = [HumanMessage("How often is the Zephyr-9 serviced?"), AIMessage("Every 12 months [S1].")]
HISTORY_TEXT = " ".join(m.text for m in HISTORY)


TRANSCRIPT = [
    {
        "question": "How often is the Zephyr-9 serviced?",
        "prompt": "<knowledge_base>\n[S1] manual.md\nService every 12 months.\n</knowledge_base>\n\nQuestion: "
        "How often is the Zephyr-9 serviced?",
        "answer": "Every 12 months [S1].",
        "sources": ["S1"],
    }
]


def followup_state(question: str, **extra) -> dict:
    return {
        "question": question,
        "messages": HISTORY,
        "transcript": TRANSCRIPT,
        "followup": detect(question, HISTORY_TEXT).as_dict(),
        "last_query": "How often is the Zephyr-9 serviced?",
        "last_context": ["S1"],
        **extra,
    }


async def test_rewrite_when_first_turn_then_no_llm_call_mentions_stripped_and_fresh():
    model = ScriptedChatModel()
    out = await rewrite({"question": "@Policy.pdf what is the notice period?", "messages": []}, runtime(model))
    assert out["rewritten_query"] == "what is the notice period?"
    assert out["context_decision"]["decision"] == "fresh"
    assert model.calls == []


async def test_rewrite_when_reference_followup_by_default_then_no_llm_call_and_entity_added():
    model = ScriptedChatModel()
    out = await rewrite(followup_state("how much does it cost?"), runtime(model))
    assert model.calls == []
    assert out["rewritten_query"] == "how much does it cost? (Zephyr-9)"
    assert out["context_decision"]["decision"] == "both"


async def test_rewrite_when_reference_followup_and_model_rewrites_then_one_call_with_stable_prefix_and_both():
    model = ScriptedChatModel()
    out = await rewrite(followup_state("how much does it cost?"), runtime(model, rewrite_with_model=True))
    assert len(model.calls) == 1
    sent = model.calls[0]
    assert isinstance(sent[0], SystemMessage)
    assert [m.text for m in sent[1:3]] == [TRANSCRIPT[0]["prompt"], TRANSCRIPT[0]["answer"]]  # the generator's prefix
    assert "how much does it cost?" in sent[-1].text
    assert out["context_decision"]["decision"] == "both"


async def test_rewrite_keeps_model_answer_and_adds_lost_entity():
    good = await rewrite(
        followup_state("how much does it cost?"),
        runtime(replying("How much does a Zephyr-9 service cost?"), rewrite_with_model=True),
    )
    assert good["rewritten_query"] == "How much does a Zephyr-9 service cost?"
    vague = await rewrite(
        followup_state("how much does it cost?"), runtime(replying("How much does it cost?"), rewrite_with_model=True)
    )
    assert vague["rewritten_query"] == "How much does it cost? (Zephyr-9)"


async def test_rewrite_when_clarification_then_reuse_previous_query_without_llm():
    model = ScriptedChatModel()
    out = await rewrite(followup_state("Are you sure?"), runtime(model))
    assert out["rewritten_query"] == "How often is the Zephyr-9 serviced?"
    assert out["context_decision"]["decision"] == "reuse"
    assert model.calls == []


async def test_rewrite_when_new_topic_then_fresh_without_llm():
    model = ScriptedChatModel()
    out = await rewrite(followup_state("What does the IT Security Policy say about VPN passwords?"), runtime(model))
    assert out["context_decision"]["decision"] == "fresh" and model.calls == []


async def test_rewrite_when_memory_off_then_passthrough_and_fresh():
    model = ScriptedChatModel()
    out = await rewrite(followup_state("how much does it cost?", use_memory=False), runtime(model))
    assert out["context_decision"]["decision"] == "fresh" and out["rewritten_query"] == "how much does it cost?"
    assert model.calls == []


def test_clean_rewrite_strips_labels_quotes_and_rejects_rambling():
    assert clean_rewrite('Standalone question: "What is X?"\nextra', "q") == "What is X?"
    assert clean_rewrite("", "fallback") == "fallback"
    assert clean_rewrite("x" * 500, "short") == "short"


async def test_rewrite_when_elliptical_followup_then_completed_from_last_question_without_llm():
    model = ScriptedChatModel()
    state = followup_state("and for a second unit?", last_intent="rag")
    out = await rewrite(state, runtime(model, rewrite_with_model=True))
    assert model.calls == []  # the rule decides; the model rewriter left such fragments as they were
    assert out["completed_question"] == "How often is the Zephyr-9 serviced, for a second unit?"
    assert out["rewritten_query"] == out["completed_question"]
    assert out["base_query"] == "How often is the Zephyr-9 serviced?"  # the next fragment is completed from it
    assert "completed from the last question" in out["steps"][-1]


async def test_rewrite_completes_from_the_base_the_last_completion_kept():
    state = followup_state(
        "and for a third unit?",
        last_intent="rag",
        last_query="How often is the Zephyr-9 serviced, for a second unit?",
        last_base_query="How often is the Zephyr-9 serviced?",
    )
    out = await rewrite(state, runtime(ScriptedChatModel()))
    assert out["completed_question"] == "How often is the Zephyr-9 serviced, for a third unit?"


async def test_a_clarification_keeps_the_base_and_a_new_question_is_its_own():
    model = ScriptedChatModel()
    kept = await rewrite(followup_state("Are you sure?", last_base_query="Base?"), runtime(model))
    assert kept["base_query"] == "Base?"
    own = await rewrite(followup_state("how much does it cost?", last_base_query="Base?"), runtime(model))
    assert own["base_query"] == ""  # the memory node keeps this turn's query


@pytest.mark.parametrize(
    ("why", "extra"),
    [
        ("after a chat turn", {"last_intent": "chat"}),
        ("with memory off", {"last_intent": "rag", "use_memory": False}),
        (
            "when not a reference",
            {"last_intent": "rag", "followup": FollowUp(True, "clarification", 0.9, "").as_dict()},
        ),
    ],
)
async def test_rewrite_does_not_complete(why, extra):
    out = await rewrite(followup_state("and for a second unit?", **extra), runtime(ScriptedChatModel()))
    assert out["completed_question"] == "", why
    assert out["rewritten_query"] != "How often is the Zephyr-9 serviced, for a second unit?", why


async def test_rewrite_does_not_complete_a_question_of_its_own():
    whole = await rewrite(followup_state("how much does it cost?", last_intent="rag"), runtime(ScriptedChatModel()))
    assert whole["completed_question"] == "" and whole["rewritten_query"] == "how much does it cost? (Zephyr-9)"


async def test_a_new_mention_is_searched_without_the_last_topics_names():
    state = followup_state(
        "@travel-policy.pdf how much does it cost?",
        scope_source="mention",
        targeted_documents=["travel-policy.pdf"],
        scope=["zephyr-9-service-manual.md"],
    )
    out = await rewrite(state, runtime(ScriptedChatModel()))
    assert out["rewritten_query"] == "how much does it cost?"  # not "… (Zephyr-9)"
    assert out["context_decision"]["decision"] == "fresh"


async def test_a_question_in_another_language_is_searched_by_its_english_translation_and_not_respelt():
    retriever = FakeRetriever(foreign_words={"combien"}, respellings={"annuel": "annual"})
    model = ScriptedChatModel()  # its translation is for the question as asked, "annuel" and all
    question = "Combien de jours de congé annuel ai-je ?"
    out = await rewrite({"question": question}, runtime(chat_model=model, retriever=retriever))
    assert out["rewritten_query"] == "How many days of annual leave do I get?"
    assert out["completed_question"] == out["rewritten_query"]  # the model reads it too, and answers in English
    assert len(model.calls) == 1 and question in model.calls[0][-1].text
    assert out["context_decision"]["decision"] == "fresh"


async def test_a_misspelt_question_is_searched_respelt_without_a_model_call():
    retriever = FakeRetriever(respellings={"anual": "annual", "leeve": "leave"})
    model = ScriptedChatModel()
    out = await rewrite({"question": "how many days of anual leeve"}, runtime(chat_model=model, retriever=retriever))
    assert out["rewritten_query"] == "how many days of annual leave" and model.calls == []
    assert out["completed_question"] == ""  # the model reads the question as typed


async def test_an_elliptical_follow_up_in_another_language_is_translated_then_completed_from_the_last_question():
    state = followup_state("et pour une deuxième unité ?", last_intent="rag")
    state["followup"] = detect("and for a second unit?", HISTORY_TEXT).as_dict()  # as the router judged it
    retriever = FakeRetriever(foreign_words={"deuxième"})
    out = await rewrite(state, runtime(replying("and for a second unit?"), retriever))
    assert out["completed_question"] == "How often is the Zephyr-9 serviced, for a second unit?"  # review: it was
    assert out["rewritten_query"] == out["completed_question"]  # searched as the bare "And for the interns?"
