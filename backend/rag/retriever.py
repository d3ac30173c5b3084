"""The retriever interface the graph depends on (implemented by rag.search.HybridRetriever)."""

from typing import Protocol

from backend.contract.types import Source


class Retriever(Protocol):
    """What the graph needs from the knowledge base."""

    async def search(
        self,
        query: str,
        k: int,
        documents: list[str] | None = None,
        variants: list[str] | None = None,
        anchors: list[str] | None = None,
    ) -> list[Source]:
        """The k best passages for the query (fused with its variants), optionally only from named documents; up
        to 2 passages holding every anchor (stemmed words) are kept below the relevance floor."""
        ...

    async def nearest_distance(self, query: str) -> float | None:
        """Cosine distance of the closest chunk, or None when the knowledge base is empty."""
        ...

    async def spelled(self, query: str) -> str:
        """The query with misspelt words spelt as the documents spell them (itself when none is)."""
        ...

    async def current(self, sources: list[Source]) -> list[Source]:
        """The sources (from earlier turns) still read from their document's current version."""
        ...

    async def openings(self, doc_ids: list[str]) -> dict[str, str]:
        """The text of each document's first chunk (title and first lines), by document id."""
        ...

    async def document_terms(self, query: str) -> list[str]:
        """The query's words and codes that the documents use and English does not ("Zephyr-9", "Lindenhof")."""
        ...

    async def foreign(self, query: str) -> bool:
        """Whether the query is mostly in words neither English nor the documents' (searched by a translation)."""
        ...

    async def document_names(self) -> list[str]:
        """Names of the documents in the knowledge base."""
        ...

    async def pending_names(self) -> list[str]:
        """Names of the documents uploaded and not ingested yet (queued or processing, no version to search)."""
        ...

    async def section_names(self) -> list[str]:
        """The section headings of the documents in the knowledge base, each once."""
        ...

    def scoped(self, readable: frozenset[str] | None) -> "Retriever":
        """The same retriever over only these document ids (rag/collections.py decides them); None: all."""
        ...


async def still_readable(scope: list[str], retriever: Retriever) -> list[str]:
    """The names of a carried scope that the retriever's reader may still search: one they lost access to, or that
    was deleted, is dropped (the router's follow-ups and the thread page's scope banner)."""
    if not scope:
        return []
    names = set(await retriever.document_names())
    return [name for name in scope if name in names]
