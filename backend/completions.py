"""OpenAI chat completions on Ragline turns: the request read as one question on a thread, the turn's typed events
written as a completion or as stream chunks. No FastAPI imports (the routes are in api/openai.py).

- The question is the last message, which must come from the user. Earlier user and assistant messages are not
  given to the model: they only find the thread whose conversation they are (its memory is the model's context).
- system and developer messages are counted and dropped: Ragline's own system prompt always applies.
- After a completed turn the conversation so far, answer included, is hashed (`conversation_key`) and mapped to the
  thread, so the client's next request, which repeats it, continues that thread.
"""

import hashlib
import json
import re
from dataclasses import dataclass, field

from pydantic import BaseModel

from backend.api.errors import openai_error_body, turn_openai_error
from backend.contract.citations import CITATION_RE, group_ids
from backend.contract.events import (
    DoneEvent,
    ErrorEvent,
    MetadataEvent,
    ReplaceEvent,
    SourcesEvent,
    StatusEvent,
    StoppedEvent,
    TokenEvent,
)
from backend.contract.openai import (
    Annotation,
    AssistantMessage,
    Blocked,
    ChatCompletion,
    ChatCompletionChunk,
    ChatCompletionRequest,
    ChatMessage,
    Choice,
    ChunkChoice,
    Delta,
    FinishReason,
    OpenAIError,
    OpenAIRequestError,
    RaglineInfo,
    Replacement,
    StatusData,
    StatusLine,
    ThreadFrom,
    UrlCitation,
    Usage,
)
from backend.contract.types import PublicSource
from backend.guardrails.text import split_notes
from backend.rag.chunking import estimate_tokens

DONE_LINE = "[DONE]"
STOPPED = "The answer was stopped before it ended: Stop in another client, or its thread or account was deleted"
TEXT_PART = "text"


@dataclass(frozen=True)
class Conversation:
    """A request's messages as Ragline reads them."""

    question: str
    earlier: list[tuple[str, str]]  # (role, text) of the user and assistant messages before the question
    system_messages: int


@dataclass(frozen=True)
class ThreadChoice:
    """The thread a request runs on and how it was found."""

    thread_id: str
    source: ThreadFrom
    unmatched_history: bool


def message_text(message: ChatMessage, index: int) -> str:
    """A message's text; content parts other than text are refused."""
    if message.content is None or isinstance(message.content, str):
        return message.content or ""
    for part in message.content:
        if part.type != TEXT_PART:
            raise OpenAIRequestError(
                400,
                f"content parts of type {part.type!r} are not supported: Ragline reads text only",
                f"messages[{index}].content",
                "unsupported_content",
            )
    return "".join(part.text or "" for part in message.content)


def check_parameters(body: ChatCompletionRequest) -> None:
    """Refuse parameters Ragline cannot honour (the rest are ignored)."""
    if body.n is not None and body.n != 1:
        raise OpenAIRequestError(400, f"n={body.n}: Ragline writes one answer per request (n=1)", "n", "unsupported")
    for name, choice in (("tools", "tool_choice"), ("functions", "function_call")):
        forced = getattr(body, choice) not in (None, "auto", "none")  # "required" or a named function
        if forced and not getattr(body, name):  # OpenAI refuses it too: there is nothing to call
            message = f"{choice}: required or a named function needs {name}, and none were sent"
            raise OpenAIRequestError(400, message, choice, "invalid_value")
        if forced:  # offered but optional (Open WebUI's own tools): never called, ignored
            message = f"{choice}: Ragline answers with its own retrieval and never calls your {name}"
            raise OpenAIRequestError(400, message, choice, "unsupported")
    if body.logprobs:
        raise OpenAIRequestError(400, "logprobs are not supported", "logprobs", "unsupported")


def read_conversation(body: ChatCompletionRequest, max_chars: int) -> Conversation:
    """The question and the conversation before it; OpenAIRequestError (400) for what Ragline cannot answer."""
    check_parameters(body)
    if not body.messages:
        raise OpenAIRequestError(400, "messages is empty: send at least one user message", "messages", "invalid_value")
    turns, systems = [], 0
    for i, message in enumerate(body.messages):
        if message.role in ("tool", "function"):
            raise OpenAIRequestError(
                400, f"{message.role} messages are not supported", f"messages[{i}].role", "unsupported"
            )
        text = message_text(message, i)
        if message.role in ("system", "developer"):
            systems += 1
        else:
            turns.append((message.role, text))
    last = len(body.messages) - 1
    if body.messages[last].role != "user":
        message = f"the last message is from {body.messages[last].role!r}; it must be the user's question"
        raise OpenAIRequestError(400, message, f"messages[{last}].role", "invalid_value")
    question = turns[-1][1]
    if not question.strip():
        raise OpenAIRequestError(400, "the last user message is empty", f"messages[{last}].content", "invalid_value")
    if len(question) > max_chars:
        message = f"the last user message is {len(question)} characters; the limit is {max_chars}"
        raise OpenAIRequestError(400, message, f"messages[{last}].content", "string_above_max_length")
    return Conversation(question=question, earlier=turns[:-1], system_messages=systems)


