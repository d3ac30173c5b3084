"""HybridRetriever: BM25 + vector search fused by reciprocal rank, neighbour windows, dedupe, rerank, budget."""

import asyncio
import time
from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass, field

from backend.contract.text import content_words, named_documents, names_heading, without_note
from backend.contract.types import Source
from backend.rag.index import DocumentRecord, KnowledgeIndex, StoredChunk
from backend.rag.passages import Passage, dedupe, merge_ranges, to_source, trim
from backend.rag.query_embeddings import QueryEmbedder
from backend.rag.query_text import search_text
from backend.rag.relevance import above_floor, chunk_similarities
from backend.rag.rerank import Reranker
from backend.rag.spelling import Speller, respelt
from backend.rag.store import VectorStore

RRF_K = 60
Key = tuple[str, int]  # (document id, chunk index)


@dataclass(frozen=True)
class SearchConfig:
    """Knobs of the pipeline (from Settings)."""

    candidates: int = 20
    neighbor_window: int = 1
    same_section: bool = False  # a neighbour joins a hit's passage only from the hit's own section (when known)
    intro_chunks: int = 1
    token_budget: int = 700
    max_distance: float = 0.9
    relevance_floor: float = -1.0  # cosine similarity a passage needs to be sent (-1 with margin 2: off)
    relevance_margin: float = 2.0  # …and at most this far below the best passage
    fusion: str = "hybrid"  # hybrid | bm25 | vector
    rerank: bool = True


@dataclass
class SearchResult:
    """Sources in final order plus how long each stage took (milliseconds)."""

    sources: list[Source]
    timings: dict[str, float] = field(default_factory=dict)


ANCHORED = 2  # passages at most that the anchors let past the floor, best fused first


def anchored(text: str, anchors: list[str] | None) -> bool:
    """The text holds every anchor (stemmed content words): "new employees" needs both words, not any HR passage
    that says "employee" (review)."""
    return bool(anchors) and set(anchors) <= content_words(text)


def headed(passage: Passage, question: str) -> bool:
    """The question names the section of one of the passage's chunks (contract.text.names_heading): "What should
    I do on my first day?" and the checklist's "First day", which MiniLM put under the floor while the "First week"
    section passed, so a tester got the first week's tasks."""
    return any(names_heading(question, c.section, passage.document) for c in passage.chunks)


