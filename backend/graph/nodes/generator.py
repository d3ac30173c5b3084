"""generator: write the answer from the history window and the numbered sources, streaming tokens."""

from langchain_core.messages import AIMessageChunk, BaseMessage, HumanMessage, ToolMessage
from langchain_core.runnables import Runnable
from langgraph.runtime import Runtime

from backend.graph.deps import GraphDeps
from backend.graph.history import prompt_prefix
from backend.graph.prompts import CONVERSATION_INDEX, CONVERSATION_SUMMARY, KNOWLEDGE_BASE, NO_DOCUMENTS, SOURCE_ENTRY
from backend.graph.state import ChatState, Source
from backend.memory.followup import PAST_CONVERSATION_RE
from backend.memory.tools import MAX_TOOL_ROUNDS, ToolFindings, make_tools


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
    """Set answer (and tool-found documents); tokens reach the client through the model's stream events."""
    deps = runtime.context
    turns = deps.settings.history_turns if state.get("use_memory", True) else 0
    prompt = [*prompt_prefix(state, turns), final_message(state, turns)]
    if deps.settings.uses_tools and state.get("use_memory", True):
        return await _generate_with_tools(state, deps, prompt)
    return {"answer": await _stream_text(deps.chat_model, prompt)}


async def _stream_text(model: Runnable, prompt: list[BaseMessage]) -> str:
    parts = [chunk.text async for chunk in model.astream(prompt)]
    return "".join(parts).strip()


async def _generate_with_tools(state: ChatState, deps: GraphDeps, prompt: list[BaseMessage]) -> dict:
    """At most MAX_TOOL_ROUNDS rounds of tool calls, then the answer; text of every round streams as it comes."""
    findings = ToolFindings(sources=list(state.get("documents", [])))
    tools = make_tools(state, deps.retriever, deps.settings.retrieval_top_k, findings)
    by_name = {t.name: t for t in tools}
    model, messages = deps.chat_model.bind_tools(tools), list(prompt)
    for _ in range(MAX_TOOL_ROUNDS):
        reply: AIMessageChunk | None = None
        async for chunk in model.astream(messages):
            reply = chunk if reply is None else reply + chunk
        if reply is None or not reply.tool_calls:
            return {"answer": reply.text.strip() if reply else "", "documents": findings.sources}
        messages.append(reply)
        for call in reply.tool_calls:
            result = await by_name[call["name"]].ainvoke(call["args"]) if call["name"] in by_name else "unknown tool"
            messages.append(ToolMessage(content=str(result), tool_call_id=call["id"]))
    return {"answer": await _stream_text(deps.chat_model, messages), "documents": findings.sources}
