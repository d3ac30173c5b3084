"""GET/PATCH/DELETE /api/threads: list, read, rename and delete conversations."""

from dataclasses import asdict
from typing import Annotated, Literal

from fastapi import APIRouter, Depends, HTTPException
from fastapi.responses import JSONResponse, PlainTextResponse

from backend.api.deps import Services, get_services
from backend.memory.export import thread_markdown
from backend.schemas import MessageOut, SourceOut, ThreadDetail, ThreadPatch, ThreadSummary

router = APIRouter(prefix="/api/threads", tags=["threads"])
ServicesDep = Annotated[Services, Depends(get_services)]


async def _existing(services: Services, thread_id: str) -> dict:
    row = await services.threads.get(thread_id)
    if row is None:
        raise HTTPException(404, f"thread {thread_id!r} does not exist; GET /api/threads lists the threads")
    return row


@router.get("", response_model=list[ThreadSummary])
async def list_threads(services: ServicesDep) -> list[dict]:
    """Threads, most recently updated first."""
    return await services.threads.list()


@router.get("/{thread_id}", response_model=ThreadDetail)
async def get_thread(thread_id: str, services: ServicesDep) -> ThreadDetail:
    """A thread's completed turns, answers with their sources."""
    row = await _existing(services, thread_id)
    messages: list[MessageOut] = []
    for turn in await services.turns.list(thread_id):
        messages.append(MessageOut(role="user", content=turn.question))
        sources = [SourceOut.model_validate(s) for s in turn.sources]
        messages.append(
            MessageOut(role="assistant", content=turn.answer, sources=sources, intent=turn.intent, steps=turn.steps)
        )
    return ThreadDetail(thread_id=thread_id, title=row["title"], messages=messages)


@router.get("/{thread_id}/export", response_model=None)
async def export_thread(
    thread_id: str, services: ServicesDep, format: Literal["json", "markdown"] = "json"
) -> JSONResponse | PlainTextResponse:
    """The whole thread with every turn's details, as JSON or Markdown."""
    row = await _existing(services, thread_id)
    turns = await services.turns.list(thread_id)
    if format == "markdown":
        return PlainTextResponse(thread_markdown(row, turns), media_type="text/markdown; charset=utf-8")
    return JSONResponse({**row, "turns": [asdict(t) for t in turns]})


@router.get("/{thread_id}/memory")
async def thread_memory(thread_id: str, services: ServicesDep) -> dict:
    """The thread's memory layers: rolling summary, Q&A index and citation ledger (plus the carried scope)."""
    await _existing(services, thread_id)
    values = (await services.graph.aget_state({"configurable": {"thread_id": thread_id}})).values
    ledger = [{k: v for k, v in e.items() if k not in ("text", "key")} for e in values.get("ledger", {}).values()]
    return {
        "summary": values.get("summary", ""),
        "qa_index": values.get("qa_index", []),
        "ledger": sorted(ledger, key=lambda e: int(e["id"][1:])),
        "scope": values.get("scope", []),
        "summarized_upto": values.get("summarized_upto", 0),
    }


@router.patch("/{thread_id}", response_model=ThreadSummary)
async def rename_thread(thread_id: str, body: ThreadPatch, services: ServicesDep) -> dict:
    """Set a thread's title."""
    await _existing(services, thread_id)
    await services.threads.rename(thread_id, body.title.strip() or body.title)
    return await _existing(services, thread_id)


@router.delete("/{thread_id}", status_code=204)
async def delete_thread(thread_id: str, services: ServicesDep) -> None:
    """Remove a thread and all its checkpoints."""
    await _existing(services, thread_id)
    await services.summaries.settle(thread_id)  # a pending summary update would write a checkpoint back
    await services.checkpointer.adelete_thread(thread_id)
    await services.turns.delete_thread(thread_id)
    await services.threads.delete(thread_id)
