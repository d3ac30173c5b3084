"""Checkpoint pruning: LangGraph keeps every step of every turn as a checkpoint, and its savers never delete any.

A thread needs only its last complete checkpoint (the state the next turn starts from); its page, export and
search come from the turn rows. `prune_checkpoints` deletes, for threads idle for some days, every checkpoint
older than that one. Run by `python -m backend.cli prune-checkpoints`, and by the server on a schedule when
RAG_CHECKPOINT_PRUNE_DAYS is set.
"""

import logging
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

from langgraph.graph.state import CompiledStateGraph

from backend.store.checkpointer import Checkpointer

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Pruned:
    """What a pruning did."""

    threads: int
    checkpoints: int


async def prunable_threads(checkpointer: Checkpointer, idle_days: float) -> list[str]:
    """Threads not updated for idle_days that hold more than one checkpoint."""
    cutoff = (datetime.now(UTC) - timedelta(days=idle_days)).isoformat(timespec="milliseconds")
    sql = (
        "SELECT c.thread_id FROM checkpoints c JOIN threads t ON t.thread_id = c.thread_id "
        "WHERE t.updated_at < ? GROUP BY c.thread_id HAVING COUNT(*) > 1 ORDER BY c.thread_id"
    )
    return [r[0] for r in await checkpointer.db.read(lambda c: c.execute(sql, (cutoff,)).fetchall())]


async def last_complete(graph: CompiledStateGraph, thread_id: str) -> str | None:
    """The id of the thread's newest checkpoint with nothing left to run (where the next turn starts)."""
    async for past in graph.aget_state_history({"configurable": {"thread_id": thread_id}}):
        if not past.next:
            return past.config["configurable"]["checkpoint_id"]
    return None


async def prune_checkpoints(graph: CompiledStateGraph, checkpointer: Checkpointer, idle_days: float) -> Pruned:
    """Keep only the last complete checkpoint (and any newer) of each thread idle for idle_days."""
    threads = checkpoints = 0
    for thread_id in await prunable_threads(checkpointer, idle_days):
        if (base := await last_complete(graph, thread_id)) is None:
            continue
        if dropped := await checkpointer.aprune_before(thread_id, base):
            threads, checkpoints = threads + 1, checkpoints + dropped
    return Pruned(threads, checkpoints)
