"""One chat turn as a sequence of typed SSE payloads, mapped from the graph's task, custom and message streams.

Node start and end come from LangGraph's "tasks" stream; what a node decided comes from the node itself through
the stream writer ("custom"); answer tokens come from the generator's model ("messages") through a PII gate.
"""

import logging
import re
from collections.abc import AsyncIterator
from contextlib import aclosing
from typing import Any

from langgraph.graph.state import CompiledStateGraph
from pydantic import BaseModel

from backend.contract.events import (
    DoneEvent,
    ErrorEvent,
    ModelUsage,
    ReplaceEvent,
    SourcesEvent,
    StatusEvent,
    TokenEvent,
)
from backend.contract.types import GuardrailMode, Mode, TurnRecord, Validation
from backend.graph.deps import GraphDeps
from backend.graph.report import NODE_LABELS, SILENT_NODES
from backend.graph.state import turn_input
from backend.guardrails.pii import known_pii
from backend.guardrails.policy import check_input
from backend.guardrails.repair import reason as repair_reason
from backend.guardrails.stream import MarkerStripper, StreamRedactor
from backend.llm.pool import SERVER_NOTE
from backend.settings import Settings, public_url

log = logging.getLogger(__name__)
ANSWER_NODE = "generator"
STREAM_MODES = ["tasks", "custom", "messages"]


SERVER_SETTINGS = {"ollama": "RAG_OLLAMA_BASE_URL", "openai": "RAG_OPENAI_BASE_URL"}
EMBED_SERVER_SETTINGS = {"ollama": "RAG_OLLAMA_EMBED_BASE_URL", "openai": "RAG_OPENAI_EMBED_BASE_URL"}
# by name: the openai SDK runs on httpx2, whose exceptions are not httpx's
# StreamChunkTimeoutError: langchain-openai's, no chunk within stream_chunk_timeout (RAG_LLM_TIMEOUT_SECONDS)
TIMEOUTS = ("APITimeoutError", "TimeoutException", "ConnectTimeout", "ReadTimeout", "WriteTimeout", "PoolTimeout",
            "StreamChunkTimeoutError")  # fmt: skip
UNREACHABLE = ("APIConnectionError", "ConnectError")
BROKEN_STREAM = ("RemoteProtocolError", "ReadError")  # the server hung up mid-answer
MODEL_ERRORS = ("ResponseError", "APIError", "APIStatusError", "BadRequestError", "InternalServerError")
# The prompt does not fit the model's context: llama.cpp's server ("request (4993 tokens) exceeds the available
# context size (4096 tokens)") and OpenAI-compatible servers ("maximum context length is 4096 tokens. However, you
# requested 4993 tokens"), the numbers in either order.
TOO_LONG_RE = re.compile(
    r"\((?P<asked>\d+) tokens\) exceeds the available context size \((?P<fits>\d+) tokens\)"
    r"|maximum context length is (?P<fits2>\d+) tokens.{0,80}?requested (?P<asked2>\d+) tokens"
    r"|exceeds the available context size|maximum context length|context length exceeded",
    re.IGNORECASE | re.DOTALL,
)


def too_long(exc: BaseException) -> ErrorEvent | None:
    """The error for a prompt longer than the model's context (a long pasted text), in the reader's terms: what to
    shorten, not the server's message (a tester pasted a 9,110-character log and got llama.cpp's error)."""
    found = TOO_LONG_RE.search(str(exc))
    if found is None:
        return None
    asked, fits = found.group("asked") or found.group("asked2"), found.group("fits") or found.group("fits2")
    size = f" ({int(asked):,} tokens; it reads at most {int(fits):,})" if asked and fits else ""
    return ErrorEvent(
        code="too_long",
        message=f"The message, with the passages found for it, is too long for the model{size}. Shorten the message, "
        "for example by pasting only the part of the text the question is about.",
    )


def _request_url(exc: BaseException) -> str:
    try:
        request = getattr(exc, "request", None)  # httpx raises RuntimeError when an error carries no request
    except RuntimeError:
        return ""
    return public_url(str(request.url)) if request is not None and hasattr(request, "url") else ""