def conversation_key(turns: list[tuple[str, str]]) -> str:
    """The hash of a conversation (roles and texts, whitespace collapsed): equal for the same exchange."""
    flat = [[role, " ".join(text.split())] for role, text in turns]
    return hashlib.sha256(json.dumps(flat, ensure_ascii=False).encode()).hexdigest()


def keys_after(conversation: Conversation, answers: list[str]) -> list[str]:
    """The keys of the conversation once answered: one per form the client may hold the answer in."""
    asked = [*conversation.earlier, ("user", conversation.question)]
    return list(dict.fromkeys(conversation_key([*asked, ("assistant", a)]) for a in answers if a.strip()))


def source_url(source: PublicSource, base_url: str) -> str:
    """Where a client can open a source's document (a PDF at its page)."""
    if not source.get("doc_id"):
        return f"{base_url}/api/documents"
    page = f"#page={source['page']}" if source.get("page") else ""
    return f"{base_url}/api/documents/{source['doc_id']}/file{page}"


def source_title(source: PublicSource) -> str:
    """A source as a one-line title that starts with its marker's id: "S1: manual.pdf, page 3"."""
    page = f", page {source['page']}" if source.get("page") else ""
    return f"{source['id']}: {source['document']}{page}"


def annotations(answer: str, sources: list[PublicSource], base_url: str) -> list[Annotation]:
    """One url_citation per cited source, spanning its first marker in the answer."""
    by_id = {s["id"]: s for s in sources}
    out: dict[str, Annotation] = {}
    for match in CITATION_RE.finditer(answer):
        for sid in group_ids(match.group(1)):
            if sid in by_id and sid not in out:
                source = by_id[sid]
                citation = UrlCitation(
                    start_index=match.start(),
                    end_index=match.end(),
                    title=source_title(source),
                    url=source_url(source, base_url),
                )
                out[sid] = Annotation(url_citation=citation)
    return list(out.values())


def usage(question: str, answer: str, done: DoneEvent | None = None) -> Usage:
    """The model's own token counts over the turn (DoneEvent.usage), else an estimate of the question and the
    answer (a backend that reports none, a turn answered without the model)."""
    if done is not None and done.usage is not None:
        prompt, completion = done.usage.prompt_tokens, done.usage.completion_tokens
    else:
        prompt, completion = estimate_tokens(question), estimate_tokens(answer)
    return Usage(prompt_tokens=prompt, completion_tokens=completion, total_tokens=prompt + completion)


def blocked(done: DoneEvent | None) -> Blocked | None:
    """What a guardrail did to the turn, if anything: blocked the question, or replaced an unsafe answer."""
    validation = (done.validation if done else None) or {}
    check = validation.get("input") or {}
    if check.get("action") == "block":
        return Blocked(stage="input", reason=check.get("reason", ""), categories=check.get("categories", []))
    output = validation.get("output_guardrail") or {}
    if output and not output.get("safe", True):
        return Blocked(stage="output", reason=", ".join(output.get("issues", [])))
    return None


def error_body(event: ErrorEvent) -> OpenAIError:
    """A failed turn as an OpenAI error."""
    return turn_openai_error(event)[1]


def stopped_body() -> OpenAIError:
    """A turn stopped before its answer ended, as an OpenAI error (the SDK raises it; a client shows it)."""
    return openai_error_body(409, STOPPED, code="stopped")


def _status_line(event: StatusEvent) -> StatusLine:
    return StatusLine(data=StatusData(description=event.label, done=event.phase == "end"))


