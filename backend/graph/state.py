"""ChatState: what one chat turn reads and writes, checkpointed per thread."""

from typing import Annotated, Literal, NotRequired, TypedDict

from langchain_core.messages import AnyMessage
from langgraph.graph.message import add_messages

Mode = Literal["auto", "rag", "chat"]
Intent = Literal["rag", "chat"]


class Source(TypedDict):
    """One retrieved chunk as the generator sees it and the client receives it."""

    id: str
    document: str
    page: int | None
    chunk: int
    snippet: str
    score: float
    text: str
    section: NotRequired[str | None]
    chunks: NotRequired[list[int]]


class ChatState(TypedDict, total=False):
    """State of a thread. `messages` accumulates completed turns; the other keys describe the current turn."""

    messages: Annotated[list[AnyMessage], add_messages]
    question: str
    mode: Mode
    use_memory: bool
    rewritten_query: str
    intent: Intent
    route_reason: str
    targeted_documents: list[str]
    mention_notes: list[str]
    documents: list[Source]
    sources: list[Source]
    triage: dict
    validation: dict
    answer: str


def turn_input(question: str, mode: Mode, use_memory: bool = True) -> ChatState:
    """Input for a new turn: the question, with every per-turn key reset."""
    return {
        "question": question,
        "mode": mode,
        "use_memory": use_memory,
        "rewritten_query": question,
        "intent": "chat",
        "route_reason": "",
        "targeted_documents": [],
        "mention_notes": [],
        "documents": [],
        "sources": [],
        "triage": {},
        "validation": {},
        "answer": "",
    }
