"""GET/PATCH/DELETE /api/threads: list, read, rename and delete conversations."""

from typing import Literal

from fastapi import APIRouter, HTTPException
from fastapi.responses import JSONResponse, PlainTextResponse

from backend.api.collections import (
    readable_documents,
    thread_names,
    visible_sources,
    visible_turn,
)
from backend.api.deps import Services, ServicesDep
from backend.api.errors import responses
from backend.api.security import Principal, PrincipalDep
from backend.contract.api import MessageOut, ThreadDetail, ThreadPatch, ThreadSummary
from backend.contract.text import shown, title_from
from backend.contract.types import INTERNAL
from backend.memory.export import thread_markdown
from backend.rag.retriever import still_readable

router = APIRouter(prefix="/api/threads", tags=["threads"])


def _missing(thread_id: str) -> HTTPException:
    return HTTPException(404, f"thread {shown(thread_id)} does not exist; GET /api/threads lists the threads")


async def _existing(services: Services, thread_id: str, principal: Principal) -> dict:
    row = await services.conversations.thread(thread_id, principal.owner)
    if row is None:
        if services.runner.active(thread_id) is not None and await _owns(services, thread_id, principal):
            raise HTTPException(  # GET shows the new thread's first run: it exists, it is not stored yet
                409,
                f"thread {thread_id!r} is answering its first question and is stored when that answer is; "
                "try again then, or stop the run (POST /api/runs/{id}/cancel)",
            )
        raise _missing(thread_id)
    return row


async def _owns(services: Services, thread_id: str, principal: Principal) -> bool:
    """Whether the thread (or a new thread's first run) is the principal's; without accounts everything is."""
    return principal.user is None or await services.conversations.owner_of(thread_id) == principal.owner


@router.get("", response_model=list[ThreadSummary])
async def list_threads(services: ServicesDep, principal: PrincipalDep) -> list[dict]:
    """Your threads, most recently updated first; a new thread whose first answer is still being written (on any
    replica) is listed too, under its question, so a page reloaded meanwhile finds it."""
    running = await services.runner.answering()  # read first: a run that ends meanwhile is then stored
    stored = await services.conversations.threads(principal.owner)
    listed = {t["thread_id"] for t in stored}
    first: dict[str, dict] = {}
    for run in running:  # oldest first: a thread's title is its first question
        if run["thread_id"] not in listed and run["thread_id"] not in first:
            first[run["thread_id"]] = {**run, "title": title_from(run["question"]), "updated_at": run["created_at"]}
    if principal.user is not None:
        first = {t: row for t, row in first.items() if await services.conversations.owner_of(t) == principal.owner}
    return sorted([*first.values(), *stored], key=lambda t: t["updated_at"], reverse=True)  # stable: ties as stored


@router.get("/{thread_id}", response_model=ThreadDetail, responses=responses(404))
async def get_thread(thread_id: str, services: ServicesDep, principal: PrincipalDep) -> ThreadDetail:
    """A thread's turns (completed, stopped or interrupted), answers with their sources, triage and validation,
    and the run answering on it now, if any (a new thread's first run shows before any turn is stored)."""
    if not await _owns(services, thread_id, principal):
        raise _missing(thread_id)  # with accounts, a new thread's first run shows to its owner only
    run = services.runner.active(thread_id)
    active = await services.runner.info(run.run_id) if run else None
    row = await services.conversations.thread(thread_id, principal.owner)
    if row is None and run is not None:
        return ThreadDetail(thread_id=thread_id, title=title_from(run.question), messages=[], active_run=active)
    row = await _existing(services, thread_id, principal)
    readable = await readable_documents(services, principal)
    turns = await _visible_turns(services, thread_id, readable)
    if run is not None and any(turn["run_id"] == run.run_id for turn in turns):
        active = None  # stored with its final checkpoint, the run is only sending its last events: show it once
    messages: list[MessageOut] = []
    for turn in turns:
        messages.append(MessageOut(role="user", content=turn["question"]))
        messages.append(
            MessageOut(
                role="assistant",
                content=turn["answer"],
                sources=turn["sources"],
                intent=turn["intent"],
                route_reason=turn["route_reason"],
                scope=turn["scope"],
                steps=turn["steps"],
                triage=turn["triage"],
                validation=turn["validation"],
                status=turn["status"],
                latency_ms=turn["latency_ms"] if turn["status"] == "completed" else None,  # a cut turn has none
            )
        )
    values = (await services.graph.aget_state({"configurable": {"thread_id": thread_id}})).values
    scope = await _carried_scope(services, readable, values)
    return ThreadDetail(thread_id=thread_id, title=row["title"], messages=messages, active_run=active, scope=scope)