def failed_server(exc: BaseException, settings: Settings) -> tuple[str, str | None]:
    """Which server a failed model request went to, in words ("the openai model server at URL"), and the setting
    that points at it: the embedding server when the request went there, else the chat server."""
    backend = settings.llm_backend
    if settings.model_server is None:
        return ("the fake model" if backend == "fake" else "the embedded llama.cpp server"), None
    embed = settings.embed_server
    if embed and _request_url(exc).startswith(embed):
        return f"the {backend} embedding server at {embed}", EMBED_SERVER_SETTINGS[backend]
    named = [n.removeprefix(SERVER_NOTE) for n in getattr(exc, "__notes__", ()) if n.startswith(SERVER_NOTE)]
    if named or len(settings.model_servers) == 1:
        return f"the {backend} model server at {(named or settings.model_servers)[0]}", SERVER_SETTINGS[backend]
    return f"the {backend} model servers at {settings.model_server}", SERVER_SETTINGS[backend]  # none answered


def _named(exc: BaseException, names: tuple[str, ...]) -> bool:
    """Whether the exception or one it was raised from is of a class (or subclass of one) of these names: the SDKs
    wrap the transport's error ("Connection error.") around what happened (a refused connection, a hang-up)."""
    seen: set[int] = set()
    while exc is not None and id(exc) not in seen:
        seen.add(id(exc))
        if any(cls.__name__ in names for cls in type(exc).__mro__):
            return True
        exc = exc.__cause__ or exc.__context__
    return False


def describe_error(exc: BaseException, deps: GraphDeps) -> ErrorEvent:
    """A client-safe error payload saying what failed, naming the model server, and what to check."""
    settings = deps.settings
    server, setting = failed_server(exc, settings)
    if _named(exc, TIMEOUTS):
        timeout = f"RAG_LLM_TIMEOUT_SECONDS ({settings.llm_timeout_seconds:g} s)"
        return ErrorEvent(code="model_unreachable", message=f"No answer from {server} within {timeout}.")
    if _named(exc, BROKEN_STREAM):
        return ErrorEvent(code="model_error", message=f"{server[0].upper()}{server[1:]} broke off its answer.")
    if _named(exc, UNREACHABLE) or isinstance(exc, ConnectionError):
        check = f"Check that it is running and that {setting} points at it." if setting else "See the server log."
        return ErrorEvent(code="model_unreachable", message=f"Could not reach {server}. {check}")
    if _named(exc, MODEL_ERRORS) and (event := too_long(exc)) is not None:
        return event
    if _named(exc, MODEL_ERRORS):
        return ErrorEvent(code="model_error", message=f"{server[0].upper()}{server[1:]} reported an error: {exc}")
    return ErrorEvent(code="internal_error", message=f"The turn failed ({type(exc).__name__}); see the server log.")


def replace_reason(validation: Validation) -> str:
    """Why the final answer differs from the streamed tokens."""
    reasons = []
    sources = validation.get("sources") or {}
    if sources.get("not_found") == "replaced" and sources.get("not_found_reason") == "unanswered":
        p = (validation.get("answerable") or {}).get("p_yes")
        judged = f" (P(yes) {p:.2f})" if p is not None else ""
        reasons.append(
            f"the model judged that the passages do not state the answer to the question{judged}, "
            "so the answer says the documents do not contain it"
        )
    elif parts := sources.get("unanswered_parts"):
        which = f"{len(parts)} part{'s' if len(parts) > 1 else ''} of the question"
        judged = (validation.get("answerable") or {}).get("answered") is False
        reasons.append(
            f"the model judged that the passages do not state the whole answer; the answer says so of {which}"
            if judged
            else f"the answer does not cover {which}, and now says so"
        )
    elif sources.get("not_found") == "replaced" and sources.get("not_found_reason") == "wrong_kind":
        reasons.append(
            f"the question asks for {sources.get('asked_for', 'something else')} and the answer gives none, "
            "so the answer says the documents do not contain it"
        )
    elif sources.get("not_found") == "replaced" and sources.get("not_found_reason") == "unstated_premise":
        reasons.append(
            f"the answer says {', '.join(repr(w) for w in sources.get('unstated', []))} as the question does, "
            "but no passage the model was given uses them, so the answer says the documents do not contain it"
        )
    elif sources.get("not_found") == "replaced" and sources.get("not_found_reason") == "restates_question":
        reasons.append("the answer only restates the question, so the answer says the documents do not contain it")
    elif sources.get("not_found") == "no_passages" and sources.get("not_found_reason") == "unsupported":
        reasons.append(
            "no passage matched the question, and the answer stated a number or code that no document gave, "
            "so it was withheld: the answer says the documents do not contain it"
        )
    elif sources.get("not_found") == "no_passages" and sources.get("original_text"):
        reasons.append("no passage matched the question, so the answer now says first that it is not from them")
    elif sources.get("not_found") == "replaced":
        reasons.append("no passage supports what the model wrote, so the answer says the documents do not contain it")
    if conflicts := sources.get("conflicts"):
        named = ", ".join(dict.fromkeys(c["source"] for c in conflicts))
        reasons.append(f"another document gives a different figure ({named}), and the answer now quotes it")
    if sources.get("markup_removed"):
        reasons.append("the prompt's <knowledge_base> tag in the answer now reads 'the documents'")
    if sources.get("markers_merged"):
        reasons.append("a citation the model wrote twice in one sentence now appears once")
    if repairs := sources.get("repairs"):
        reasons.append(repair_reason(repairs))
    if removed := validation.get("citations", {}).get("removed"):
        reasons.append(f"removed citations to sources that do not exist: {', '.join(removed)}")
    if adjustments := validation.get("tone", {}).get("adjustments"):
        reasons.append("tone: " + ", ".join(adjustments))
    if issues := validation.get("output_guardrail", {}).get("issues"):
        reasons.append("output guardrail: " + ", ".join(issues))
    return "; ".join(reasons) or "the answer was revised after streaming"


