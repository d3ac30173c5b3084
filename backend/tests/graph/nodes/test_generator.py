from langchain_core.messages import AIMessage, HumanMessage, SystemMessage

from backend.graph.nodes.generator import generate
from backend.graph.prompts import SYSTEM_PROMPT
from backend.llm.fake import ScriptedChatModel
from backend.tests.fakes import runtime, source

DOCS = [source("S1", "Policy.pdf", "The notice period is 30 days. Contractors give 7 days.")]


def history(turns: int) -> list:
    return [m for i in range(turns) for m in (HumanMessage(f"question {i}"), AIMessage(f"answer {i}"))]


async def test_generate_with_documents_then_knowledge_base_after_history_and_citations():
    model = ScriptedChatModel()
    state = {"question": "What is the notice period?", "intent": "rag", "documents": DOCS, "messages": history(1)}
    out = await generate(state, runtime(model))
    sent = model.calls[0]
    assert isinstance(sent[0], SystemMessage) and sent[0].text == SYSTEM_PROMPT
    assert [m.text for m in sent[1:3]] == ["question 0", "answer 0"]
    assert sent[-1].text.startswith("<knowledge_base>\n[S1] Policy.pdf\n")
    assert sent[-1].text.endswith("Question: What is the notice period?")
    assert out == {"answer": "According to the documents: The notice period is 30 days [S1]."}


async def test_generate_when_rag_without_documents_then_says_not_found_and_no_sources():
    model = ScriptedChatModel()
    out = await generate({"question": "What is X?", "intent": "rag", "documents": []}, runtime(model))
    assert "No document in the knowledge base matched" in model.calls[0][-1].text
    assert out == {"answer": "That is not in the documents."}


async def test_generate_history_window_is_sliding_and_prefix_byte_stable():
    model = ScriptedChatModel()
    rt = runtime(model, history_turns=2)
    await generate({"question": "a", "intent": "chat", "messages": history(2)}, rt)
    await generate({"question": "b", "intent": "chat", "messages": history(3)}, rt)
    first, second = model.calls
    assert [m.text for m in first[1:-1]] == ["question 0", "answer 0", "question 1", "answer 1"]
    assert [m.text for m in second[1:-1]] == ["question 1", "answer 1", "question 2", "answer 2"]
    again = ScriptedChatModel()
    await generate({"question": "c", "intent": "rag", "documents": DOCS, "messages": history(2)}, runtime(again))
    assert [m.text for m in again.calls[0][:-1]] == [m.text for m in first[:-1]]


async def test_generate_adds_summary_beyond_window_and_index_for_questions_about_the_past():
    model = ScriptedChatModel()
    index = [{"id": i, "question": f"q{i}", "topics": ["Zephyr-9"]} for i in (1, 2, 3)]
    state = {
        "question": "What did we discuss earlier?",
        "intent": "chat",
        "messages": history(3),
        "summary": "User asked about servicing; corrected: only the Zephyr-9.",
        "qa_index": index,
    }
    await generate(state, runtime(model, history_turns=2))
    last = model.calls[0][-1].text
    assert "<conversation_summary>" in last and "only the Zephyr-9" in last
    assert "#2 [Zephyr-9] q2" in last and last.endswith("What did we discuss earlier?")
    quiet = ScriptedChatModel()
    await generate({**state, "question": "hello", "use_memory": False}, runtime(quiet, history_turns=2))
    assert quiet.calls[0][-1].text == "hello" and len(quiet.calls[0]) == 2  # no history, no memory notes