class HybridRetriever:
    """The knowledge-base search the graph and /api/search use."""

    def __init__(
        self,
        index: KnowledgeIndex,
        collection: VectorStore,
        embed_query: QueryEmbedder,
        reranker: Reranker,
        config: SearchConfig,
        readable: frozenset[str] | None = None,
        speller: Speller | None = None,
    ) -> None:
        self.index, self._collection, self._embed_query = index, collection, embed_query
        self.reranker, self.config = reranker, config
        self.readable = readable  # ids of the documents this reader may see (rag/collections.py); None: all
        self.speller = speller  # respells misspelt words of a query (rag/spelling.py); None: off

    def scoped(self, readable: frozenset[str] | None) -> "HybridRetriever":
        """The same search over only the documents a reader may read (None: every document)."""
        return HybridRetriever(
            self.index, self._collection, self._embed_query, self.reranker, self.config, readable, self.speller
        )

    async def search(
        self,
        query: str,
        k: int,
        documents: list[str] | None = None,
        variants: list[str] | None = None,
        anchors: list[str] | None = None,
    ) -> list[Source]:
        """Retriever protocol: the k best passages for the query (and its variants), optionally within documents;
        up to ANCHORED passages holding every anchor pass the floor."""
        return (await asyncio.to_thread(self.run, query, k, documents, None, variants, anchors)).sources

    async def nearest_distance(self, query: str) -> float | None:
        """Cosine distance of the closest chunk of any active document; None when nothing is indexed."""
        return await asyncio.to_thread(self._nearest, query)

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
        return self.speller.terms(query, _state(versions), self.index.active_texts, self._holds(versions))

    def _foreign(self, query: str) -> bool:
        """Foreign by English alone for a reader of some documents: the documents' words are everyone's, and which
        of them a question holds must not decide anything for a reader who may not read them all."""
        if self.speller is None:
            return False
        versions = self.index.active_versions()
        respelt_query = self.respelt(query, versions)
        every = self.readable is None
        return self.speller.foreign(respelt_query, _state(versions), self.index.active_texts, documents_words=every)

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
        fixes = self.speller.fixes(query, _state(versions), self.index.active_texts, self._holds(versions))
        return respelt(query, fixes)

    async def document_names(self) -> list[str]:
        """Names of searchable documents the reader may read."""
        return [d.name for d in await asyncio.to_thread(self.searchable)]

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

    def run(
        self,
        query: str,
        k: int,
        documents: list[str] | None = None,
        budget: int | None = None,
        variants: list[str] | None = None,
        anchors: list[str] | None = None,
    ) -> SearchResult:
        """The whole pipeline, synchronously, with per-stage timings; `budget` overrides the token budget.
        `anchors`: stemmed words a passage among the fused candidates may hold all of to pass the relevance floor (a
        follow-up's new subject: "What about meals?" is a few words, and MiniLM put the meals passages at 0.27-0.29
        of the question it was asked after, under the floor of 0.3; their words are the subject's)."""
        timings: dict[str, float] = {}
        clock = time.perf_counter()

        def lap(stage: str) -> None:
            nonlocal clock
            now = time.perf_counter()
            timings[stage] = round((now - clock) * 1000, 2)
            clock = now

        active = self.index.active_versions()
        query, variants = self.respelt(search_text(query), active), [search_text(v) for v in variants or []]
        versions = {d: v for d, v in active.items() if self._may_read(d)}
        scope = self._scope(documents) if documents else None
        if documents and not scope:
            return SearchResult([], timings)
        plan = [(q, scope) for q in dict.fromkeys([query, *(variants or [])])]
        plan += [(query, [d]) for d in scope] if scope and len(scope) > 1 else []
        plan += [(query, [d]) for d in self._named(without_note(query))] if not documents else []  # not a note
        lists: list[list[Key]] = []
        similarity: dict[Key, float] = {}
        relevant = bool(scope)  # an explicitly targeted search is always answered from its documents
        for q, targeted in plan:
            ids = self._allowed(targeted, versions)  # filtered before fusion: an unreadable document never ranks
            seen = similarity if q == query else {}  # similarity to the question itself, not to its variants
            vec_hits, close = self._vector(q, ids, versions, seen) if self.config.fusion != "bm25" else ([], False)
            lap("vector")
            bm25_hits = [(c.doc_id, c.idx) for c, _ in self.index.bm25(q, self.config.candidates, ids)]
            lap("bm25")
            relevant = relevant or close or (self.config.fusion == "bm25" and bool(bm25_hits))
            lists += [lst for lst in (vec_hits, bm25_hits if self.config.fusion != "vector" else []) if lst]
        if not relevant:
            return SearchResult([], timings)
        fused = fuse(lists)
        passages = self._passages(fused[: max(2 * k, 6)], scope)
        named = {id(p) for p in passages if headed(p, query)}  # sections the question names: past the floor, first
        lap("expand")
        if self.config.fusion != "bm25":
            kept = {id(p) for p in self._floor(query, passages, versions, similarity, bool(scope))}
            below = [p for p in passages if id(p) not in kept and anchored(p.text, anchors)]
            kept |= {id(p) for p in below[:ANCHORED]}
            kept |= {id(p) for p in [p for p in passages if id(p) not in kept and id(p) in named][:ANCHORED]}
            passages = [p for p in passages if id(p) in kept]
        lap("floor")
        if self.config.rerank and len(passages) > 1:
            for p, s in zip(passages, self.reranker.score(query, [p.text for p in passages]), strict=True):
                p.score = s
            passages.sort(key=lambda p: (not p.intro, -p.score))
        else:
            for p in passages:
                p.score = p.fused
        passages.sort(key=lambda p: (not p.intro, id(p) not in named))
        lap("rerank")
        chosen = trim(passages, k, budget or self.config.token_budget)
        timings["total"] = round(sum(timings.values()), 2)
        return SearchResult([to_source(i, p) for i, p in enumerate(chosen, start=1)], timings)

    def _named(self, query: str) -> list[str]:
        """Ids of the documents a question names in plain words, when it names two or more ("compare the travel
        policy and the handbook"): each is searched on its own as well, as for @mentions, so that one does not
        crowd the other out of the passages. A search stays over every document; one name alone changes nothing."""
        ids = {d.name: d.id for d in self.searchable()}  # one read of the document list per search
        named = named_documents(query, list(ids))
        return [ids[name] for name in named] if len(named) > 1 else []

    def _scope(self, documents: list[str]) -> list[str] | None:
        """Ids of the named searchable documents (case-insensitive), or None when none of them exists."""
        wanted = {n.lower() for n in documents}
        return [d.id for d in self.searchable() if d.name.lower() in wanted] or None

    def _floor(
        self, query: str, passages: list[Passage], versions: dict[str, int], known: dict[Key, float], scoped: bool
    ) -> list[Passage]:
        """Passages close enough to the query (see rag/relevance.py), with their similarity set."""
        keys = [(p.doc_id, p.hit) for p in passages]
        sims = chunk_similarities(self._collection, self._embed_query(query), keys, versions, known)
        for p in passages:
            p.similarity = sims.get((p.doc_id, p.hit))
        return above_floor(passages, self.config.relevance_floor, self.config.relevance_margin, keep_best=scoped)

    def _vector(
        self, query: str, ids: list[str] | None, versions: dict[str, int], similarity: dict[Key, float]
    ) -> tuple[list[Key], bool]:
        """Vector hits as keys (active versions only), recording their similarity; whether any is close enough."""
        if not versions or ids is not None and not ids:
            return [], False
        where = {"document_id": {"$in": ids}} if ids is not None else None
        res = self._collection.query(
            query_embeddings=[self._embed_query(query)],
            n_results=self.config.candidates,
            where=where,
            include=["metadatas", "distances"],
        )
        hits, close = [], False
        for meta, dist in zip(res["metadatas"][0], res["distances"][0], strict=True):
            if versions.get(str(meta["document_id"])) != meta["version"]:
                continue  # a vector of a replaced version not yet removed
            key = (str(meta["document_id"]), int(meta["chunk"]))
            hits.append(key)
            similarity.setdefault(key, 1.0 - float(dist))
            close = close or dist <= self.config.max_distance
        return hits, close

    def _nearest(self, query: str) -> float | None:
        active = self.index.active_versions()
        query = self.respelt(search_text(query), active)
        versions = {d: v for d, v in active.items() if self._may_read(d)}
        if not versions:
            return None
        ids = self._allowed(None, versions)
        res = self._collection.query(
            query_embeddings=[self._embed_query(query)],
            n_results=5,
            where={"document_id": {"$in": ids}} if ids is not None else None,
            include=["metadatas", "distances"],
        )
        live = [
            d
            for m, d in zip(res["metadatas"][0], res["distances"][0], strict=True)
            if versions.get(str(m["document_id"])) == m["version"]
        ]
        return float(min(live)) if live else None

    def _passages(self, hits: list[tuple[Key, float]], scope: list[str] | None) -> list[Passage]:
        """Each hit widened by the neighbour window; overlapping windows merged; duplicates dropped."""
        w = self.config.neighbor_window
        windows = {key: (key[0], max(0, key[1] - w), key[1] + w) for key, _ in hits}
        around = self.index.chunks_in(list(dict.fromkeys(windows.values())))  # one read for all
        stored = {(c.doc_id, c.idx): c for chunks in around.values() for c in chunks}
        ranges: dict[str, list[list]] = defaultdict(list)  # doc -> [first, last, best hit, fused]
        for (doc, idx), score in hits:
            window = around[windows[(doc, idx)]]
            first, last = section_span(window, idx) if self.config.same_section else windows[(doc, idx)][1:]
            ranges[doc].append([first, last, idx, score])
        passages: list[Passage] = []
        for doc, spans in ranges.items():
            for first, last, hit, score in merge_ranges(spans):  # merged windows: chunks all read above
                if chunks := [stored[(doc, i)] for i in range(first, last + 1) if (doc, i) in stored]:
                    passages.append(Passage(doc, chunks[0].document, chunks, hit, score))
        for doc in scope or []:
            opening = [p for p in passages if p.doc_id == doc and p.chunks[0].idx == 0]
            intro = self.index.chunks_between(doc, 0, self.config.intro_chunks - 1) if not opening else []
            for p in opening:
                p.intro = True
            if intro:
                passages.append(Passage(doc, intro[0].document, intro, 0, 0.0, intro=True))
        passages.sort(key=lambda p: -p.fused)
        return dedupe(passages)


