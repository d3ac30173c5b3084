from langchain_core.messages import AIMessage, HumanMessage, SystemMessage

from backend.graph.nodes.generator import generate
from backend.graph.prompts import system_prompt
from backend.llm.fake import ScriptedChatModel
from backend.settings import Settings
from backend.tests.fakes import runtime, source

DOCS = [source("S1", "Policy.pdf", "The notice period is 30 days. Contractors give 7 days.")]


# an earlier turn whose prompt showed S1: the window holds that passage already
SHOWN_S1 = [
    {
        "question": "q",
        "prompt": "<knowledge_base>\n[S1] Policy.pdf\nThe notice period is 30 days.\n</knowledge_base>\n\nQuestion: q",
        "answer": "30 days [S1].",
        "sources": ["S1"],
    }
]


def transcript(turns: int) -> list[dict]:
    return [
        {"question": f"question {i}", "prompt": f"Question: question {i}", "answer": f"answer {i}", "sources": []}
        for i in range(turns)
    ]


async def test_generate_with_documents_sends_system_then_earlier_turns_as_sent_then_new_passages():
    model = ScriptedChatModel()
    state = {"question": "What is the notice period?", "intent": "rag", "documents": DOCS, "transcript": transcript(1)}
    out = await generate(state, runtime(model))
    sent = model.calls[0]
    default_style = Settings.model_fields["prompt_style"].default
    assert isinstance(sent[0], SystemMessage) and sent[0].text == system_prompt(default_style)
    assert [type(m) for m in sent[1:3]] == [HumanMessage, AIMessage]
    assert [m.text for m in sent[1:3]] == ["Question: question 0", "answer 0"]
    assert sent[-1].text.startswith("<knowledge_base>\n[S1] Policy.pdf\n")
    assert sent[-1].text.endswith("Question: What is the notice period?")
    assert out["answer"] == "According to the documents: The notice period is 30 days [S1]."
    assert out["sent"] == {"prompt": sent[-1].text, "sources": ["S1"], "window_start": 0, "window_note": ""}


async def test_the_model_reads_an_at_mention_as_the_name_of_the_document_it_aims_at():
    model = ScriptedChatModel()
    question = "@policy what is the notice period?"
    state = {"question": question, "intent": "rag", "documents": DOCS, "targeted_documents": ["Policy.pdf"]}
    out = await generate(state, runtime(model))
    assert model.calls[0][-1].text.endswith("Question: what is the notice period? (in Policy.pdf)")
    assert "@policy" not in out["sent"]["prompt"]
    unresolved = {"question": "@nosuch what is X?", "intent": "rag", "documents": DOCS}  # nothing aimed at: as typed
    await generate(unresolved, runtime(model))
    assert model.calls[1][-1].text.endswith("Question: @nosuch what is X?")


async def test_the_model_reads_an_elliptical_follow_up_as_the_whole_question_the_rewriter_made():
    model = ScriptedChatModel()
    whole = "What is the notice period, during probation?"
    state = {"question": "and during probation?", "intent": "rag", "documents": DOCS, "completed_question": whole}
    out = await generate(state, runtime(model))
    assert model.calls[0][-1].text.endswith(f"Question: {whole}")
    aimed = {**state, "question": "@policy and during probation?", "targeted_documents": ["Policy.pdf"]}
    await generate(aimed, runtime(model))
    assert model.calls[1][-1].text.endswith(f"Question: {whole} (in Policy.pdf)")
    assert out["sent"]["prompt"].endswith(whole)  # the transcript keeps what the model read


async def test_passages_the_window_already_shows_are_not_sent_again():
    model = ScriptedChatModel()
    state = {"question": "And for contractors?", "intent": "rag", "documents": DOCS, "transcript": SHOWN_S1}
    out = await generate(state, runtime(model))
    last = model.calls[0][-1].text
    assert "<knowledge_base>" not in last and "sources given earlier" in last and out["sent"]["sources"] == []
    assert "Check your last answer" not in last


