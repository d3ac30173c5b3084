"""GET /api/runs/{id}, GET /api/runs/{id}/stream (replay, then follow) and POST /api/runs/{id}/cancel (Stop)."""

from typing import Annotated

from fastapi import APIRouter, Header, HTTPException, Query
from pydantic import BaseModel
from sse_starlette import EventSourceResponse

from backend.api.chat import STREAM_RESPONSE, run_stream
from backend.api.collections import DocumentNames, readable_documents, thread_names, visible_event
from backend.api.deps import Services, ServicesDep
from backend.api.errors import responses
from backend.api.security import Principal, PrincipalDep
from backend.contract.api import RunInfo
from backend.contract.events import DoneEvent, SourcesEvent, StatusEvent
from backend.contract.text import shown

router = APIRouter(prefix="/api/runs", tags=["runs"])
EVENT_NUMBER = r"^\s*[0-9]{0,18}\s*$"  # empty: none seen; at most 18 digits, so it fits a SQLite integer
MAX_EVENT = 2**63 - 1  # the largest event number SQLite and Postgres store
LAST_EVENT_HELP = "The number of the last event the client has seen (the SSE `id:`)."
AFTER_HELP = "Send the events numbered above this; wins over the Last-Event-ID header."


async def _existing(services: Services, run_id: str, principal: Principal) -> dict:
    info = await services.runner.info(run_id)
    theirs = info is not None and principal.user is not None  # with accounts, a run is its thread owner's only
    if theirs and await services.conversations.owner_of(info["thread_id"]) != principal.owner:
        info = None
    if info is None:
        hours = services.deps.settings.run_log_hours
        raise HTTPException(
            404, f"run {shown(run_id)} does not exist (or finished more than {hours:g} h ago and its log was pruned)"
        )
    return info


def _after(last_event_id: str, after: int | None) -> int:
    if after is not None:
        return after
    return int(last_event_id) if last_event_id.strip() else 0  # its pattern was checked


@router.get("/{run_id}", response_model=RunInfo, responses=responses(404))
async def get_run(run_id: str, services: ServicesDep, principal: PrincipalDep) -> dict:
    """A run's thread, question, status and latest event number."""
    return await _existing(services, run_id, principal)


@router.get(
    "/{run_id}/stream",
    summary="Replay a run's events after a given number, then follow it live until it ends",
    response_class=EventSourceResponse,
    responses={**STREAM_RESPONSE, **responses(404, 422)},
)
async def follow_run(
    run_id: str,
    services: ServicesDep,
    principal: PrincipalDep,
    after: Annotated[
        int | None, Query(ge=0, le=MAX_EVENT, description="Send the events numbered above this; wins over the header.")
    ] = None,
    last_event_id: Annotated[str, Header(pattern=EVENT_NUMBER, description=LAST_EVENT_HELP)] = "",
) -> EventSourceResponse:
    """The events a client missed (after `Last-Event-ID` or `?after=`), then the new ones; a finished run closes.
    Citations, and the names in FAQ answers, step lines and route reasons, of documents the reader may no longer
    read are withheld, as on a reloaded thread."""
    start = _after(last_event_id, after)
    info = await _existing(services, run_id, principal)
    readable = await readable_documents(services, principal)

    names: DocumentNames | None = None  # looked up at the first event that may name a document

    async def as_reader_sees(event: BaseModel) -> BaseModel:
        nonlocal names
        if readable is None or not isinstance(event, SourcesEvent | StatusEvent | DoneEvent):
            return event
        if names is None:
            thread_id = info["thread_id"]
            names = await thread_names(services, readable, thread_id, await services.conversations.turns(thread_id))
        return visible_event(event, readable, names)

    return run_stream(services, run_id, start, view=as_reader_sees)


@router.post("/{run_id}/cancel", response_model=RunInfo, responses=responses(404, 409))
async def cancel_run(run_id: str, services: ServicesDep, principal: PrincipalDep) -> dict:
    """Stop a run: the model request is cancelled, the partial answer stays in the thread marked `stopped`."""
    info = await _existing(services, run_id, principal)
    if not await services.runner.stop(run_id):  # here, or on the replica running it
        raise HTTPException(
            409, f"run {shown(run_id)} has already finished ({info['status']}); there is nothing to stop"
        )
    return await _existing(services, run_id, principal)
