"""Request and response bodies of the HTTP API (the SSE payloads are in events.py)."""

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from backend.contract.events import DoneEvent
from backend.contract.text import NAME_PATTERN, THREAD_ID_PATTERN
from backend.contract.types import GuardrailMode, Mode, PublicSource, Scope, Triage, TurnStatus, Validation


class ErrorBody(BaseModel):
    """Every 4xx and 5xx: one sentence saying what went wrong and what to fix."""

    detail: str


class ChatRequest(BaseModel):
    """Body of POST /api/chat and /api/chat/stream."""

    model_config = ConfigDict(extra="forbid", strict=True)

    message: str = Field(min_length=1, description="The user's question, 1 to 16000 characters.")
    thread_id: str | None = Field(
        None,
        pattern=THREAD_ID_PATTERN,
        description="Continue this thread; letters, digits and _ . : - (not . or ..), up to 128 characters.",
    )
    mode: Mode = "auto"
    use_memory: bool = Field(True, description="false: this turn neither reads nor writes conversation memory")
    keep_scope: bool = Field(
        True,
        description="false: a follow-up searches every document you may read instead of the ones the thread's last "
        "@-question was aimed at (the thread's `scope`), and the thread's scope ends",
    )
    guardrail: GuardrailMode = Field(
        "enforce",
        description="warn: re-send a message the input guardrail blocked as an injection or jailbreak; it goes "
        "through once, logged. Honoured only when the server allows it (RAG_GUARDRAIL_ALLOW_OVERRIDE).",
    )
    user_context: str = Field(
        "",
        max_length=500,
        description="A note about you or your situation for this turn (for example 'I work night shifts'), added to "
        "your profile's context; it informs the answer, it never changes the assistant's rules.",
    )
    on_disconnect: Literal["continue", "cancel"] = Field(
        "continue",
        description="continue: the run goes on when the client leaves (re-attach with GET /api/runs/{id}/stream); "
        "cancel: a client that leaves cancels the run and nothing of it is kept.",
    )


class ChatResponse(DoneEvent):
    """Body of POST /api/chat: what the stream's done and sources events carry."""

    sources: list[PublicSource]


class ThreadSummary(BaseModel):
    """One row of GET /api/threads."""

    thread_id: str
    title: str
    updated_at: str
    via_api: bool = Field(
        False, description="A client of the OpenAI-compatible API (/v1) had turns on this thread, not only this app."
    )


class MessageOut(BaseModel):
    """One message of a thread."""

    role: Literal["user", "assistant"]
    content: str
    sources: list[PublicSource] | None = None
    intent: str | None = None
    route_reason: str | None = None  # why the router chose the documents or chat ("mentions handbook.md")
    scope: Scope | None = None  # the documents the search was limited to (an @-mention, or kept by a follow-up)
    steps: list[str] | None = None
    triage: Triage | None = None
    validation: Validation | None = None
    status: TurnStatus | None = None
    latency_ms: float | None = None  # how long the answer took, question to done (shown beside its steps)


# what an upload did with a file: a document new to its collection, a new version of the one of that name, or nothing
# (the very same file again)
UploadOutcome = Literal["new", "replaced", "unchanged"]
RunStatus = Literal["running", "completed", "failed", "stopped", "interrupted", "cancelled"]


class RunInfo(BaseModel):
    """A run: one question being answered (or answered) on a thread, with its event log."""

    run_id: str
    thread_id: str
    question: str
    status: RunStatus
    created_at: str
    last_event_id: int = Field(description="Sequence number of the run's latest event (the SSE `id:`).")


class ThreadDetail(BaseModel):
    """Body of GET /api/threads/{id}."""

    thread_id: str
    title: str
    messages: list[MessageOut]
    active_run: RunInfo | None = Field(
        None, description="The run answering on this thread now: follow it with GET /api/runs/{run_id}/stream."
    )
    scope: list[str] = Field(
        [],
        description="The documents the thread's last @-question was aimed at, which a follow-up keeps searching "
        "(send `keep_scope: false` to search every document instead); [] when there are none.",
    )


class ThreadPatch(BaseModel):
    """Body of PATCH /api/threads/{id}."""

    model_config = ConfigDict(extra="forbid", strict=True)

    title: str = Field(
        min_length=1, max_length=200, pattern=NAME_PATTERN, description="New title; one line, not blank."
    )


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
    collection: str = ""  # the id of its collection (GET /api/collections); "" with RAG_AUTH=off


