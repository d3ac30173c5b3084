"""retriever: fetch the chunks for the rewritten query, limited to @mentioned documents when any."""

from langgraph.runtime import Runtime

from backend.graph.deps import GraphDeps
from backend.graph.state import ChatState


def resolve_names(mentioned: list[str], known: list[str]) -> list[str]:
    """Known document names matching the mentions, case-insensitive and with the extension optional."""

    def stem(name: str) -> str:
        return name.lower().rsplit(".", 1)[0] if "." in name else name.lower()

    wanted = {m.lower() for m in mentioned} | {stem(m) for m in mentioned}
    return [k for k in known if k.lower() in wanted or stem(k) in wanted]


async def retrieve(state: ChatState, runtime: Runtime[GraphDeps]) -> dict:
    """Set documents: the top-k relevant chunks (none when mentions match no document)."""
    deps = runtime.context
    targeted = state.get("targeted_documents", [])
    scope = resolve_names(targeted, await deps.retriever.document_names()) if targeted else None
    if targeted and not scope:
        return {"documents": []}
    docs = await deps.retriever.search(state["rewritten_query"], deps.settings.retrieval_top_k, scope)
    return {"documents": docs}
