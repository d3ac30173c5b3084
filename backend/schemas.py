"""Request bodies, responses and SSE payloads: the contract with frontend/ and other clients."""

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from backend.graph.state import Mode


class ChatRequest(BaseModel):
    """Body of POST /api/chat and /api/chat/stream."""

    model_config = ConfigDict(extra="forbid")

    message: str = Field(min_length=1, description="The user's question, 1 to 16000 characters.")
    thread_id: str | None = Field(None, min_length=1, max_length=128, pattern=r"^[A-Za-z0-9_.:\-]+$")
    mode: Mode = "auto"
    use_memory: bool = Field(True, description="false: this turn neither reads nor writes conversation memory")


class SourceOut(BaseModel):
    """A cited chunk as clients see it."""

    id: str
    document: str
    page: int | None = None
    chunk: int
    snippet: str
    score: float
    section: str | None = None
    chunks: list[int] | None = None
    cited: bool = True


class ChatResponse(BaseModel):
    """Body of POST /api/chat."""

    thread_id: str
    answer: str
    sources: list[SourceOut]
    intent: str
    rewritten_query: str


class ThreadSummary(BaseModel):
    """One row of GET /api/threads."""

    thread_id: str
    title: str
    updated_at: str


class MessageOut(BaseModel):
    """One message of a thread."""

    role: Literal["user", "assistant"]
    content: str
    sources: list[SourceOut] | None = None
    intent: str | None = None
    steps: list[str] | None = None


class ThreadDetail(BaseModel):
    """Body of GET /api/threads/{id}."""

    thread_id: str
    title: str
    messages: list[MessageOut]


class ThreadPatch(BaseModel):
    """Body of PATCH /api/threads/{id}."""

    model_config = ConfigDict(extra="forbid")

    title: str = Field(min_length=1, max_length=200)


class DocumentOut(BaseModel):
    """A document in the knowledge base (GET /api/documents and /api/documents/{id})."""

    id: str
    name: str
    type: str
    pages: int | None
    chunks: int
    size: int
    ingested_at: str | None
    status: Literal["queued", "processing", "ready", "failed"]
    progress: float
    error: str | None
    flagged: int = 0  # chunks that read like instructions to the model; never given to it


class UploadRejected(BaseModel):
    """A file of a multi-file upload that was not accepted."""

    name: str
    status: int
    detail: str


class UploadAccepted(BaseModel):
    """Body of POST /api/documents (202)."""

    documents: list[DocumentOut]
    rejected: list[UploadRejected] = []


class SearchRequest(BaseModel):
    """Body of POST /api/search."""

    model_config = ConfigDict(extra="forbid")

    query: str = Field(min_length=1, max_length=2000)
    k: int = Field(10, ge=1, le=50)
    documents: list[str] | None = None


class SearchResponse(BaseModel):
    """Body of POST /api/search: the chat's retrieval pipeline without the model."""

    results: list[SourceOut]
    timings: dict[str, float]


# --- SSE payloads: event name -> data model -------------------------------------------------


class MetadataEvent(BaseModel):
    thread_id: str
    run_id: str


class StatusEvent(BaseModel):
    node: str
    phase: Literal["start", "end"]
    label: str
    detail: str | None = None


class TokenEvent(BaseModel):
    text: str


class ReplaceEvent(BaseModel):
    """The final answer differs from the streamed tokens: show `text` instead, and why."""

    text: str
    reason: str


class SourcesEvent(BaseModel):
    sources: list[SourceOut]


class DoneEvent(BaseModel):
    thread_id: str
    question: str = ""  # as stored: with PII redacted when the input policy redacts it
    answer: str
    intent: str
    rewritten_query: str
    route_reason: str = ""
    triage: dict | None = None
    validation: dict | None = None


class ErrorEvent(BaseModel):
    code: str
    message: str


SSE_EVENTS: dict[type[BaseModel], str] = {
    MetadataEvent: "metadata",
    StatusEvent: "status",
    TokenEvent: "token",
    ReplaceEvent: "replace",
    SourcesEvent: "sources",
    DoneEvent: "done",
    ErrorEvent: "error",
}