class TokenGate:
    """Generator tokens pass through a PII redactor, so personal data split across tokens never goes out raw."""

    def __init__(self) -> None:
        self.sent: list[str] = []
        self._redactor: StreamRedactor | None = None
        self._markers: MarkerStripper | None = None  # a run with no sources: its citation markers cite nothing

    def start(self, node_input: dict[str, Any]) -> None:
        """A generator run starts: PII already in the question or the sources may be repeated."""
        documents = node_input.get("documents") or []
        sources = "\n".join(d.get("text", "") for d in documents)
        question = node_input.get("question", "")
        self._redactor = StreamRedactor(allowed=known_pii(question, sources), seen_text=f"{question}\n{sources}")
        self._markers = None if node_input.get("intent") == "rag" and documents else MarkerStripper()

    def feed(self, text: str) -> TokenEvent | None:
        """The part of the token that is safe to send now."""
        safe = self._redactor.feed(text) if self._redactor else text
        return self._sent(self._markers.feed(safe) if self._markers else safe)

    def found_sources(self) -> TokenEvent | None:
        """The model called a tool to search the documents: its markers may now cite what it found, so they stream
        as written from here on (what the stripper held goes out now)."""
        held, self._markers = (self._markers.flush() if self._markers else ""), None
        return self._sent(held)

    def flush(self) -> TokenEvent | None:
        """Whatever the redactor (and the marker stripper) still hold, at the end of the generator."""
        safe, self._redactor = (self._redactor.flush() if self._redactor else ""), None
        if self._markers:
            safe, self._markers = self._markers.feed(safe) + self._markers.flush(), None
        return self._sent(safe)

    def _sent(self, text: str) -> TokenEvent | None:
        if not text:
            return None
        self.sent.append(text)
        return TokenEvent(text=text)


def guarded_input(question: str, deps: GraphDeps) -> tuple[str, list[str]]:
    """The question as the graph may store it (PII the policy redacts is already replaced) and what was redacted."""
    verdict = check_input(question, deps.policy)
    return verdict.text, sorted({m.type for m in verdict.matches})


