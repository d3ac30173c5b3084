"""POST /api/chat/stream (SSE) and POST /api/chat (JSON): one chat turn."""

import asyncio
import logging
from collections.abc import AsyncIterator
from contextlib import aclosing

from fastapi import APIRouter, HTTPException
from sse_starlette import EventSourceResponse, ServerSentEvent

from backend.api.deps import Services, ServicesDep
from backend.api.errors import responses
from backend.contract.api import ChatRequest, ChatResponse
from backend.contract.events import SSE_EVENTS, DoneEvent, ErrorEvent, SourcesEvent

log = logging.getLogger(__name__)
router = APIRouter(prefix="/api", tags=["chat"])
STREAM_RESPONSE = {
    200: {
        "description": "Server-sent events: metadata, status…, token…, replace?, sources?, then done or error.",
        "content": {"text/event-stream": {"itemSchema": {"$ref": "#/components/schemas/ChatStreamEvent"}}},
    }
}


def _check_length(body: ChatRequest, services: Services) -> None:
    limit = services.deps.settings.max_message_chars
    if not body.message.strip():
        raise HTTPException(422, "message is empty: send a question of at least one non-blank character")
    if len(body.message) > limit:
        raise HTTPException(413, f"message is {len(body.message)} characters; the limit is {limit}")


def _events(body: ChatRequest, services: Services) -> AsyncIterator:
    return services.runner.events(body.message, body.mode, body.thread_id, body.use_memory)


@router.post(
    "/chat/stream",
    summary="Stream one chat turn as server-sent events",
    response_class=EventSourceResponse,
    responses={**STREAM_RESPONSE, **responses(413, 422)},
)
async def chat_stream(body: ChatRequest, services: ServicesDep) -> EventSourceResponse:
    """metadata, status…, token…, sources?, done | error."""
    _check_length(body, services)

    async def frames() -> AsyncIterator[ServerSentEvent]:
        try:
            async with aclosing(_events(body, services)) as events:  # a client that leaves stops the turn now
                async for event in events:
                    yield ServerSentEvent(data=event.model_dump_json(), event=SSE_EVENTS[type(event)])
        except asyncio.CancelledError:
            log.info("client disconnected; turn cancelled and not recorded")
            raise

    return EventSourceResponse(
        frames(),
        ping=int(max(1, services.deps.settings.heartbeat_seconds)),
        headers={"X-Accel-Buffering": "no", "Cache-Control": "no-cache"},
    )


@router.post(
    "/chat",
    response_model=ChatResponse,
    summary="Run one chat turn and return the whole answer",
    responses=responses(413, 422, 502, 503),
)
async def chat(body: ChatRequest, services: ServicesDep) -> ChatResponse:
    """The same turn as the stream, collected into one JSON body (with its triage and validation)."""
    _check_length(body, services)
    sources: list = []
    done: DoneEvent | None = None
    async for event in _events(body, services):  # consumed to the end, so the summary update is scheduled
        if isinstance(event, ErrorEvent):
            raise HTTPException(503 if event.code == "model_unreachable" else 502, event.message)
        if isinstance(event, SourcesEvent):
            sources = event.sources
        if isinstance(event, DoneEvent):
            done = event
    if done is None:
        raise HTTPException(502, "the turn ended without an answer")
    return ChatResponse(sources=sources, **done.model_dump())
