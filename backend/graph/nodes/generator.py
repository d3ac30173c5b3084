"""generator: write the answer after the prompt's stable prefix, streaming tokens.

Contract: reads the question, `documents`, `intent`, the memory keys; writes `answer`, `sent` (the user message
exactly as sent and the window it followed, for the transcript), with tools `documents`, and `validation.length`
when the model stopped at RAG_MAX_ANSWER_TOKENS. The user message holds only passages the window does not already
show, then the question (see graph/history.py).
"""

from langchain_core.messages import AIMessageChunk, BaseMessage, HumanMessage, ToolMessage
from langchain_core.runnables import Runnable
from langgraph.runtime import Runtime

from backend.contract.citations import CITATION_RE, tidy
from backend.contract.text import content_words, mentions, stem, strip_mentions
from backend.contract.types import LengthCheck, Source
from backend.graph.deps import GraphDeps
from backend.graph.history import prefix, shown_ids, window
from backend.graph.model import chat_model
from backend.graph.prompts import (
    CHECK_LAST_ANSWER,
    CHECK_RULE,
    CONVERSATION_INDEX,
    KNOWLEDGE_BASE,
    NO_DOCUMENTS,
    SOURCE_ENTRY,
    SOURCES_ALREADY_GIVEN,
    USER_CONTEXT,
)
from backend.graph.report import report
from backend.graph.state import ChatState, SentPrompt
from backend.memory.followup import CONFIRM_RE, CONVERSATION_WORDS, about_conversation
from backend.memory.tools import MAX_TOOL_ROUNDS, ToolFindings, make_tools
from backend.settings import Settings

NODE = "generator"
INDEX_ANSWERS = 3  # answers about the subject the conversation index shows, at most (each up to 300 characters)


def format_sources(sources: list[Source]) -> str:
    """The knowledge-base body: one entry per source with its marker, document and page."""
    return "\n\n".join(
        SOURCE_ENTRY.format(
            id=s["id"],
            document=s["document"],
            location=f", page {s['page']}" if s.get("page") else "",
            text=s["text"],
        )
        for s in sources
    )


def conversation_index(state: ChatState) -> str:
    """The Q&A index, when the question is about the conversation itself; an exchange about what the question asks
    after ("what did you say about contractors earlier?") comes with the answer given, which the model otherwise
    made up (a tester got "12 months, the same as for regular employees" for "2 weeks")."""
    index = state.get("qa_index", []) if state.get("use_memory", True) else []
    if not index or not about_conversation(state["question"]):
        return ""
    subject = content_words(state["question"]) - {stem(w) for w in CONVERSATION_WORDS}
    about = [e["id"] for e in index if subject & content_words(f"{e['question']} {e.get('answer', '')}")]
    shown = set(about[-INDEX_ANSWERS:])  # the latest: a long thread's every answer would not fit the context
    lines = []
    for e in index:
        lines.append(f"#{e['id']} [{', '.join(e['topics'])}] {e['question']}")
        if e["id"] in shown:
            lines.append(f"   answered: {tidy(CITATION_RE.sub('', ' '.join(e['answer'].split())))}")
    return CONVERSATION_INDEX.format(lines="\n".join(lines))


def about_asker(state: ChatState, settings: Settings, context: str) -> str:
    """The user-context block, when the prompt does not already show this very context (it is stated in a thread's
    first message, and again only when it changed or left the window, so the prompt keeps growing by appending)."""
    if not context:
        return ""
    block = USER_CONTEXT.format(context=context)
    shown = window(state, settings).entries if state.get("use_memory", True) else []
    return "" if any(block in entry["prompt"] for entry in shown) else block


def question_for_model(state: ChatState) -> str:
    """The question as the model reads it: an @mention becomes the name of the document it aims at, after the
    question ("… per night? (in travel-policy.pdf)"); the markup itself lowered the model's confidence that the
    passages answer it (validate_answerable)."""
    question, targeted = state.get("completed_question") or state["question"], state.get("targeted_documents") or []
    if not targeted or not mentions(state["question"]):
        return question
    return f"{strip_mentions(question)} (in {', '.join(targeted)})"


