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
    cited: NotRequired[bool]


class ChatState(TypedDict, total=False):
    """State of a thread: memory kept across turns, then the keys of the current turn (reset by turn_input)."""

    # memory (written only by the memory node, and by the background summary update)
    messages: Annotated[list[AnyMessage], add_messages]
    ledger: dict[str, dict]  # S# -> source with its identity key: ids never change within a thread
    last_context: list[str]  # ledger ids the previous turn's generator saw
    cited: list[str]  # every ledger id an answer of this thread cited
    qa_index: list[dict]  # one line per exchange: id, question, query, topics, sources, answer
    summary: str
    summarized_upto: int  # exchanges already folded into the summary
    scope: list[str]  # documents the last documents turn was aimed at
    last_intent: str
    last_query: str
    # the current turn
    question: str  # already redacted when the input policy redacts
    input_redactions: list[str]  # PII types redacted from the question before the graph saw it
    mode: Mode
    use_memory: bool
    rewritten_query: str
    intent: Intent
    route_reason: str
    targeted_documents: list[str]
    scope_source: str  # mention | carried | none
    mention_notes: list[str]
    followup: dict
    context_decision: dict
    documents: list[Source]
    fresh_ids: list[str]
    dropped: list[str]  # documents of retrieved passages dropped as indirect prompt injection
    sources: list[Source]
    triage: dict
    validation: dict
    answer: str


def turn_input(question: str, mode: Mode, use_memory: bool = True, redactions: list[str] | None = None) -> ChatState:
    """Input for a new turn: the question, with every per-turn key reset."""
    return {
        "question": question,
        "input_redactions": redactions or [],
        "mode": mode,
        "use_memory": use_memory,
        "rewritten_query": question,
        "intent": "chat",
        "route_reason": "",
        "targeted_documents": [],
        "scope_source": "none",
        "mention_notes": [],
        "followup": {},
        "context_decision": {},
        "documents": [],
        "fresh_ids": [],
        "dropped": [],
        "sources": [],
        "triage": {"route": "", "skip_llm": False, "early_response": "", "triage_log": []},
        "validation": {},
        "answer": "",
    }
