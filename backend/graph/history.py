"""The prompt's layout: a prompt that only grows, so llama.cpp's KV cache serves every follow-up.

    system prompt (+ what the window no longer shows, frozen at the last cut)
    turn k:   user message exactly as sent then (its new passages and question), assistant answer
    …
    turn N:   user message: passages not already shown above, then the question

Turn N+1's prompt starts with turn N's prompt and answer byte for byte. When the window holds RAG_HISTORY_TURNS
turns or RAG_HISTORY_TOKEN_BUDGET tokens, it is cut in one large step to its last third, so the prefix then stays
stable for several turns again. The rewriter's prompt shares the same prefix.
"""

from dataclasses import dataclass

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage

from backend.graph.prompts import CONVERSATION_SUMMARY, EARLIER_QUESTIONS, system_prompt
from backend.graph.state import ChatState, TranscriptEntry
from backend.rag.chunking import estimate_tokens
from backend.settings import Settings

LAYOUT = "grow-1"  # the layout's version: part of every saved KV-cache key


def cache_layout(settings: Settings) -> str:
    """The prompt layout a saved KV cache is keyed on: the layout's version and the system prompt in use."""
    return f"{LAYOUT}-{settings.prompt_style}"


@dataclass(frozen=True)
class Window:
    """The earlier turns the prompt shows, and what stands in for the ones before them."""

    start: int  # index of the first transcript entry shown
    note: str  # the conversation before `start`, frozen when the window was last cut
    entries: list[TranscriptEntry]
    moved: bool  # this turn cuts the window


def entry_tokens(entry: TranscriptEntry) -> int:
    """Estimated tokens of one earlier turn in the prompt."""
    return estimate_tokens(entry["prompt"]) + estimate_tokens(entry["answer"]) + 8


def window(state: ChatState, settings: Settings) -> Window:
    """The window for this turn; the same for every model call of the turn (it reads only memory keys)."""
    transcript = state.get("transcript", [])
    if not state.get("use_memory", True):
        return Window(len(transcript), "", [], False)
    start, note = state.get("window_start", 0), state.get("window_note", "")
    entries = transcript[start:]
    full = len(entries) >= max(settings.history_turns, 1)
    if not full and sum(entry_tokens(e) for e in entries) <= settings.history_token_budget:
        return Window(start, note, entries, False)
    keep = len(entries) // 3 if settings.history_turns > 0 else 0
    while keep and sum(entry_tokens(e) for e in entries[-keep:]) > settings.history_token_budget // 2:
        keep -= 1
    start = len(transcript) - keep
    return Window(start, earlier_note(state, start), transcript[start:], True)


def earlier_note(state: ChatState, start: int) -> str:
    """The rolling summary, plus the questions of exchanges before `start` that it does not cover yet."""
    summary, covered = state.get("summary", ""), state.get("summarized_upto", 0)
    left = [e["question"] for e in state.get("qa_index", [])[covered:start]]
    lines = [summary] if summary else []
    if left:
        lines.append(EARLIER_QUESTIONS.format(questions="; ".join(left)))
    return "\n".join(lines)


def prefix(state: ChatState, settings: Settings) -> list[BaseMessage]:
    """System prompt and the window's turns as sent: byte-identical for every model call of the turn."""
    win = window(state, settings)
    system = system_prompt(settings.prompt_style) + (CONVERSATION_SUMMARY.format(summary=win.note) if win.note else "")
    messages: list[BaseMessage] = [SystemMessage(content=system)]
    for entry in win.entries:
        messages += [HumanMessage(content=entry["prompt"]), AIMessage(content=entry["answer"])]
    return messages


def shown_ids(state: ChatState, settings: Settings) -> set[str]:
    """Ids of the passages the window already shows the model."""
    return {sid for entry in window(state, settings).entries for sid in entry["sources"]}


def recent_exchanges(state: ChatState, turns: int) -> list[BaseMessage]:
    """The last `turns` question/answer pairs as the user saw them (for follow-up detection and rewriting)."""
    if turns <= 0:
        return []
    messages = [m for m in state.get("messages", []) if isinstance(m, HumanMessage | AIMessage)]
    return [type(m)(content=m.text) for m in messages[-2 * turns :]]
