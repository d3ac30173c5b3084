"""The rolling summary: updated after `done` is sent, off the latency path, never racing a turn (the runner
settles it before a turn on the same thread starts)."""

import asyncio
import logging

from langchain_core.messages import HumanMessage, SystemMessage
from langgraph.graph.state import CompiledStateGraph

from backend.graph.deps import GraphDeps
from backend.graph.prompts import SUMMARIZE, system_prompt
from backend.llm.factory import Models
from backend.llm.gate import ModelGate

log = logging.getLogger(__name__)
SUMMARY_CHARS = 1600  # about 250 words: a hard stop for a model that rambles


def exchanges_text(entries: list[dict]) -> str:
    """The exchanges of the Q&A index as 'User: … / Assistant: …' lines."""
    return "\n".join(f"User: {e['question']}\nAssistant: {e['answer']}" for e in entries)


async def update_summary(
    graph: CompiledStateGraph, deps: GraphDeps, thread_id: str, gate: ModelGate | None = None, pin: bool = False
) -> bool:
    """Fold exchanges that have left the prompt's window into the summary; False (and no model call) otherwise.

    Exchanges still in the window reach the model verbatim, so summarising them would cost a model call for
    nothing: a thread whose window was never cut never pays for a summary.
    """
    config = {"configurable": {"thread_id": thread_id}}
    state = (await graph.aget_state(config)).values
    index, done = state.get("qa_index", []), state.get("summarized_upto", 0)
    upto = min(state.get("window_start", 0), len(index))
    if upto <= done:
        return False
    prompt = SUMMARIZE.format(summary=state.get("summary") or "(empty)", exchanges=exchanges_text(index[done:upto]))
    messages = [SystemMessage(content=system_prompt(deps.settings.prompt_style)), HumanMessage(content=prompt)]
    async with (gate or ModelGate(0)).background() as slot:
        if slot is None:  # someone is using or waiting for the model: the next turn of the thread retries
            return False
        model = deps.chat_model.bind(extra_body={"id_slot": slot}) if pin and slot >= 0 else deps.chat_model
        reply = await model.ainvoke(messages)
    summary = reply.text.strip()[:SUMMARY_CHARS]
    await graph.aupdate_state(config, {"summary": summary, "summarized_upto": upto}, as_node="memory")
    return True


class SummaryScheduler:
    """One background summary task per thread; a new turn on the thread cancels it first."""

    def __init__(self, graph: CompiledStateGraph, deps: GraphDeps, models: Models | None = None) -> None:
        self._graph, self._deps = graph, deps
        self._gate, self._pin = (models.gate, models.pin_slots) if models else (None, False)
        self._tasks: dict[str, asyncio.Task] = {}

    def schedule(self, thread_id: str) -> None:
        """Start updating the thread's summary in the background."""
        self._tasks[thread_id] = asyncio.create_task(self._run(thread_id), name=f"summary:{thread_id}")

    async def settle(self, thread_id: str) -> None:
        """Cancel a running update for the thread and wait until it has stopped (a turn is about to start)."""
        task = self._tasks.pop(thread_id, None)
        if task and not task.done():
            task.cancel()
            await asyncio.gather(task, return_exceptions=True)

    async def wait(self, thread_id: str) -> None:
        """Wait for the thread's update to finish (tests, shutdown)."""
        task = self._tasks.get(thread_id)
        if task:
            await asyncio.gather(task, return_exceptions=True)

    async def close(self) -> None:
        """Cancel every pending update."""
        for thread_id in list(self._tasks):
            await self.settle(thread_id)

    async def _run(self, thread_id: str) -> None:
        try:
            await update_summary(self._graph, self._deps, thread_id, self._gate, self._pin)
        except asyncio.CancelledError:
            raise
        except Exception:  # a failed summary must never break the conversation; the next turn retries
            log.exception("summary update failed for thread %s", thread_id)