class EventMapper:
    """Turns (mode, chunk) pairs of graph.astream into SSE payloads."""

    def __init__(self) -> None:
        self.gate = TokenGate()
        self._reports: dict[str, dict] = {}
        self.usage: ModelUsage | None = None  # summed over the turn's model calls that reported counts

    def map(self, mode: str, chunk: Any) -> list[BaseModel]:
        """The payloads for one stream item (often none)."""
        if mode == "messages":
            message, meta = chunk
            self._count(getattr(message, "usage_metadata", None))
            if meta.get("langgraph_node") == ANSWER_NODE and getattr(message, "tool_call_chunks", None):
                held = self.gate.found_sources()
                return [held] if held else []
            text = message.text if meta.get("langgraph_node") == ANSWER_NODE else ""
            token = self.gate.feed(text) if text else None  # Ollama ends its stream with empty chunks
            return [token] if token else []
        if mode == "custom":
            return self._custom(chunk)
        return self._task(chunk) if mode == "tasks" else []

    def _count(self, used: Any) -> None:
        """Add one model call's counts (its last chunk carries them: llama.cpp's `include_usage`, Ollama's)."""
        if not used:
            return
        before = self.usage or ModelUsage(prompt_tokens=0, completion_tokens=0)
        self.usage = ModelUsage(
            prompt_tokens=before.prompt_tokens + int(used.get("input_tokens") or 0),
            completion_tokens=before.completion_tokens + int(used.get("output_tokens") or 0),
        )

    def _custom(self, item: dict) -> list[BaseModel]:
        if item.get("kind") == "report":
            self._reports[item["node"]] = item
        elif item.get("kind") == "progress":
            return [StatusEvent(node=item["node"], phase="progress", label=item["label"])]
        return []

    def _task(self, task: dict) -> list[BaseModel]:
        node = task["name"]
        if node in SILENT_NODES or node not in NODE_LABELS:
            return []
        if "input" in task:  # a task starts
            if node == ANSWER_NODE:
                self.gate.start(task["input"] or {})
            return [StatusEvent(node=node, phase="start", label=NODE_LABELS[node] + "…")]
        said = self._reports.pop(node, {})
        end = StatusEvent(
            node=node, phase="end", label=said.get("label") or NODE_LABELS[node], detail=said.get("detail")
        )
        rest = self.gate.flush() if node == ANSWER_NODE else None
        return [rest, end] if rest else [end]


async def turn_events(
    graph: CompiledStateGraph,
    deps: GraphDeps,
    question: str,
    mode: Mode,
    thread_id: str,
    run_id: str,
    use_memory: bool,
    guardrail: GuardrailMode = "enforce",
    keep_scope: bool = True,
) -> AsyncIterator[BaseModel]:
    """Run one turn, yielding status, token, replace, sources and done (or error) payloads in order."""
    config = {"configurable": {"thread_id": thread_id}, "run_id": run_id}
    stored_question, redactions = guarded_input(question, deps)
    mapper = EventMapper()
    request = turn_input(stored_question, mode, use_memory, redactions, run_id, guardrail, keep_scope)
    stream = graph.astream(request, config, context=deps, stream_mode=STREAM_MODES, durability="exit")
    try:
        async with aclosing(stream) as items:
            async for mode_, chunk in items:
                for payload in mapper.map(mode_, chunk):
                    yield payload
        record = (await graph.aget_state(config)).values.get("turn_record")
    except Exception as exc:  # the stream reports it; the caller discards what the turn wrote
        log.exception("turn failed on thread %s", thread_id)
        yield describe_error(exc, deps)
        return
    for payload in final_events(record, "".join(mapper.gate.sent), thread_id, mapper.usage):
        yield payload


def _settled(text: str) -> str:
    """Text as compared with what streamed: spaces at line ends do not show (a removed marker leaves one)."""
    return re.sub(r"[ \t]+(?=\n|$)", "", text).strip()


def final_events(record: TurnRecord, sent: str, thread_id: str, usage: ModelUsage | None = None) -> list[BaseModel]:
    """What follows the graph: the answer (if nothing streamed) or a replacement, sources, then done."""
    answer = record["answer"]
    out: list[BaseModel] = []
    if not sent and answer:  # decided without the model (FAQ, small talk, a block, an unknown @mention)
        out.append(TokenEvent(text=answer))
    elif sent and _settled(answer) != _settled(sent):
        out.append(ReplaceEvent(text=answer, reason=replace_reason(record["validation"] or {})))
    if record["sources"]:
        out.append(SourcesEvent(sources=record["sources"]))
    out.append(
        DoneEvent(
            thread_id=thread_id,
            question=record["question"],
            answer=answer,
            intent=record["intent"],
            rewritten_query=record["rewritten_query"],
            route_reason=record["route_reason"],
            scope=record["scope"],
            triage=record["triage"],
            validation=record["validation"],
            usage=usage,
        )
    )
    return out
