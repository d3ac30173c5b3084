"""The retriever interface the graph depends on (implemented by rag.search.HybridRetriever)."""

from typing import Protocol

from backend.graph.state import Source

SNIPPET_CHARS = 240


class Retriever(Protocol):
    """What the graph needs from the knowledge base."""

    async def search(
        self, query: str, k: int, documents: list[str] | None = None, variants: list[str] | None = None
    ) -> list[Source]:
        """The k best passages for the query (fused with its variants), optionally only from named documents."""
        ...

    async def nearest_distance(self, query: str) -> float | None:
        """Cosine distance of the closest chunk, or None when the knowledge base is empty."""
        ...

    async def document_names(self) -> list[str]:
        """Names of the documents in the knowledge base."""
        ...


def snippet(text: str) -> str:
    """First SNIPPET_CHARS characters of a chunk, cut at a word boundary."""
    flat = " ".join(text.split())
    if len(flat) <= SNIPPET_CHARS:
        return flat
    return flat[:SNIPPET_CHARS].rsplit(" ", 1)[0] + "…"