def asks_to_confirm(state: ChatState) -> bool:
    """A follow-up whose whole message asks whether the last answer is right ("Are you sure?")."""
    followup = state.get("followup") or {}
    return followup.get("kind") == "clarification" and bool(CONFIRM_RE.search(state["question"]))


def user_message(state: ChatState, settings: Settings, context: str = "") -> tuple[str, list[str]]:
    """This turn's user message and the ids of the passages it shows (the ones the window does not)."""
    question, docs = question_for_model(state), state.get("documents", [])
    notes = about_asker(state, settings, context) + conversation_index(state)
    if state.get("intent") != "rag":
        return notes + question, []
    shown, confirm = shown_ids(state, settings), asks_to_confirm(state)
    new = [d for d in docs if d["id"] not in shown]
    if new:
        body = KNOWLEDGE_BASE.format(sources=format_sources(new), question=question)
        return notes + body + (f"\n{CHECK_RULE}" if confirm else ""), [d["id"] for d in new]
    if docs:
        given = CHECK_LAST_ANSWER if confirm else SOURCES_ALREADY_GIVEN
        return notes + given.format(question=question), []
    return notes + NO_DOCUMENTS.format(question=question), []


async def generate(state: ChatState, runtime: Runtime[GraphDeps]) -> dict:
    """Set answer and what was sent; tokens reach the client through the model's stream events."""
    deps = runtime.context
    text, ids = user_message(state, deps.settings, deps.user_context)
    prompt = [*prefix(state, deps.settings), HumanMessage(content=text)]
    if deps.settings.uses_tools and state.get("use_memory", True):
        out, cut = await _generate_with_tools(state, runtime, prompt)
    else:
        answer, cut = await _stream_text(await chat_model(runtime, NODE), prompt)
        out = {"answer": answer}
    if cut:  # a tester's long answer ended mid-sentence, marked complete and grounded, with no sign of it
        out["validation"] = {"length": LengthCheck(cut=True, max_tokens=deps.settings.max_answer_tokens)}
    win = window(state, deps.settings)
    sent = SentPrompt(prompt=text, sources=ids, window_start=win.start, window_note=win.note)
    return {**out, "sent": sent, **report(runtime, NODE)}


def stopped_at_length(chunk: BaseMessage) -> bool:
    """Whether the model's last chunk says it reached the token limit (OpenAI-compatible servers and llama.cpp
    `finish_reason`, Ollama `done_reason`)."""
    meta = chunk.response_metadata or {}
    return "length" in (meta.get("finish_reason"), meta.get("done_reason"))


async def _stream_text(model: Runnable, prompt: list[BaseMessage]) -> tuple[str, bool]:
    """The streamed answer, and whether it stopped at the length limit."""
    parts, cut = [], False
    async for chunk in model.astream(prompt):
        parts.append(chunk.text)
        cut = cut or stopped_at_length(chunk)
    return "".join(parts).strip(), cut


async def _generate_with_tools(
    state: ChatState, runtime: Runtime[GraphDeps], prompt: list[BaseMessage]
) -> tuple[dict, bool]:
    """At most MAX_TOOL_ROUNDS rounds of tool calls, then the answer (and whether it stopped at the length limit);
    text of every round streams as it comes."""
    deps = runtime.context
    findings = ToolFindings(sources=list(state.get("documents", [])))
    tools = make_tools(state, deps.retriever, deps.settings.retrieval_top_k, findings)
    by_name = {t.name: t for t in tools}
    model, messages = await chat_model(runtime, NODE, tools), list(prompt)
    for _ in range(MAX_TOOL_ROUNDS):
        reply: AIMessageChunk | None = None
        async for chunk in model.astream(messages):
            reply = chunk if reply is None else reply + chunk
        if reply is None or not reply.tool_calls:
            answer = {"answer": reply.text.strip() if reply else "", "documents": findings.sources}
            return answer, reply is not None and stopped_at_length(reply)
        messages.append(reply)
        for call in reply.tool_calls:
            result = await by_name[call["name"]].ainvoke(call["args"]) if call["name"] in by_name else "unknown tool"
            messages.append(ToolMessage(content=str(result), tool_call_id=call["id"]))
    answer, cut = await _stream_text(await chat_model(runtime, NODE), messages)
    return {"answer": answer, "documents": findings.sources}, cut
