"""generator: write the answer from the history window and the numbered sources, streaming tokens."""

from langchain_core.messages import HumanMessage
from langgraph.runtime import Runtime

from backend.graph.deps import GraphDeps
from backend.graph.history import prompt_prefix
from backend.graph.prompts import KNOWLEDGE_BASE, NO_DOCUMENTS, SOURCE_ENTRY
from backend.graph.state import ChatState, Source


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


def final_message(state: ChatState) -> HumanMessage:
    """The last prompt message: new context and the question, after the stable prefix."""
    question, docs = state["question"], state.get("documents", [])
    if state.get("intent") == "rag" and docs:
        return HumanMessage(content=KNOWLEDGE_BASE.format(sources=format_sources(docs), question=question))
    if state.get("intent") == "rag":
        return HumanMessage(content=NO_DOCUMENTS.format(question=question))
    return HumanMessage(content=question)


async def generate(state: ChatState, runtime: Runtime[GraphDeps]) -> dict:
    """Set answer and sources; tokens reach the client through the model's stream events."""
    triage = state.get("triage", {})
    if triage.get("skip_llm"):
        return {"answer": triage.get("early_response", ""), "sources": []}
    prompt = [*prompt_prefix(state, runtime.context.settings.history_turns), final_message(state)]
    parts: list[str] = []
    async for chunk in runtime.context.chat_model.astream(prompt):
        parts.append(chunk.text)
    docs = state.get("documents", []) if state.get("intent") == "rag" else []
    return {"answer": "".join(parts).strip(), "sources": docs}
