"""generator: write the answer from the history window and the numbered sources, streaming tokens."""

from langchain_core.messages import HumanMessage
from langgraph.runtime import Runtime

from backend.graph.deps import GraphDeps
from backend.graph.history import prompt_prefix
from backend.graph.prompts import CONVERSATION_INDEX, CONVERSATION_SUMMARY, KNOWLEDGE_BASE, NO_DOCUMENTS, SOURCE_ENTRY
from backend.graph.state import ChatState, Source
from backend.memory.followup import PAST_CONVERSATION_RE


def format_sources(sources: list[Source]) -> str:
    """The <knowledge_base> body: one entry per source with its marker, document and page."""
    return "\n\n".join(
        SOURCE_ENTRY.format(
            id=s["id"],
            document=s["document"],
            location=f", page {s['page']}" if s.get("page") else "",
            text=s["text"],
        )
        for s in sources
    )


def memory_notes(state: ChatState, turns: int) -> str:
    """Summary of exchanges beyond the history window; the Q&A index when the question is about the past."""
    if not state.get("use_memory", True):
        return ""
    index = state.get("qa_index", [])
    notes = ""
    if state.get("summary") and len(index) > turns:
        notes += CONVERSATION_SUMMARY.format(summary=state["summary"])
    if index and PAST_CONVERSATION_RE.search(state["question"]):
        lines = "\n".join(f"#{e['id']} [{', '.join(e['topics'])}] {e['question']}" for e in index)
        notes += CONVERSATION_INDEX.format(lines=lines)
    return notes


def final_message(state: ChatState, turns: int = 0) -> HumanMessage:
    """The last prompt message: memory notes, new context and the question, after the stable prefix."""
    question, docs = state["question"], state.get("documents", [])
    notes = memory_notes(state, turns)
    if state.get("intent") == "rag" and docs:
        return HumanMessage(content=notes + KNOWLEDGE_BASE.format(sources=format_sources(docs), question=question))
    if state.get("intent") == "rag":
        return HumanMessage(content=notes + NO_DOCUMENTS.format(question=question))
    return HumanMessage(content=notes + question)


async def generate(state: ChatState, runtime: Runtime[GraphDeps]) -> dict:
    """Set answer; tokens reach the client through the model's stream events."""
    triage = state.get("triage", {})
    if triage.get("skip_llm"):
        return {"answer": triage.get("early_response", "")}
    turns = runtime.context.settings.history_turns if state.get("use_memory", True) else 0
    prompt = [*prompt_prefix(state, turns), final_message(state, turns)]
    parts: list[str] = []
    async for chunk in runtime.context.chat_model.astream(prompt):
        parts.append(chunk.text)
    return {"answer": "".join(parts).strip()}
