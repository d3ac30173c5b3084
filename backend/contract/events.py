"""SSE payloads of a chat turn: event name -> data model. The stream is metadata, status…, token…, replace?,
sources?, then done, error or stopped."""

from typing import Literal

from pydantic import BaseModel

from backend.contract.types import PublicSource, Scope, Triage, Validation


class MetadataEvent(BaseModel):
    """First event: which thread and run this stream belongs to."""

    thread_id: str
    run_id: str


class StatusEvent(BaseModel):
    """A step of the turn starts, reports progress (a new label while it runs) or ends with what it decided."""

    node: str
    phase: Literal["start", "progress", "end"]
    label: str
    detail: str | None = None


class TokenEvent(BaseModel):
    """Answer text from the model, in order, never empty."""

    text: str


class ReplaceEvent(BaseModel):
    """The final answer differs from the streamed tokens: show `text` instead, and why."""

    text: str
    reason: str


class SourcesEvent(BaseModel):
    """The sources the answer cites (by their thread-wide ids), or the retrieved ones with cited=false."""

    sources: list[PublicSource]


class ModelUsage(BaseModel):
    """Tokens the model counted over a turn's calls (rewrite, answer, verdict): prompt tokens include those read
    from its cache."""

    prompt_tokens: int
    completion_tokens: int


class DoneEvent(BaseModel):
    """Last event of a completed turn: the final answer and how it was produced."""

    thread_id: str
    question: str = ""  # as stored: with PII redacted when the input policy redacts it
    answer: str
    intent: str
    rewritten_query: str
    route_reason: str = ""
    scope: Scope | None = None  # the documents the search was limited to; None: every document the asker may read
    triage: Triage | None = None
    validation: Validation | None = None
    usage: ModelUsage | None = None  # None when no model call of the turn reported its counts (the fake, a FAQ)


class ErrorEvent(BaseModel):
    """Last event of a failed turn; nothing of it was stored."""

    code: str
    message: str


class StoppedEvent(BaseModel):
    """Last event of a run that did not finish: stopped by POST /api/runs/{id}/cancel, or interrupted by a server
    restart. `answer` is the partial text; the thread keeps it marked with `status`, outside the model's memory."""

    run_id: str
    status: Literal["stopped", "interrupted"]
    answer: str


SSE_EVENTS: dict[type[BaseModel], str] = {
    MetadataEvent: "metadata",
    StatusEvent: "status",
    TokenEvent: "token",
    ReplaceEvent: "replace",
    SourcesEvent: "sources",
    DoneEvent: "done",
    ErrorEvent: "error",
    StoppedEvent: "stopped",
}
TurnEvent = (
    MetadataEvent | StatusEvent | TokenEvent | ReplaceEvent | SourcesEvent | DoneEvent | ErrorEvent | StoppedEvent
)