async def test_are_you_sure_asks_the_model_to_quote_the_supporting_passage_not_to_say_yes():
    """Tester: "Are you sure?" got a bare "Yes." that states nothing a reader (or the grounding check) can verify."""
    model = ScriptedChatModel()
    clarification = {"is_followup": True, "kind": "clarification", "confidence": 0.9, "reason": "confirm"}
    for question in ["Are you sure?", "Is that right?", "Can you double-check?", "really?", "Can you check that?"]:
        state = {"question": question, "intent": "rag", "documents": DOCS, "transcript": SHOWN_S1}
        out = await generate({**state, "followup": clarification}, runtime(model))
        assert "Check your last answer against the sources: quote the sentence" in out["sent"]["prompt"], question
        assert out["sent"]["prompt"].endswith(f"Question: {question}")
    # a question of its own, first in its thread (review): nothing to check, so no such rule
    first = {"question": "Can you check the travel policy for the hotel limit?", "intent": "rag", "documents": DOCS}
    out = await generate({**first, "followup": {"is_followup": False, "kind": "new"}}, runtime(model))
    assert "Check your last answer" not in out["sent"]["prompt"]


async def test_generate_when_rag_without_documents_then_says_not_found():
    model = ScriptedChatModel()
    out = await generate({"question": "What is X?", "intent": "rag", "documents": []}, runtime(model))
    assert "No document in the knowledge base matched" in model.calls[0][-1].text
    assert out["answer"] == "That is not in the documents."


async def test_questions_about_the_past_get_the_index_and_memory_off_gets_no_history():
    model = ScriptedChatModel()
    index = [{"id": i, "question": f"q{i}", "topics": ["Zephyr-9"]} for i in (1, 2, 3)]
    state = {
        "question": "What did we discuss earlier?",
        "intent": "chat",
        "transcript": transcript(3),
        "qa_index": index,
    }
    await generate(state, runtime(model))
    last = model.calls[0][-1].text
    assert "#2 [Zephyr-9] q2" in last and last.endswith("What did we discuss earlier?")
    quiet = ScriptedChatModel()
    await generate({**state, "question": "hello", "use_memory": False}, runtime(quiet))
    assert quiet.calls[0][-1].text == "hello" and len(quiet.calls[0]) == 2  # no history, no memory notes


async def test_asked_what_was_said_about_a_subject_the_index_carries_the_answers_given_about_it():
    model = ScriptedChatModel()
    index = [
        {"id": 1, "question": "What is the notice period?", "topics": ["notice"], "answer": "2 months [S1]."},
        {
            "id": 2,
            "question": "and for contractors?",
            "topics": ["contractors"],
            "answer": "Contractors must give 2 weeks of notice unless their agreement says otherwise [S1].",
        },
        {"id": 3, "question": "How long is probation?", "topics": ["probation"], "answer": "6 months [S2]."},
    ]
    state = {"question": "what did you say about contractors earlier?", "intent": "chat", "qa_index": index}
    await generate(state, runtime(model))
    sent = model.calls[0][-1].text
    assert "#2 [contractors] and for contractors?\n   answered: Contractors must give 2 weeks of notice unless " in sent
    assert "[S1]" not in sent and "6 months" not in sent and "2 months" not in sent  # only the exchange asked about


class StopsAtTheLimit(ScriptedChatModel):
    """Fake model whose stream ends as a server's does at max_tokens: a last chunk with finish_reason "length"."""

    async def _astream(self, messages, stop=None, run_manager=None, **kwargs):
        from langchain_core.messages import AIMessageChunk
        from langchain_core.outputs import ChatGenerationChunk

        for token in ("Install ", "the ", "unit ", "and "):
            yield ChatGenerationChunk(message=AIMessageChunk(content=token))
        yield ChatGenerationChunk(message=AIMessageChunk(content=""), generation_info={"finish_reason": "length"})


async def test_an_answer_that_stopped_at_the_length_limit_says_so_in_its_validation():
    state = {"question": "Describe everything.", "intent": "rag", "documents": DOCS}
    out = await generate(state, runtime(StopsAtTheLimit(), max_answer_tokens=4))
    assert out["answer"] == "Install the unit and"
    assert out["validation"] == {"length": {"cut": True, "max_tokens": 4}}
    whole = await generate(state, runtime(ScriptedChatModel()))
    assert "validation" not in whole  # a model that stopped by itself


async def test_the_index_carries_only_the_latest_answers_about_the_subject_so_a_long_thread_still_fits():
    model = ScriptedChatModel()
    index = [
        {"id": i, "question": f"Zephyr-9 question {i}?", "topics": ["Zephyr-9"], "answer": f"Zephyr-9 answer {i} [S1]."}
        for i in range(1, 8)
    ]
    await generate(
        {"question": "what did you say about the Zephyr-9?", "intent": "chat", "qa_index": index}, runtime(model)
    )
    sent = model.calls[0][-1].text
    assert [i for i in range(1, 8) if f"answered: Zephyr-9 answer {i}." in sent] == [5, 6, 7]  # markers tidied away
