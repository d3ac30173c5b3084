"""GET /v1/models and POST /v1/chat/completions: Ragline as an OpenAI-compatible server (see backend/completions.py).

A request runs one Ragline turn on a thread: the client's X-Ragline-Thread-Id header, its metadata.thread_id, Open
WebUI's chat id header (RAG_V1_CHAT_ID_HEADER), or else the thread whose conversation its earlier messages
repeat; otherwise a new thread. The response names it (header X-Ragline-Thread-Id and `ragline.thread_id`).
"""

import asyncio
import hashlib
import hmac
import logging
import re
import time
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import aclosing
from datetime import datetime
from functools import partial
from typing import Annotated, Any

import anyio
from fastapi import APIRouter, Depends, Header, Request
from fastapi.responses import JSONResponse, Response
from sse_starlette import EventSourceResponse, ServerSentEvent

from backend.api.asker import asker_of
from backend.api.collections import readable_documents
from backend.api.deps import Services, ServicesDep
from backend.api.errors import checks_credentials, openai_error, openai_error_body, turn_openai_error
from backend.api.leaving import SHUTDOWN_GRACE_SECONDS, ClientLeft, until_client_leaves, until_set
from backend.api.security import Principal, PrincipalDep
from backend.clock import now
from backend.completions import (
    DONE_LINE,
    Conversation,
    ThreadChoice,
    TurnWriter,
    conversation_key,
    read_conversation,
    stopped_body,
)
from backend.contract.events import DoneEvent
from backend.contract.openai import (
    ChatCompletion,
    ChatCompletionRequest,
    ModelCard,
    ModelList,
    OpenAIError,
    OpenAIRequestError,
    ThreadFrom,
)
from backend.contract.text import THREAD_ID_PATTERN, THREAD_ID_RULE, shown
from backend.contract.types import Mode
from backend.rag.mentions import resolve_one
from backend.runs.live import LiveRun

log = logging.getLogger(__name__)
MODEL_AUTO, MODEL_CHAT, DOCUMENT_PREFIX = "ragline", "ragline-chat", "ragline:"
THREAD_HEADER = "X-Ragline-Thread-Id"
SERVER_STOPPING = "The server is stopping, so the answer ends here; ask again once it is back"
DESCRIPTIONS = {
    400: "The request cannot be answered (empty messages, last message not from the user, images, tools, n > 1, "
    "a message over RAG_MAX_MESSAGE_CHARS, a malformed body); `param` names the field.",
    401: "RAG_API_KEYS is set and the request has no `Authorization: Bearer` with one of them.",
    404: "No such model (GET /v1/models lists them).",
    409: "The turn was stopped before its answer ended (code `stopped`): Stop in another client, or its thread or "
    "account was deleted; a stream ends with this error line instead.",
    502: "The model server reported an error.",
    503: "The model server could not be reached.",
}
COMPLETION_RESPONSES: dict[int | str, dict[str, Any]] = {
    200: {
        "description": "The completion; with `stream: true`, server-sent `data:` lines of ChatCompletionChunk JSON "
        "ending with `data: [DONE]` (a failed turn's last line is an OpenAIError).",
        "content": {"text/event-stream": {"itemSchema": {"$ref": "#/components/schemas/ChatCompletionChunk"}}},
    }
}


def openai_responses(*codes: int) -> dict[int | str, dict[str, Any]]:
    """OpenAPI `responses` for a /v1 route's errors, all in OpenAI's error shape."""
    return {code: {"model": OpenAIError, "description": DESCRIPTIONS[code]} for code in codes}


def _digest(value: str) -> bytes:
    return hashlib.sha256(value.encode()).digest()


@checks_credentials
def require_api_key(request: Request) -> None:
    """When RAG_API_KEYS is set, the request must carry one of them as a bearer token (compared in constant time).

    With RAG_AUTH=local, personal API keys (or a session) authenticate /v1 as every route, and RAG_API_KEYS is unused.
    """
    keys = request.app.state.settings.api_key_list
    if not keys or request.app.state.settings.auth != "off":
        return
    scheme, _, token = request.headers.get("authorization", "").partition(" ")
    given = _digest(token.strip())
    matches = [hmac.compare_digest(given, _digest(key)) for key in keys]  # every key compared, whichever matches
    if scheme.lower() != "bearer" or not any(matches):
        raise OpenAIRequestError(401, "Incorrect or missing API key: send Authorization: Bearer <key>")


router = APIRouter(prefix="/v1", tags=["openai"], dependencies=[Depends(require_api_key)])


def mentionable(names: list[str]) -> list[str]:
    """Documents an @mention names exactly: quotable, and no other document matches the name."""
    return [n for n in names if '"' not in n and resolve_one(n, names) == [n]]