class CollectionShare(BaseModel):
    """A group a group collection is shared with, for reading or for reading and writing."""

    group_id: str
    access: Literal["read", "write"]


class CollectionOut(BaseModel):
    """A collection the signed-in user may read (GET /api/collections)."""

    id: str
    name: str
    kind: Literal["personal", "team", "group"]
    users_write: bool  # a team collection users may add to (admins always may)
    can_write: bool  # whether you may upload into it and delete its documents
    created_at: str
    groups: list[CollectionShare] = []  # a group collection's shares


class NewCollection(BaseModel):
    """A team or group collection to create (admins only)."""

    model_config = ConfigDict(extra="forbid", strict=True)

    name: str = Field(
        min_length=1, max_length=80, pattern=NAME_PATTERN, description="shown in the upload picker; unique among them"
    )
    kind: Literal["team", "group"] = Field(
        default="team", description="team: every user reads it; group: only the groups it is shared with"
    )
    users_write: bool = Field(default=False, description="a team collection users may upload into, not only admins")


class CollectionChange(BaseModel):
    """What to change of a team or group collection (admins only); what is left out stays."""

    model_config = ConfigDict(extra="forbid")

    name: str | None = Field(
        default=None, min_length=1, max_length=80, pattern=NAME_PATTERN, description="unique among shared collections"
    )
    users_write: bool | None = Field(default=None, description="a team collection users may upload into")


class DocumentMove(BaseModel):
    """Where to file a document (you must be allowed to write both collections)."""

    model_config = ConfigDict(extra="forbid")

    collection_id: str = Field(min_length=1, description="a collection's id (GET /api/collections)")


class ShareRequest(BaseModel):
    """How a group may use a group collection."""

    model_config = ConfigDict(extra="forbid")

    access: Literal["read", "write"]


class PageSpan(BaseModel):
    """Where one PDF page's text lies in DocumentText.text."""

    page: int
    start: int
    end: int


class DocumentText(BaseModel):
    """Body of GET /api/documents/{id}/text: the text a source's `start`/`end` index into."""

    id: str
    name: str
    type: str
    text: str
    pages: list[PageSpan] | None = None  # PDFs only: each page's span, to open the page a passage is on


class UploadRejected(BaseModel):
    """A file of a multi-file upload that was not accepted."""

    name: str
    status: int
    detail: str


class UploadedDocument(DocumentOut):
    """A document an upload accepted, and what became of it: a new document, a new version of the one of the same
    name (its old version stays searchable until the new one is ready), or the very same file again (nothing to do)."""

    outcome: UploadOutcome


class UploadAccepted(BaseModel):
    """Body of POST /api/documents (202)."""

    documents: list[UploadedDocument]
    rejected: list[UploadRejected] = []


class SearchRequest(BaseModel):
    """Body of POST /api/search."""

    model_config = ConfigDict(extra="forbid", strict=True)

    query: str = Field(min_length=1, max_length=2000)
    k: int = Field(10, ge=1, le=50)
    documents: list[str] | None = None


class SearchResponse(BaseModel):
    """Body of POST /api/search: the chat's retrieval pipeline without the model."""

    results: list[PublicSource]
    timings: dict[str, float]


class ModelServerHealth(BaseModel):
    """One chat server of the ollama or openai backend, as the pool last saw it."""

    url: str = Field(description="The server's URL, without credentials.")
    healthy: bool = Field(description="Whether it answered its last request or health check.")
    in_flight: int = Field(description="Requests it is serving now.")
    last_error: str | None = Field(description="Why it is down (a short error); null when it is up.")


class Health(BaseModel):
    """Body of GET /api/health."""

    status: str
    backend: str = Field(description="embedded, ollama, openai or fake")
    model: str = Field(
        description="The chat model: a bundled model's name, the file name of your GGUF model, or the server's model."
    )
    model_server: str | None = Field(
        description="URL of the Ollama or OpenAI-compatible server the model runs on (several, separated by ', ', "
        "for a pool); null when Ragline runs it."
    )
    model_servers: list[ModelServerHealth] = Field(
        description="Each Ollama or OpenAI-compatible chat server: health, requests in flight, last error; empty "
        "when Ragline runs the model."
    )
    embedding_model: str
    reranker: str
    documents: int
    chunks: int
    max_message_chars: int = Field(description="The longest message a turn accepts (RAG_MAX_MESSAGE_CHARS).")
    versions: dict[str, str | None]
