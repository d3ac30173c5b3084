"""The retriever interface the graph depends on, and a plain top-k vector search behind it."""

import asyncio
from typing import Protocol

from chromadb.api.models.Collection import Collection

from backend.graph.state import Source

SNIPPET_CHARS = 240


class Retriever(Protocol):
    """What the graph needs from the knowledge base."""

    async def search(self, query: str, k: int, documents: list[str] | None = None) -> list[Source]:
        """The k chunks nearest the query, optionally only from the named documents."""
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


class VectorRetriever:
    """Top-k cosine similarity search over one Chroma collection."""

    def __init__(self, collection: Collection, max_distance: float) -> None:
        self._collection = collection
        self._max_distance = max_distance

    async def search(self, query: str, k: int, documents: list[str] | None = None) -> list[Source]:
        """The k nearest chunks within the relevance distance, best first."""
        where = {"document": {"$in": documents}} if documents else None
        res = await asyncio.to_thread(
            self._collection.query,
            query_texts=[query],
            n_results=k,
            where=where,
            include=["documents", "metadatas", "distances"],
        )
        hits: list[Source] = []
        for text, meta, dist in zip(res["documents"][0], res["metadatas"][0], res["distances"][0], strict=True):
            if dist > self._max_distance:
                continue
            page = meta.get("page")
            hits.append(
                Source(
                    id=f"S{len(hits) + 1}",
                    document=str(meta["document"]),
                    page=int(page) if page is not None else None,
                    chunk=int(meta.get("chunk", 0)),
                    snippet=snippet(text),
                    score=round(1.0 - float(dist), 4),
                    text=text,
                )
            )
        return hits

    async def nearest_distance(self, query: str) -> float | None:
        """Distance of the single nearest chunk."""
        if await asyncio.to_thread(self._collection.count) == 0:
            return None
        res = await asyncio.to_thread(self._collection.query, query_texts=[query], n_results=1, include=["distances"])
        return float(res["distances"][0][0])

    async def document_names(self) -> list[str]:
        """Distinct document names stored in chunk metadata."""
        res = await asyncio.to_thread(self._collection.get, include=["metadatas"])
        return sorted({str(m["document"]) for m in res["metadatas"] or []})