def _epoch(timestamp: str | None, default: int) -> int:
    try:
        return int(datetime.fromisoformat(timestamp).timestamp()) if timestamp else default
    except ValueError:
        return default


@router.get("/models", response_model=ModelList, summary="List the models", responses=openai_responses(401))
async def list_models(request: Request, services: ServicesDep, principal: PrincipalDep) -> ModelList:
    """ragline (documents or chat, as the router decides), ragline-chat (no documents), ragline:<document> for each
    document you may read."""
    return await _models(request, services, principal)


@router.get(
    "/models/{model_id:path}", response_model=ModelCard, summary="One model", responses=openai_responses(401, 404)
)
async def retrieve_model(model_id: str, request: Request, services: ServicesDep, principal: PrincipalDep) -> ModelCard:
    """One model of GET /v1/models (the OpenAI SDK's `models.retrieve`); 404 `model_not_found` for any other."""
    found = next((card for card in (await _models(request, services, principal)).data if card.id == model_id), None)
    if found is None:
        raise no_such_model(model_id)
    return found


async def _models(request: Request, services: ServicesDep, principal: PrincipalDep) -> ModelList:
    """The models the principal may ask."""
    started = request.app.state.started_at
    retriever = services.knowledge.retriever.scoped(await readable_documents(services, principal))
    searchable = {r.name: r for r in await asyncio.to_thread(retriever.searchable)}
    cards = [ModelCard(id=MODEL_AUTO, created=started), ModelCard(id=MODEL_CHAT, created=started)]
    for name in mentionable(list(searchable)):
        created = _epoch(searchable[name].ingested_at, started)
        cards.append(ModelCard(id=DOCUMENT_PREFIX + name, created=created))
    return ModelList(data=cards)


async def turn_for_model(
    model: str, question: str, services: Services, readable: frozenset[str] | None = None
) -> tuple[Mode, str]:
    """The mode and question a model asks for; ragline:<document> (one the asker may read) aims the question at it
    with an @mention."""
    if model == MODEL_AUTO:
        return "auto", question
    if model == MODEL_CHAT:
        return "chat", question
    name = model.removeprefix(DOCUMENT_PREFIX)
    names = await services.deps.retriever.scoped(readable).document_names()
    if model.startswith(DOCUMENT_PREFIX) and name in mentionable(names):
        return "rag", f'@"{name}" {question}'
    raise no_such_model(model)


def no_such_model(model: str) -> OpenAIRequestError:
    """The 404 for a model id that GET /v1/models does not list."""
    message = f"The model {model!r} does not exist; GET /v1/models lists ragline, ragline-chat and ragline:<document>"
    return OpenAIRequestError(404, message, "model", "model_not_found")


def _named_threads(request: Request, body: ChatCompletionRequest, header: str | None) -> list[tuple[ThreadFrom, str]]:
    """Thread ids the request names, strongest first, each checked against the thread id pattern."""
    chat_header = request.app.state.settings.v1_chat_id_header
    metadata = (body.metadata or {}).get("thread_id")
    named: list[tuple[ThreadFrom, str, str]] = [
        ("header", header or "", THREAD_HEADER),
        ("metadata", metadata if isinstance(metadata, str) else "", "metadata.thread_id"),
        ("chat_id_header", request.headers.get(chat_header, "") if chat_header else "", chat_header),
    ]
    if metadata is not None and not isinstance(metadata, str):
        raise OpenAIRequestError(400, "metadata.thread_id must be a string", "metadata.thread_id", "invalid_value")
    for _, value, param in named:
        if value and not re.fullmatch(THREAD_ID_PATTERN, value):
            message = f"{param}: use {THREAD_ID_RULE}"
            raise OpenAIRequestError(400, message, param, "invalid_value")
    return [(source, value) for source, value, _ in named if value]


async def choose_thread(
    named: list[tuple[ThreadFrom, str]], conversation: Conversation, services: Services, principal: Principal
) -> ThreadChoice:
    """The named thread, else the thread the earlier messages are the conversation of, else a new one.

    A one-message request under a chat id whose thread already has turns is not a turn of that thread: Open WebUI
    sends its title and tag prompts that way, with the chat's id.
    """
    for source, thread_id in named:
        exists = await services.conversations.thread(thread_id, principal.owner) is not None
        if source == "chat_id_header" and exists and not conversation.earlier:
            continue
        return ThreadChoice(thread_id, source, unmatched_history=bool(conversation.earlier) and not exists)
    if conversation.earlier:
        found = await services.conversations.thread_for_key(conversation_key(conversation.earlier))
        owners = (principal.owner, None)  # with accounts, another user's conversation does not continue
        if found and (principal.user is None or await services.conversations.owner_of(found) in owners):
            return ThreadChoice(found, "history", unmatched_history=False)
    return ThreadChoice(str(uuid.uuid4()), "new", unmatched_history=bool(conversation.earlier))


