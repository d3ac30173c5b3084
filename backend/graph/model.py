"""The chat model a node calls: through the turn's lease, so the turn takes its place in the queue for the
model (and says so) and every call of the turn goes to the same slot."""

from collections.abc import Sequence
from typing import Any

from langchain_core.runnables import Runnable
from langgraph.runtime import Runtime

from backend.graph.deps import GraphDeps
from backend.graph.report import NODE_LABELS, progress


async def chat_model(runtime: Runtime[GraphDeps], node: str, tools: Sequence[Any] | None = None) -> Runnable:
    """The model for this node's call, waiting for a slot the first time in the turn."""
    deps = runtime.context
    model: Runnable = deps.chat_model.bind_tools(tools) if tools else deps.chat_model
    lease = deps.lease
    if lease is None:
        return model
    await lease.take(lambda ahead: progress(runtime, node, f"Waiting for the model: {ahead} ahead"))
    if lease.waited:
        progress(runtime, node, NODE_LABELS[node] + "…")
    return lease.bind(model)
