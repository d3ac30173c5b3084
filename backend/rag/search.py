"""HybridRetriever: BM25 + vector search fused by reciprocal rank, neighbour windows, dedupe, rerank, budget.

The fusion and the floor's exceptions are in rag/fusion.py, the passages in rag/passages.py, and what one reader may
search (documents, sections, spelling) in rag/reader_view.py, HybridRetriever's base."""

import asyncio
import time
from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass, field

from backend.contract.text import without_note
from backend.contract.types import Source
from backend.rag.fusion import ANCHORED, Key, anchored, fuse, headed
from backend.rag.index import KnowledgeIndex
from backend.rag.passages import Passage, dedupe, merge_ranges, section_span, to_source, trim
from backend.rag.query_embeddings import QueryEmbedder
from backend.rag.query_text import search_text
from backend.rag.reader_view import ReaderView
from backend.rag.relevance import above_floor, chunk_similarities
from backend.rag.rerank import Reranker
from backend.rag.spelling import Speller
from backend.rag.store import VectorStore


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


class HybridRetriever(ReaderView):
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
        plan = self._plan(query, variants, documents, scope)
        similarity: dict[Key, float] = {}
        lists, relevant = self._gather(plan, query, versions, similarity, scope, lap)
        if not relevant:
            return SearchResult([], timings)
        fused = fuse(lists)
        passages = self._passages(fused[: max(2 * k, 6)], scope)
        named = {id(p) for p in passages if headed(p, query)}  # sections the question names: past the floor, first
        lap("expand")
        if self.config.fusion != "bm25":
            passages = self._kept(query, passages, versions, similarity, scope, anchors, named)
        lap("floor")
        self._rank(query, passages, named)
        lap("rerank")
        chosen = trim(passages, k, budget or self.config.token_budget)
        timings["total"] = round(sum(timings.values()), 2)
        return SearchResult([to_source(i, p) for i, p in enumerate(chosen, start=1)], timings)

    def _plan(
        self, query: str, variants: list[str], documents: list[str] | None, scope: list[str] | None
    ) -> list[tuple[str, list[str] | None]]:
        """The searches to run: the question and its variants (within the scope), then, on its own, each document
        of a scope of several, or each document the question names."""
        plan = [(q, scope) for q in dict.fromkeys([query, *(variants or [])])]
        plan += [(query, [d]) for d in scope] if scope and len(scope) > 1 else []
        plan += [(query, [d]) for d in self._named(without_note(query))] if not documents else []  # not a note
        return plan

    def _gather(
        self,
        plan: list[tuple[str, list[str] | None]],
        query: str,
        versions: dict[str, int],
        similarity: dict[Key, float],
        scope: list[str] | None,
        lap: Callable[[str], None],
    ) -> tuple[list[list[Key]], bool]:
        """The vector and BM25 hit lists of the planned searches, recording similarities to the question itself;
        whether any search found something relevant."""
        lists: list[list[Key]] = []
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
        return lists, relevant

    def _kept(
        self,
        query: str,
        passages: list[Passage],
        versions: dict[str, int],
        similarity: dict[Key, float],
        scope: list[str] | None,
        anchors: list[str] | None,
        named: set[int],
    ) -> list[Passage]:
        """The passages past the relevance floor, and up to ANCHORED below it holding every anchor and ANCHORED
        more in a section the question names (`named`: their ids)."""
        kept = {id(p) for p in self._floor(query, passages, versions, similarity, bool(scope))}
        below = [p for p in passages if id(p) not in kept and anchored(p.text, anchors)]
        kept |= {id(p) for p in below[:ANCHORED]}
        kept |= {id(p) for p in [p for p in passages if id(p) not in kept and id(p) in named][:ANCHORED]}
        return [p for p in passages if id(p) in kept]

    def _rank(self, query: str, passages: list[Passage], named: set[int]) -> None:
        """Score the passages (by the reranker, or their fused score) and order them in place: intros first, then
        sections the question names."""
        if self.config.rerank and len(passages) > 1:
            for p, s in zip(passages, self.reranker.score(query, [p.text for p in passages]), strict=True):
                p.score = s
            passages.sort(key=lambda p: (not p.intro, -p.score))
        else:
            for p in passages:
                p.score = p.fused
        passages.sort(key=lambda p: (not p.intro, id(p) not in named))

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
