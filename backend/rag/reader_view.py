"""ReaderView: what one reader may search of the knowledge index: the documents and sections they may read, the
documents a question names, the documents' openings and current versions, and a query respelt against the
documents' words (rag/spelling.py). The base of rag/search.HybridRetriever."""

import asyncio
from collections.abc import Callable

from backend.contract.text import fold_name, named_documents
from backend.contract.types import Source
from backend.rag.index import DocumentRecord, KnowledgeIndex
from backend.rag.spelling import Speller, respelt


class ReaderView:
    """The documents, sections and words of the knowledge base that one reader may search."""

    index: KnowledgeIndex
    readable: frozenset[str] | None  # ids of the documents this reader may see (rag/collections.py); None: all
    speller: Speller | None  # respells misspelt words of a query (rag/spelling.py); None: off

    async def spelled(self, query: str) -> str:
        """The query with its misspelt words spelt as the documents spell them (rag/spelling.py)."""
        return await asyncio.to_thread(lambda: self.respelt(query, self.index.active_versions()))

    async def foreign(self, query: str) -> bool:
        """Whether the query, respelt, is mostly in words neither English nor the documents' (rag/spelling.py)."""
        return await asyncio.to_thread(self._foreign, query)

    async def current(self, sources: list[Source]) -> list[Source]:
        """The sources still read from their document's active version (one without a version is kept)."""
        versions = await asyncio.to_thread(self.index.active_versions)
        return [s for s in sources if "version" not in s or versions.get(s.get("doc_id", "")) == s["version"]]

    async def openings(self, doc_ids: list[str]) -> dict[str, str]:
        """The text of each readable document's first chunk (its title and first lines), by document id."""
        return await asyncio.to_thread(self._openings, doc_ids)

    def _openings(self, doc_ids: list[str]) -> dict[str, str]:
        first = self.index.chunks_in([(d, 0, 0) for d in dict.fromkeys(doc_ids) if self._may_read(d)])
        return {doc: chunks[0].text for (doc, _, _), chunks in first.items() if chunks}

    async def document_terms(self, query: str) -> list[str]:
        """The query's words and codes that the documents use and English does not (rag/spelling.py)."""
        return await asyncio.to_thread(self._terms, query)

    def _terms(self, query: str) -> list[str]:
        if self.speller is None:
            return []
        versions = self.index.active_versions()
        return self.speller.terms(query, versions, self.index.active_texts, self._holds(versions))

    def _foreign(self, query: str) -> bool:
        """Foreign by English alone for a reader of some documents: the documents' words are everyone's, and which
        of them a question holds must not decide anything for a reader who may not read them all."""
        if self.speller is None:
            return False
        versions = self.index.active_versions()
        respelt_query = self.respelt(query, versions)
        every = self.readable is None
        return self.speller.foreign(respelt_query, versions, self.index.active_texts, documents_words=every)

    def _holds(self, versions: dict[str, int]) -> Callable[[str], bool] | None:
        """Whether a document the reader may read holds a word or code (None: the reader reads every document)."""
        if self.readable is None:
            return None
        ids = sorted(d for d in versions if self._may_read(d))

        def holds(word: str) -> bool:
            hits = self.index.bm25(word, 5, ids) if ids else []
            return any(word.lower() in chunk.text.lower() for chunk, _ in hits)

        return holds

    def respelt(self, query: str, versions: dict[str, int]) -> str:
        """The query respelt against the documents whose active versions are given (all of them, readable or not:
        the vocabulary is shared by every reader; a reader's respelling needs a word they may read)."""
        if self.speller is None:
            return query
        fixes = self.speller.fixes(query, versions, self.index.active_texts, self._holds(versions))
        return respelt(query, fixes)

    async def document_names(self) -> list[str]:
        """Names of searchable documents the reader may read."""
        return [d.name for d in await asyncio.to_thread(self.searchable)]

    async def pending_names(self) -> list[str]:
        """Names of the documents the reader may read that are queued or processing with no version to search."""
        records = await asyncio.to_thread(self.index.documents)
        waiting = ("queued", "processing")
        return [d.name for d in records if d.version == 0 and d.status in waiting and self._may_read(d.id)]

    async def section_names(self) -> list[str]:
        """The section headings of the searchable documents the reader may read, each once."""
        readable = {d.id for d in await asyncio.to_thread(self.searchable)}
        found = await asyncio.to_thread(self.index.sections)
        return sorted({section for doc_id, section in found if doc_id in readable})

    def searchable(self) -> list[DocumentRecord]:
        """Documents with an active version that the reader may read."""
        return [d for d in self.index.documents() if d.version > 0 and self._may_read(d.id)]

    def _may_read(self, doc_id: str) -> bool:
        return self.readable is None or doc_id in self.readable

    def _allowed(self, ids: list[str] | None, versions: dict[str, int]) -> list[str] | None:
        """The ids a search may look in: the given ones the reader may read, or every readable searchable one
        (None: no filter, every document)."""
        if ids is not None:
            return [i for i in ids if self._may_read(i)]
        return None if self.readable is None else sorted(versions)

    def _named(self, query: str) -> list[str]:
        """Ids of the documents a question names in plain words, when it names two or more ("compare the travel
        policy and the handbook"): each is searched on its own as well, as for @mentions, so that one does not
        crowd the other out of the passages. A search stays over every document; one name alone changes nothing."""
        ids = {d.name: d.id for d in self.searchable()}  # one read of the document list per search
        named = named_documents(query, list(ids))
        return [ids[name] for name in named] if len(named) > 1 else []

    def _scope(self, documents: list[str]) -> list[str] | None:
        """Ids of the named searchable documents (case-insensitive), or None when none of them exists."""
        wanted = {fold_name(n) for n in documents}
        return [d.id for d in self.searchable() if fold_name(d.name) in wanted] or None
