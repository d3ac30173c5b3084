"""The OpenAI-compatible wire format of /v1: model list, chat-completion request, response, stream chunk, error.

Only what Ragline reads or writes is modelled; a request's other parameters are accepted and ignored (see
README, "OpenAI-compatible API"). `ragline` is Ragline's own addition to a response and to a stream's last chunk;
`event` is Open WebUI's status line in a stream.
"""

from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, StrictBool, StrictFloat, StrictInt, StrictStr

from backend.contract.types import PublicSource

Role = Literal["system", "developer", "user", "assistant", "tool", "function"]
ThreadFrom = Literal["header", "metadata", "chat_id_header", "history", "new"]
FinishReason = Literal["stop", "length", "content_filter"]  # content_filter: a guardrail blocked the question or the
# answer; length: the answer stopped at RAG_MAX_ANSWER_TOKENS


def _none(value: Any) -> bool:
    return value is None


class ContentPart(BaseModel):
    """One part of a message's content: {"type": "text", "text": ...}; other types are refused by the route."""

    model_config = ConfigDict(extra="allow")

    type: str
    text: str | None = None


class ChatMessage(BaseModel):
    """A message as OpenAI clients send it."""

    model_config = ConfigDict(extra="allow")

    role: Role
    content: str | list[ContentPart] | None = None


class StreamOptions(BaseModel):
    """`stream_options`: only include_usage is read."""

    model_config = ConfigDict(extra="allow")

    include_usage: StrictBool | None = False


class ChatCompletionRequest(BaseModel):
    """Body of POST /v1/chat/completions; parameters not listed here are accepted and ignored."""

    model_config = ConfigDict(extra="allow", allow_inf_nan=False)  # "temperature": NaN is not a number

    model: str = Field(description="ragline, ragline-chat or ragline:<document name> (GET /v1/models).")
    messages: list[ChatMessage] = Field(description="The whole conversation; the last message is the question.")
    stream: StrictBool | None = Field(False, description='true or false: a string such as "yes" is refused.')
    stream_options: StreamOptions | None = None
    n: StrictInt | None = Field(None, description="Only 1.")
    tools: list[Any] | None = Field(None, description="Ignored: Ragline never calls a client's tools.")
    tool_choice: Any = Field(None, description="Only auto or none: required or a named function is refused.")
    functions: list[Any] | None = Field(None, description="Ignored, as tools.")
    function_call: Any = Field(None, description="Only auto or none, as tool_choice.")
    logprobs: StrictBool | None = Field(None, description="Not supported.")
    # Sampling parameters: checked as OpenAI checks them ("max_tokens": "lots" is refused; tester), then ignored:
    # RAG_TEMPERATURE and RAG_MAX_ANSWER_TOKENS apply.
    temperature: StrictFloat | StrictInt | None = Field(
        None, ge=0, le=2, description="Checked, then ignored (RAG_TEMPERATURE)."
    )
    top_p: StrictFloat | StrictInt | None = Field(None, ge=0, le=1, description="Checked, then ignored.")
    max_tokens: StrictInt | None = Field(None, ge=1, description="Checked, then ignored (RAG_MAX_ANSWER_TOKENS).")
    max_completion_tokens: StrictInt | None = Field(None, ge=1, description="Checked, then ignored, as max_tokens.")
    presence_penalty: StrictFloat | StrictInt | None = Field(None, ge=-2, le=2, description="Checked, then ignored.")
    frequency_penalty: StrictFloat | StrictInt | None = Field(None, ge=-2, le=2, description="Checked, then ignored.")
    seed: StrictInt | None = Field(None, description="Checked, then ignored.")
    stop: StrictStr | Annotated[list[StrictStr], Field(max_length=4)] | None = Field(
        None, description="Checked (a string, or up to 4), then ignored."
    )
    metadata: dict[str, Any] | None = Field(None, description="`thread_id` continues that Ragline thread.")


class ModelCard(BaseModel):
    """One entry of GET /v1/models."""

    id: str
    object: Literal["model"] = "model"
    created: int
    owned_by: str = "ragline"


class ModelList(BaseModel):
    """Body of GET /v1/models."""

    object: Literal["list"] = "list"
    data: list[ModelCard]


class UrlCitation(BaseModel):
    """Where in the answer a source is cited (its marker's span) and where the source's document is."""

    start_index: int
    end_index: int
    title: str
    url: str