@dataclass
class TurnWriter:
    """Reads one turn's events and writes the completion (`completion`) or its stream (`lines`)."""

    model: str
    created: int
    thread: ThreadChoice
    conversation: Conversation
    base_url: str
    run_id: str = ""
    streamed: list[str] = field(default_factory=list)
    replace: ReplaceEvent | None = None
    sources: list[PublicSource] = field(default_factory=list)
    done: DoneEvent | None = None
    error: ErrorEvent | None = None
    stopped: StoppedEvent | None = None  # stopped by a cancel (another client's Stop, the thread or account deleted)

    @property
    def id(self) -> str:
        """The completion id, one per turn: chatcmpl- and the run id."""
        return "chatcmpl-" + re.sub(r"[^0-9a-zA-Z]", "", self.run_id)

    @property
    def answer(self) -> str:
        """The final answer (the done event's, which any replacement already is)."""
        return self.done.answer if self.done else "".join(self.streamed).strip()

    def read(self, event: BaseModel) -> None:
        """Take in one event of the turn."""
        if isinstance(event, MetadataEvent):
            self.run_id = event.run_id
        elif isinstance(event, TokenEvent):
            self.streamed.append(event.text)
        elif isinstance(event, ReplaceEvent):
            self.replace = event
        elif isinstance(event, SourcesEvent):
            self.sources = event.sources
        elif isinstance(event, DoneEvent):
            self.done = event
        elif isinstance(event, ErrorEvent):
            self.error = event
        elif isinstance(event, StoppedEvent):
            self.stopped = event

    def info(self) -> RaglineInfo:
        """Ragline's part of the response."""
        replace = Replacement(text=self.replace.text, reason=self.replace.reason) if self.replace else None
        return RaglineInfo(
            thread_id=self.thread.thread_id,
            run_id=self.run_id,
            thread_from=self.thread.source,
            unmatched_history=self.thread.unmatched_history,
            ignored_system_messages=self.conversation.system_messages,
            sources=self.sources,
            replace=replace,
            blocked=blocked(self.done),
        )

    def correction(self) -> str:
        """What a stream adds to its content when the checked answer says something else than the tokens sent: a
        client that ignores `ragline.replace` (the SDK, LibreChat, Open WebUI) showed an invented fact as the answer
        (a tester: a launch codename no document the asker may read holds). Said for a not-found reply, a
        no-passage lead or reply, and an answer the output guardrail replaced; not for repaired citations or tone.
        An answer kept with notes (the parts of the question it leaves, a figure another document states differently)
        gets the notes alone, each its own paragraph."""
        if self.done is None or self.replace is None:
            return ""
        check, answer = (self.done.validation or {}).get("sources") or {}, self.done.answer
        original = check.get("original_text") or ""
        guard = blocked(self.done)
        added = bool(check.get("unanswered_parts")) + bool(check.get("conflicts"))  # paragraphs the checks added
        if added and (guard is None or guard.stage != "output"):  # the answer stands; its last paragraphs are the
            return "\n\n" + "\n\n".join(split_notes(answer, added)[1])  # checks' notes
        if check.get("not_found") == "no_passages" and original and answer.endswith(original):
            text = answer[: -len(original)].strip()  # the lead alone: the answer itself was sent
        else:
            not_found = check.get("not_found") == "replaced" or (check.get("not_found") == "no_passages" and original)
            if not not_found and (guard is None or guard.stage != "output"):
                return ""
            text = answer
        return f"\n\n---\n**Correction:** {text}" if text else ""

    @property
    def finish_reason(self) -> FinishReason:
        """content_filter when a guardrail blocked the question or replaced the answer (OpenAI's value); length when
        the model stopped at RAG_MAX_ANSWER_TOKENS and the answer was kept; else stop."""
        if blocked(self.done):
            return "content_filter"
        validation = (self.done.validation if self.done else None) or {}
        return "length" if (validation.get("length") or {}).get("cut") else "stop"  # of the answer shown

    def completion(self) -> ChatCompletion:
        """The whole answer as one completion (after the done event)."""
        notes = annotations(self.answer, self.sources, self.base_url)
        message = AssistantMessage(content=self.answer, annotations=notes)
        return ChatCompletion(
            id=self.id,
            created=self.created,
            model=self.model,
            choices=[Choice(message=message, finish_reason=self.finish_reason)],
            usage=usage(self.conversation.question, self.answer, self.done),
            ragline=self.info(),
        )

    def chunk(self, delta: Delta, **extra: object) -> ChatCompletionChunk:
        """A chunk of this stream."""
        finish = extra.pop("finish_reason", None)
        choice = ChunkChoice(delta=delta, finish_reason=finish)  # type: ignore[arg-type]
        return ChatCompletionChunk(id=self.id, created=self.created, model=self.model, choices=[choice], **extra)

    def lines(self, event: BaseModel, status: bool, include_usage: bool) -> list[str]:
        """The stream's data lines for one event (already read)."""
        if isinstance(event, MetadataEvent):
            return [self.chunk(Delta(role="assistant", content="")).model_dump_json()]
        if isinstance(event, TokenEvent):
            return [self.chunk(Delta(content=event.text)).model_dump_json()]
        if isinstance(event, StatusEvent) and status:
            return [self.chunk(Delta(), event=_status_line(event)).model_dump_json()]
        if isinstance(event, ErrorEvent):
            return [error_body(event).model_dump_json(), DONE_LINE]
        if isinstance(event, StoppedEvent):
            return [stopped_body().model_dump_json(), DONE_LINE]
        if isinstance(event, DoneEvent):
            notes = annotations(self.answer, self.sources, self.base_url)
            last = self.chunk(Delta(annotations=notes or None), finish_reason=self.finish_reason, ragline=self.info())
            fix = self.correction()
            out = [*([self.chunk(Delta(content=fix)).model_dump_json()] if fix else []), last.model_dump_json()]
            if include_usage:  # OpenAI's usage chunk: after the last choice, with no choices
                used = usage(self.conversation.question, self.answer, self.done)
                tail = ChatCompletionChunk(id=self.id, created=self.created, model=self.model, choices=[], usage=used)
                out.append(tail.model_dump_json())
            return [*out, DONE_LINE]
        return []

    def keys(self) -> list[str]:
        """The conversation keys of the completed turn: with the final answer, and with the streamed text."""
        streamed = "".join(self.streamed)
        return keys_after(self.conversation, [self.answer, streamed, streamed + self.correction()])
