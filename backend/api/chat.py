"""POST /api/chat/stream (SSE) and POST /api/chat (JSON): one chat turn."""

import asyncio
import logging
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import aclosing

import anyio
from fastapi import APIRouter, HTTPException, Request, Response
from pydantic import BaseModel
from sse_starlette import EventSourceResponse, ServerSentEvent

from backend.api.asker import asker_of
from backend.api.deps import Services, ServicesDep
from backend.api.errors import responses, turn_status
from backend.api.leaving import SHUTDOWN_GRACE_SECONDS, ClientLeft, until_client_leaves, until_set
from backend.api.security import Principal, PrincipalDep
from backend.contract.api import ChatRequest, ChatResponse
from backend.contract.events import SSE_EVENTS, DoneEvent, ErrorEvent, SourcesEvent
from backend.contract.text import shown
from backend.runs.live import LiveRun

log = logging.getLogger(__name__)
router = APIRouter(prefix="/api", tags=["chat"])
STREAM_RESPONSE = {
    200: {
        "description": "Server-sent events, each with its number in the run as `id:`: metadata, status…, "
        "token…, replace?, sources?, then done, error or stopped.",
        "content": {"text/event-stream": {"itemSchema": {"$ref": "#/components/schemas/ChatStreamEvent"}}},
    }
}


def _check_length(body: ChatRequest, services: Services) -> None:
    limit = services.deps.settings.max_message_chars
    if not any(c.isprintable() and not c.isspace() for c in body.message):  # blanks and control characters only
        raise HTTPException(422, "message is empty: send a question of at least one non-blank character")
    if len(body.message) > limit:
        raise HTTPException(413, f"message is {len(body.message)} characters; the limit is {limit}")


async def own_thread(body: ChatRequest, services: Services, principal: Principal) -> str | None:
    """The thread the turn runs on, now owned by the asker: a new one, or theirs; another's is a 404.

    With RAG_AUTH=off nothing is claimed: the one local person's turns run as they did before accounts.
    """
    if principal.user is None:
        return body.thread_id
    thread_id = body.thread_id or str(uuid.uuid4())
    if not await services.conversations.claim(thread_id, principal.owner):
        raise HTTPException(404, f"thread {shown(thread_id)} does not exist; GET /api/threads lists the threads")
    return thread_id


def run_stream(
    services: Services,
    run_id: str,
    after: int,
    on_leave: LiveRun | None = None,
    view: Callable[[BaseModel], Awaitable[BaseModel]] | None = None,
) -> EventSourceResponse:
    """A run's events after `after` as numbered SSE frames, with heartbeat pings and no proxy buffering.
    `on_leave`: the run to cancel if the client leaves; `view`: each event as this client may see it.

    When the server stops, the stream ends cleanly, with no last event: the run is not over (the shutdown leaves it
    to start-up to mark interrupted), so the client re-attaches as after a dropped connection and, once the server
    is back, gets its `stopped` event. (sse-starlette cut it mid-response, and uvicorn logged an error.)"""
    stopping = anyio.Event()  # set by sse-starlette when uvicorn is asked to exit

    async def frames() -> AsyncIterator[ServerSentEvent]:
        ended = False
        try:
            async for seq, event in until_set(services.runner.follow(run_id, after), stopping):
                event = await view(event) if view else event
                yield ServerSentEvent(id=str(seq), data=event.model_dump_json(), event=SSE_EVENTS[type(event)])
            ended = True
        except asyncio.CancelledError:
            log.info("client left run %s%s", run_id, "; run cancelled, nothing kept" if on_leave else "; it goes on")
            raise
        finally:
            if not ended and on_leave is not None:
                await services.runner.abandon(on_leave)

    return EventSourceResponse(
        frames(),
        ping=int(max(1, services.deps.settings.heartbeat_seconds)),
        headers={"X-Accel-Buffering": "no", "Cache-Control": "no-cache"},
        shutdown_event=stopping,
        shutdown_grace_period=SHUTDOWN_GRACE_SECONDS,
    )


@router.post(
    "/chat/stream",
    summary="Start a run for one chat turn and stream its events",
    response_class=EventSourceResponse,
    responses={**STREAM_RESPONSE, **responses(404, 413, 422)},
)
async def chat_stream(body: ChatRequest, services: ServicesDep, principal: PrincipalDep) -> EventSourceResponse:
    """metadata, status…, token…, sources?, then done | error | stopped; each event's `id:` is its number in the run.

    The run goes on when the client leaves (follow it again with GET /api/runs/{run_id}/stream), unless the request
    says `on_disconnect: "cancel"`.
    """
    _check_length(body, services)
    thread_id = await own_thread(body, services, principal)
    asker = await asker_of(services, principal, body.user_context)
    run = await services.runner.start(
        body.message, body.mode, thread_id, body.use_memory, body.guardrail, asker, body.keep_scope
    )
    on_leave = run if body.on_disconnect == "cancel" else None
    return run_stream(services, run.run_id, 0, on_leave)


@router.post(
    "/chat",
    response_model=ChatResponse,
    summary="Run one chat turn and return the whole answer",
    responses=responses(404, 413, 422, 502, 503),
)
async def chat(
    body: ChatRequest, request: Request, services: ServicesDep, principal: PrincipalDep
) -> ChatResponse | Response:
    """The same turn as the stream, collected into one JSON body (with its triage and validation)."""
    _check_length(body, services)
    runner = services.runner
    thread_id = await own_thread(body, services, principal)
    asker = await asker_of(services, principal, body.user_context)
    turn = runner.events(
        body.message, body.mode, thread_id, body.use_memory, body.on_disconnect, body.guardrail, asker, body.keep_scope
    )
    if body.on_disconnect == "continue":
        return await _collect(turn)
    try:  # a client that leaves cancels the run, and nothing of it is kept, as on the stream
        return await until_client_leaves(request, _collect(turn))
    except ClientLeft:
        return Response(status_code=499)  # nobody reads it: nginx's "client closed request"


async def _collect(turn: AsyncIterator) -> ChatResponse:
    """The turn's events into one response; closing early (cancelled) closes the turn."""
    sources: list = []
    done: DoneEvent | None = None
    async with aclosing(turn):
        async for event in turn:  # consumed to the end, so the summary update is scheduled
            if isinstance(event, ErrorEvent):
                raise HTTPException(turn_status(event), event.message)
            if isinstance(event, SourcesEvent):
                sources = event.sources
            if isinstance(event, DoneEvent):
                done = event
    if done is None:
        raise HTTPException(502, "the turn ended without an answer")
    return ChatResponse(sources=sources, **done.model_dump())