def _state(versions: dict[str, int]) -> tuple:
    """What identifies the documents' state for the speller's vocabulary."""
    return tuple(sorted(versions.items()))


def section_span(chunks: list[StoredChunk], hit: int) -> tuple[int, int]:
    """The first and last chunk index of the run around the hit, among `chunks` (its window), that stays in the
    hit's section; the whole window when the hit has no section (a PDF page's text).

    On documents with headings a neighbour from the next section is another subject: with it, an onboarding
    checklist's "First week" hit carried the "First day" list before it, and the 1.5B model answered "what should
    I do in my first week?" with the first day's items (tester, 3 of 3)."""
    by_idx = {c.idx: c for c in chunks}
    section = by_idx[hit].section if hit in by_idx else None
    if section is None:
        return (chunks[0].idx, chunks[-1].idx) if chunks else (hit, hit)
    first = last = hit
    while first - 1 in by_idx and by_idx[first - 1].section == section:
        first -= 1
    while last + 1 in by_idx and by_idx[last + 1].section == section:
        last += 1
    return first, last


def fuse(lists: list[list[Key]]) -> list[tuple[Key, float]]:
    """Reciprocal rank fusion: sum of 1/(RRF_K + rank) over the lists a key appears in, best first."""
    scores: dict[Key, float] = defaultdict(float)
    for lst in lists:
        for rank, key in enumerate(dict.fromkeys(lst), start=1):
            scores[key] += 1.0 / (RRF_K + rank)
    return sorted(scores.items(), key=lambda kv: -kv[1])
