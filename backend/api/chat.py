"""POST /api/chat/stream (SSE) and POST /api/chat (JSON): one chat turn."""

import asyncio
import logging
import time
import uuid
from collections.abc import AsyncIterator
from typing import Annotated

from fastapi import APIRouter, Depends, HTTPException
from sse_starlette import EventSourceResponse, ServerSentEvent

from backend.api.deps import Services, get_services
from backend.memory.turns import Turn
from backend.schemas import SSE_EVENTS, ChatRequest, ChatResponse, DoneEvent, ErrorEvent, SourcesEvent, StatusEvent
from backend.streaming import turn_events

log = logging.getLogger(__name__)
router = APIRouter(prefix="/api", tags=["chat"])
ServicesDep = Annotated[Services, Depends(get_services)]


def _check_length(body: ChatRequest, services: Services) -> None:
    limit = services.deps.settings.max_message_chars
    if not body.message.strip():
        raise HTTPException(422, "message is empty: send a question of at least one non-blank character")
    if len(body.message) > limit:
        raise HTTPException(413, f"message is {len(body.message)} characters; the limit is {limit}")


async def _turn(body: ChatRequest, services: Services) -> AsyncIterator:
    """The turn's payloads; records the turn before `done` goes out, then schedules the summary update."""
    thread_id = body.thread_id or str(uuid.uuid4())
    await services.summaries.settle(thread_id)  # never let a summary update race this turn
    started = time.perf_counter()
    steps: list[str] = []
    sources: list[dict] = []
    completed = False
    async for event in turn_events(
        services.graph, services.deps, body.message, body.mode, thread_id, str(uuid.uuid4()), body.use_memory
    ):
        if isinstance(event, StatusEvent) and event.phase == "end":
            steps.append(f"{event.node}: {event.label}" + (f" ({event.detail})" if event.detail else ""))
        elif isinstance(event, SourcesEvent):
            sources = [s.model_dump() for s in event.sources]
        elif isinstance(event, DoneEvent):
            await _record(services, body, event, sources, steps, time.perf_counter() - started)
            completed = True
        yield event
    if completed and body.use_memory:
        services.summaries.schedule(thread_id)  # after `done` went out: off the latency path


async def _record(
    services: Services, body: ChatRequest, done: DoneEvent, sources: list[dict], steps: list[str], seconds: float
) -> None:
    question = done.question or body.message  # redacted when the policy redacts PII
    await services.threads.touch(done.thread_id, question)
    await services.turns.record(
        Turn(
            thread_id=done.thread_id,
            question=question,
            answer=done.answer,
            rewritten_query=done.rewritten_query,
            intent=done.intent,
            sources=sources,
            steps=steps,
            provider=services.models.backend,
            model=services.models.model,
            latency_ms=round(seconds * 1000, 1),
            use_memory=body.use_memory,
        )
    )


@router.post("/chat/stream", summary="Stream one chat turn as server-sent events")
async def chat_stream(body: ChatRequest, services: ServicesDep) -> EventSourceResponse:
    """metadata, status…, token…, sources?, done | error."""
    _check_length(body, services)

    async def frames() -> AsyncIterator[ServerSentEvent]:
        try:
            async for event in _turn(body, services):
                yield ServerSentEvent(data=event.model_dump_json(), event=SSE_EVENTS[type(event)])
        except asyncio.CancelledError:
            log.info("client disconnected; turn cancelled and not recorded")
            raise

    return EventSourceResponse(
        frames(),
        ping=int(max(1, services.deps.settings.heartbeat_seconds)),
        headers={"X-Accel-Buffering": "no", "Cache-Control": "no-cache"},
    )


@router.post("/chat", response_model=ChatResponse, summary="Run one chat turn and return the whole answer")
async def chat(body: ChatRequest, services: ServicesDep) -> ChatResponse:
    """The same turn as the stream, collected into one JSON body."""
    _check_length(body, services)
    sources: list = []
    done: DoneEvent | None = None
    async for event in _turn(body, services):  # consumed to the end, so the summary update is scheduled
        if isinstance(event, ErrorEvent):
            raise HTTPException(503 if event.code == "model_unreachable" else 502, event.message)
        if isinstance(event, SourcesEvent):
            sources = event.sources
        if isinstance(event, DoneEvent):
            done = event
    if done is None:
        raise HTTPException(502, "the turn ended without an answer")
    return ChatResponse(
        thread_id=done.thread_id,
        answer=done.answer,
        sources=sources,
        intent=done.intent,
        rewritten_query=done.rewritten_query,
    )