async def _carried_scope(services: Services, readable: frozenset[str] | None, values: dict) -> list[str]:
    """The documents a follow-up on the thread keeps searching: those that still exist and the reader may still read
    (`readable`, from readable_documents: None when the reader may read every document). A deleted document's
    scope stayed above the box ("Follow-up questions search only Warehouse Safety.pdf"; tester), though the router
    no longer keeps it."""
    return await still_readable(values.get("scope", []), services.knowledge.retriever.scoped(readable))


async def _visible_turns(services: Services, thread_id: str, readable: frozenset[str] | None) -> list[dict]:
    """The thread's turns as the reader may see them now (`visible_turn`; `readable` from readable_documents): a
    citation to a document they may no longer read is withheld, and so is its name in an FAQ answer's sources, a
    step line or a route reason."""
    turns = await services.conversations.turns(thread_id)
    names = None if readable is None else await thread_names(services, readable, thread_id, turns)
    return [visible_turn(t, readable, names) for t in turns]


EXPORT_FORMATS = {
    200: {
        "description": "The thread as JSON (default) or Markdown (`?format=markdown`).",
        "content": {
            "application/json": {"schema": {"type": "object"}},
            "text/markdown": {"schema": {"type": "string"}},
        },
    }
}


@router.get("/{thread_id}/export", response_model=None, responses={**EXPORT_FORMATS, **responses(404, 409, 422)})
async def export_thread(
    thread_id: str, services: ServicesDep, principal: PrincipalDep, format: Literal["json", "markdown"] = "json"
) -> JSONResponse | PlainTextResponse:
    """The whole thread with every turn's details, as JSON or Markdown."""
    row = await _existing(services, thread_id, principal)
    turns = await _visible_turns(services, thread_id, await readable_documents(services, principal))
    if format == "markdown":
        return PlainTextResponse(thread_markdown(row, turns), media_type="text/markdown; charset=utf-8")
    return JSONResponse({**row, "turns": turns})


@router.get("/{thread_id}/memory", responses=responses(404, 409))
async def thread_memory(thread_id: str, services: ServicesDep, principal: PrincipalDep) -> dict:
    """The thread's memory layers: rolling summary, Q&A index and citation ledger (plus the carried scope)."""
    await _existing(services, thread_id, principal)
    values = (await services.graph.aget_state({"configurable": {"thread_id": thread_id}})).values
    entries = [{k: v for k, v in e.items() if k not in (*INTERNAL, "key")} for e in values.get("ledger", {}).values()]
    readable = await readable_documents(services, principal)
    ledger = visible_sources(entries, readable)  # type: ignore[arg-type]
    scope = await _carried_scope(services, readable, values)
    return {
        "summary": values.get("summary", ""),
        "qa_index": values.get("qa_index", []),
        "ledger": sorted(ledger, key=lambda e: int(e["id"][1:])),
        "scope": scope,
        "summarized_upto": values.get("summarized_upto", 0),
    }


@router.patch("/{thread_id}", response_model=ThreadSummary, responses=responses(404, 409, 422))
async def rename_thread(thread_id: str, body: ThreadPatch, services: ServicesDep, principal: PrincipalDep) -> dict:
    """Set a thread's title."""
    await _existing(services, thread_id, principal)
    await services.conversations.rename(thread_id, body.title.strip(), principal.owner)
    return await _existing(services, thread_id, principal)


@router.delete("/{thread_id}", status_code=204, responses=responses(404, 409))
async def delete_thread(thread_id: str, services: ServicesDep, principal: PrincipalDep) -> None:
    """Remove a thread, its turns and all its checkpoints, all at once or not at all."""
    await _existing(services, thread_id, principal)
    await remove_thread(services, thread_id)


async def remove_thread(services: Services, thread_id: str) -> None:
    """Delete a thread with its checkpoints, its runs' logs and saved KV cache; 409 while a question is answered
    on it."""
    runner = services.runner
    if runner.queue.ahead(thread_id):
        raise HTTPException(409, f"a question is being answered on thread {thread_id!r}; stop it, then delete")
    async with runner.queue.turn(thread_id):  # no turn may start while the thread is being deleted
        await runner.summaries.settle(thread_id)  # a pending summary update would write a checkpoint back
        await services.checkpointer.adelete_thread(thread_id)
        await runner.runlog.forget_thread(thread_id)  # its runs' questions and answers go too
    if services.models.kv is not None:
        services.models.kv.delete(thread_id)  # the thread's saved KV cache goes with it
