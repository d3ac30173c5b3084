"""KnowledgeBase: the index, vector store, ingestion queue and hybrid retriever, opened together."""

import asyncio
import logging
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager
from typing import Any

from backend.contract.api import UploadOutcome
from backend.rag.collections import RegistryCollections
from backend.rag.embeddings import onnx_dir
from backend.rag.files import document_files
from backend.rag.index import DocumentRecord, KnowledgeIndex
from backend.rag.ingestion import Ingestor, Prepared
from backend.rag.leases import RENEW_SECONDS, IngestLeases
from backend.rag.limits import UploadLimits
from backend.rag.query_embeddings import QueryEmbedder
from backend.rag.rerank import choose_reranker
from backend.rag.search import HybridRetriever, SearchConfig
from backend.rag.spelling import Speller, english_words
from backend.rag.store import VectorStore
from backend.settings import Settings
from backend.store.database import Database
from backend.store.open import connect_database

log = logging.getLogger(__name__)
SHUTDOWN_WAIT_SECONDS = 30.0


def search_config(settings: Settings) -> SearchConfig:
    """Pipeline knobs from settings."""
    return SearchConfig(
        candidates=settings.search_candidates,
        neighbor_window=settings.neighbor_window,
        same_section=settings.neighbors_same_section,
        intro_chunks=settings.intro_chunks,
        token_budget=settings.context_token_budget,
        max_distance=settings.relevance_max_distance,
        relevance_floor=settings.relevance_floor,
        relevance_margin=settings.relevance_margin,
    )


def speller(settings: Settings) -> Speller | None:
    """The respeller of questions (RAG_RESPELL), with the English words of the offline MiniLM's tokenizer; None when
    it is off or that file is not there (with Ollama's embeddings, say): without them every word the documents do
    not hold would look misspelt."""
    if not settings.respell:
        return None
    known = english_words(onnx_dir(settings.cache_dir) / "onnx" / "tokenizer.json")
    if not known:
        log.info("respelling of questions off: no MiniLM tokenizer vocabulary in %s", settings.cache_dir)
        return None
    return Speller(known)


def upload_limits(settings: Settings) -> UploadLimits:
    """The expansion caps an upload is checked against, from the RAG_UPLOAD_… settings."""
    return UploadLimits(
        expanded_mb=settings.upload_expanded_mb,
        ratio=settings.upload_ratio,
        xml_part_mb=settings.upload_xml_part_mb,
        pdf_pages=settings.upload_pdf_pages,
        pdf_stream_mb=settings.upload_pdf_stream_mb,
        html_mb=settings.upload_html_mb,
        text_chars=settings.upload_text_chars,
    )


@contextmanager
def knowledge_database(settings: Settings) -> Iterator[Database]:
    """The registry's database for the block (CLI, benchmarks, tests)."""
    db = connect_database(settings, settings.knowledge_path)
    try:
        yield db
    finally:
        db.close()