class Annotation(BaseModel):
    """OpenAI's chat-completion annotation (one per cited source, at its first marker)."""

    type: Literal["url_citation"] = "url_citation"
    url_citation: UrlCitation


class Replacement(BaseModel):
    """The streamed answer was revised after streaming (citation repair, a not-found reply): the final text."""

    text: str
    reason: str


class Blocked(BaseModel):
    """A guardrail blocked the question (stage input) or rewrote the answer (stage output): the content is its reply."""

    stage: Literal["input", "output"]
    reason: str
    categories: list[str] = []


class RaglineInfo(BaseModel):
    """Ragline's own part of a response: which thread answered, how it was found, the sources, a replacement."""

    thread_id: str
    run_id: str
    thread_from: ThreadFrom = Field(
        description="header: X-Ragline-Thread-Id; metadata: metadata.thread_id; chat_id_header: the Open WebUI "
        "chat id header; history: the earlier messages matched a thread's conversation; new: a new thread."
    )
    unmatched_history: bool = Field(
        description="The request carried earlier messages but no thread: they were not given to the model."
    )
    ignored_system_messages: int = Field(description="system and developer messages, never given to the model.")
    sources: list[PublicSource] = []
    replace: Replacement | None = None
    blocked: Blocked | None = Field(None, exclude_if=lambda v: v is None)  # only when a guardrail acted


class Usage(BaseModel):
    """Token counts: the model's own, summed over the turn's calls (rewrite, answer, verdict; prompt tokens include
    cached ones), when its backend reports them (embedded llama.cpp, Ollama); else Ragline's estimate (one token per
    4 characters) of the question and of the answer."""

    prompt_tokens: int
    completion_tokens: int
    total_tokens: int


class AssistantMessage(BaseModel):
    """The answer of a non-streamed completion (the final text, after any replacement)."""

    role: Literal["assistant"] = "assistant"
    content: str
    refusal: None = None
    annotations: list[Annotation] = []


class Choice(BaseModel):
    """The one choice of a non-streamed completion."""

    index: int = 0
    message: AssistantMessage
    finish_reason: FinishReason = "stop"
    logprobs: None = None


class ChatCompletion(BaseModel):
    """Body of POST /v1/chat/completions when not streamed."""

    id: str
    object: Literal["chat.completion"] = "chat.completion"
    created: int
    model: str
    choices: list[Choice]
    usage: Usage
    ragline: RaglineInfo


class Delta(BaseModel):
    """What one stream chunk adds to the answer; absent fields are left out."""

    role: Literal["assistant"] | None = Field(None, exclude_if=_none)
    content: str | None = Field(None, exclude_if=_none)
    annotations: list[Annotation] | None = Field(None, exclude_if=_none)


class ChunkChoice(BaseModel):
    """The one choice of a stream chunk; finish_reason is null until the last chunk."""

    index: int = 0
    delta: Delta
    finish_reason: FinishReason | None = None
    logprobs: None = None


class StatusData(BaseModel):
    """Open WebUI's status event data: a line of progress, done=true when the step ended."""

    description: str
    done: bool


class StatusLine(BaseModel):
    """Open WebUI's {"type": "status"} event, which it shows above the answer."""

    type: Literal["status"] = "status"
    data: StatusData


class ChatCompletionChunk(BaseModel):
    """One `data:` line of a streamed completion (the stream ends with `data: [DONE]`)."""

    id: str
    object: Literal["chat.completion.chunk"] = "chat.completion.chunk"
    created: int
    model: str
    choices: list[ChunkChoice]
    usage: Usage | None = Field(None, exclude_if=_none)
    ragline: RaglineInfo | None = Field(None, exclude_if=_none)
    event: StatusLine | None = Field(None, exclude_if=_none)


class OpenAIErrorDetail(BaseModel):
    """What went wrong: `param` names the request field, `code` is machine-readable."""

    message: str
    type: str
    param: str | None = None
    code: str | None = None


class OpenAIError(BaseModel):
    """Every 4xx and 5xx of /v1, and a failed stream's last data line."""

    error: OpenAIErrorDetail


class OpenAIRequestError(Exception):
    """A refused /v1 request: its HTTP status and the OpenAI error it is answered with."""

    def __init__(self, status: int, message: str, param: str | None = None, code: str | None = None) -> None:
        super().__init__(message)
        self.status, self.message, self.param, self.code = status, message, param, code
