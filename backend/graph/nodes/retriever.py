"""retriever: fetch passages for the rewritten query, limited to the @mentioned documents when any."""

from langgraph.runtime import Runtime

from backend.graph.deps import GraphDeps
from backend.graph.state import ChatState


async def retrieve(state: ChatState, runtime: Runtime[GraphDeps]) -> dict:
    """Set documents: the best passages within the context budget (router already resolved the mentions)."""
    deps = runtime.context
    scope = state.get("targeted_documents") or None
    docs = await deps.retriever.search(state["rewritten_query"], deps.settings.retrieval_top_k, scope)
    return {"documents": docs}