class KnowledgeBase:
    """Everything about documents: ingestion (now or queued), collections, deletion and search."""

    def __init__(self, settings: Settings, db: Database, collection: VectorStore, embed: Any, embed_model: str) -> None:
        self.index = KnowledgeIndex(db)
        self.collections = RegistryCollections(self.index)
        self.collection = collection
        self.embed_query = QueryEmbedder(embed, embed_model)
        self.reranker = choose_reranker(
            settings.reranker, settings.flashrank_path, settings.flashrank_model, embed, self.embed_query
        )
        self.retriever = HybridRetriever(
            self.index, collection, self.embed_query, self.reranker, search_config(settings), speller=speller(settings)
        )
        self.ingestor = Ingestor(
            self.index,
            collection,
            embed,
            settings.chunk_target_tokens,
            settings.chunk_overlap_tokens,
            upload_limits(settings),
            files=document_files(db, settings.data_dir / "documents"),
            leases=IngestLeases(db),
        )
        self.shared = db.dialect == "postgres"  # replicas may share it: leases tell whose ingestions are alive
        self._queue: asyncio.Queue[tuple[DocumentRecord, Prepared]] = asyncio.Queue()
        log.info("reranker: %s", self.reranker.name)

    def warm_up(self) -> None:
        """Load the embedding model and open the indexes now (one search), so the first question after a start
        does not pay for them (about 15-25 ms of the vector index and keyword index, measured through the API)."""
        try:
            self.embed_query("warm up")  # loads MiniLM even with no documents, where the search embeds nothing
            self.retriever.run("warm up", 1)  # its own embedding of the same words is a cache hit
        except Exception as exc:  # an embedding server that is down must not stop the API from starting
            log.warning("embedding model or indexes not ready at start (%s); questions will report it", exc)

    @asynccontextmanager
    async def running(self) -> AsyncIterator["KnowledgeBase"]:
        """Run the background ingestion worker (and the leases' renewal) for the block's duration."""
        await asyncio.to_thread(self._recover_interrupted)
        tasks = [
            asyncio.create_task(self._work(), name="ingestion-worker"),
            asyncio.create_task(self._keep_leases(), name="ingestion-leases"),
        ]
        try:
            yield self
        finally:
            for task in tasks:
                task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)
            if not await asyncio.to_thread(self.ingestor.wait_idle, SHUTDOWN_WAIT_SECONDS):
                log.warning("an ingestion was still running at shutdown; it is marked interrupted on next start")

    async def submit(self, name: str, data: bytes, collection: str = "") -> tuple[DocumentRecord, UploadOutcome]:
        """Check and parse now (DocumentError on bad input), embed in the background; returns the record and
        whether the file was new, a new version of a document of that name, or the same file again."""
        prepared = await asyncio.to_thread(self.ingestor.prepare, name, data)
        if same := self.ingestor.unchanged(prepared, collection):
            return same, "unchanged"
        # shielded: a version registered is queued, and so committed (which lets go of its lease), even when the
        # request is cancelled meanwhile (the client went away): else the document stayed queued and leased for good
        return await asyncio.shield(self._register(prepared, collection))

    async def _register(self, prepared: Prepared, collection: str) -> tuple[DocumentRecord, UploadOutcome]:
        record, outcome = await asyncio.to_thread(self.ingestor.register, prepared, collection)
        await self._queue.put((record, prepared))
        return record, outcome

    async def ingest_now(self, name: str, data: bytes, collection: str = "") -> str:
        """Ingest synchronously (CLI, tests, sample corpus); returns added, updated or unchanged."""
        return (await asyncio.to_thread(self.ingestor.ingest, name, data, None, collection)).outcome

    async def delete(self, doc_id: str) -> bool:
        """Remove a document everywhere."""
        return await asyncio.to_thread(self.ingestor.delete, doc_id)

    async def _work(self) -> None:
        while True:
            record, prepared = await self._queue.get()
            try:
                await asyncio.to_thread(self.ingestor.commit, record, prepared)
            except Exception:  # recorded on the document by the ingestor; the worker keeps going
                pass
            finally:
                self._queue.task_done()

    async def drain(self) -> None:
        """Wait until every queued document is processed."""
        await self._queue.join()

    async def _keep_leases(self) -> None:
        """Renew this process's ingestion leases; with replicas, also interrupt the ingestions of dead ones."""
        leases = self.ingestor.leases
        assert leases is not None
        while True:
            await asyncio.sleep(RENEW_SECONDS)
            try:
                await asyncio.to_thread(leases.renew)
                if self.shared:
                    await asyncio.to_thread(self._recover_interrupted)
            except Exception:  # a database hiccup: the next round retries (leases last LEASE_SECONDS)
                log.exception("renewing ingestion leases failed")

    def _recover_interrupted(self) -> None:
        """Documents left queued or processing by a process that is gone are marked interrupted (on SQLite, which
        one server uses, all of them at start-up; on Postgres, those whose lease ran out)."""
        alive = self.ingestor.leases.live() if self.shared and self.ingestor.leases else set()
        for doc in self.index.documents():
            if doc.status in ("queued", "processing") and doc.id not in alive:
                status = "ready" if doc.version else "failed"
                self.index.set_status(doc.id, status, 1.0, "ingestion was interrupted by a restart; upload it again")


async def ingest_paths(kb: KnowledgeBase, paths: list) -> dict[str, str]:
    """Ingest every supported file under the given files and folders now; returns outcome by file name."""
    from backend.rag.ingestion import iter_files

    return {f.name: await kb.ingest_now(f.name, f.read_bytes()) for f in iter_files(paths)}