@router.post(
    "/chat/completions",
    response_model=ChatCompletion,
    summary="Answer the conversation's last user message as a Ragline turn",
    responses={**COMPLETION_RESPONSES, **openai_responses(400, 401, 404, 409, 502, 503)},
)
async def chat_completions(
    body: ChatCompletionRequest,
    request: Request,
    services: ServicesDep,
    principal: PrincipalDep,
    x_ragline_thread_id: Annotated[
        str | None,
        Header(description=f"Continue (or start) this Ragline thread: {THREAD_ID_RULE}"),
    ] = None,  # checked with the other thread ids the request may name, so each gets the same plain message
) -> Any:
    """One turn: a completion, or with `stream: true` its chunks (status lines, tokens, a last chunk with sources)."""
    settings = services.deps.settings
    conversation = read_conversation(body, settings.max_message_chars)
    asker = await asker_of(services, principal)
    mode, question = await turn_for_model(body.model, conversation.question, services, asker.readable)
    named = _named_threads(request, body, x_ragline_thread_id)
    thread = await choose_thread(named, conversation, services, principal)
    if principal.user is not None and not await services.conversations.claim(thread.thread_id, principal.owner):
        raise OpenAIRequestError(404, f"The thread {shown(thread.thread_id)} does not exist", "thread_id", "not_found")
    base_url = str(request.base_url).rstrip("/")
    writer = TurnWriter(body.model, int(time.time()), thread, conversation, base_url)
    headers = {THREAD_HEADER: thread.thread_id}
    if body.stream:
        include_usage = bool(body.stream_options and body.stream_options.include_usage)
        start = partial(services.runner.start, question, mode, thread.thread_id, asker=asker)
        stopping = anyio.Event()  # set by sse-starlette when uvicorn is asked to exit
        return EventSourceResponse(
            _frames(start, writer, services, include_usage, stopping),
            ping=int(max(1, settings.heartbeat_seconds)),
            headers={**headers, "X-Accel-Buffering": "no", "Cache-Control": "no-cache"},
            shutdown_event=stopping,
            shutdown_grace_period=SHUTDOWN_GRACE_SECONDS,
        )
    events = services.runner.events(question, mode, thread.thread_id, asker=asker)
    try:  # a client that leaves stops the turn, and nothing of it is recorded, as on the stream
        await until_client_leaves(request, _collect(events, writer))
    except ClientLeft:
        return Response(status_code=499)  # nobody reads it: nginx's "client closed request"
    if writer.error:
        status, body = turn_openai_error(writer.error)
        return JSONResponse(body.model_dump(), status_code=status)
    if writer.stopped:
        return JSONResponse(stopped_body().model_dump(), status_code=409, headers=headers)
    if writer.done is None:
        return openai_error(502, "the turn ended without an answer", code="internal_error")
    await services.conversations.remember_keys(writer.keys(), thread.thread_id, now())
    return JSONResponse(writer.completion().model_dump(mode="json"), headers=headers)


async def _collect(events: AsyncIterator, writer: TurnWriter) -> None:
    """Every event of the turn into the writer; cancelled, it closes the turn (which cancels the run)."""
    async with aclosing(events) as turn:
        async for event in turn:  # consumed to the end, so the summary update is scheduled
            writer.read(event)


async def _frames(
    start: Callable[[], Awaitable[LiveRun]],
    writer: TurnWriter,
    services: Services,
    include_usage: bool,
    stopping: anyio.Event,
) -> AsyncIterator[ServerSentEvent]:
    """The turn's chunks; its run starts once the stream is read, so a client gone before then starts nothing. A
    client that leaves stops the turn, and nothing of it is kept. When the server stops, the stream ends whole with
    an error line saying so (the SDK raises it as an APIError; it was cut mid-body, a connection error), and the run
    is left to the shutdown: start-up keeps its question and partial text in the thread, marked interrupted, as for
    the run streams."""
    status, ended = services.deps.settings.v1_status_events, False
    run = await start()
    try:
        async for _, event in until_set(run.follow(), stopping):
            writer.read(event)
            if isinstance(event, DoneEvent):  # stored before the client can send its next request
                await services.conversations.remember_keys(writer.keys(), writer.thread.thread_id, now())
            for line in writer.lines(event, status, include_usage):
                yield ServerSentEvent(data=line)
        ended = True
        if stopping.is_set() and writer.done is writer.error is writer.stopped is None:  # the run is not over
            stopped = openai_error_body(503, SERVER_STOPPING, code="server_stopping")
            yield ServerSentEvent(data=stopped.model_dump_json())
            yield ServerSentEvent(data=DONE_LINE)
    except asyncio.CancelledError:
        log.info("client disconnected from /v1/chat/completions; turn cancelled and not recorded")
        raise
    finally:
        if not ended:
            await services.runner.abandon(run)
