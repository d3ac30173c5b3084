"""Versions of one document queued behind each other, on each engine (cases from a review, each of which failed
before): the lease, the status, a re-upload, a deletion meanwhile, a failed registration. A fake embedder (hash
bytes as a vector) stands in for MiniLM: the vectors' values do not matter here, only which texts they carry."""

import asyncio
import hashlib
import threading
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from pathlib import Path

import pytest

from backend.rag.files import document_files
from backend.rag.index import KnowledgeIndex
from backend.rag.ingestion import Ingestor
from backend.rag.knowledge import KnowledgeBase, knowledge_database
from backend.rag.leases import IngestLeases
from backend.rag.loaders import DocumentError
from backend.rag.store import VectorStore, open_vectors
from backend.store.database import Database
from backend.tests.conftest import fake_settings

V1 = b"# Leave\n\nStaff get 28 days of annual leave."
V2 = b"# Leave\n\nStaff get 30 days of annual leave."
V3 = b"# Leave\n\nStaff get 35 days of annual leave."


def fake_embed(texts: list[str]) -> list[list[float]]:
    return [[b / 255 for b in hashlib.sha256(t.encode()).digest()[:16]] for t in texts]


@contextmanager
def opened(tmp_path: Path, engine: dict) -> Iterator[tuple[Database, KnowledgeIndex, VectorStore, Ingestor]]:
    settings = fake_settings(tmp_path, **engine)
    with knowledge_database(settings) as db:
        index = KnowledgeIndex(db)
        store = open_vectors(settings, db, None)
        files = document_files(db, tmp_path / "docs")
        yield db, index, store, Ingestor(index, store, fake_embed, 200, 20, files=files, leases=IngestLeases(db, "s1"))


def texts(index: KnowledgeIndex, store: VectorStore, doc_id: str) -> tuple[list[str], list[str]]:
    chunks = [r["text"] for r in index.rows("SELECT text FROM chunks WHERE doc_id = ?", (doc_id,))]
    return chunks, store.get(where={"document_id": doc_id})["documents"]


def test_the_lease_is_held_until_the_last_queued_version_is_committed(tmp_path, engine):
    # the first commit released the lease with a second version still queued: another replica took it, and the two
    # servers committed the same version number with different texts in the vector store and the keyword index
    with opened(tmp_path, engine) as (db, index, store, ingestor):
        first, second = ingestor.prepare("policy.md", V1), ingestor.prepare("policy.md", V2)
        queued = [ingestor.register(first), ingestor.register(second)]
        doc_id = queued[0].record.id
        ingestor.commit(queued[0].record, first)
        other = Ingestor(index, store, fake_embed, 200, 20, leases=IngestLeases(db, "s2"))
        with pytest.raises(DocumentError) as refused:
            other.register(other.prepare("policy.md", V3))
        assert refused.value.status == 409 and doc_id in ingestor.leases.live()
        ingestor.commit(queued[1].record, second)
        assert doc_id not in ingestor.leases.live()
        chunks, vectors = texts(index, store, doc_id)
        assert chunks == vectors and "30 days" in chunks[0]


def test_a_version_with_another_queued_behind_it_is_not_ready_and_the_first_file_again_is_news(tmp_path, engine):
    # it showed "ready" with the first file's text, and the first file uploaded again was "unchanged" and then lost
    with opened(tmp_path, engine) as (db, index, store, ingestor):
        first, second = ingestor.prepare("policy.md", V1), ingestor.prepare("policy.md", V2)
        queued = [ingestor.register(first), ingestor.register(second)]
        ingestor.commit(queued[0].record, first)
        assert index.document(queued[0].record.id).status == "queued"
        again = ingestor.prepare("policy.md", V1)
        assert ingestor.unchanged(again) is None
        third = ingestor.register(again)
        ingestor.commit(queued[1].record, second)
        assert index.document(third.record.id).status == "queued"
        ingestor.commit(third.record, again)
        assert index.document(third.record.id).status == "ready"
        assert texts(index, store, third.record.id)[0] == texts(index, store, third.record.id)[1]
        assert "28 days" in texts(index, store, third.record.id)[0][0]


def test_a_document_deleted_while_queued_is_not_written_back(tmp_path, engine):
    with opened(tmp_path, engine) as (db, index, store, ingestor):
        prepared = ingestor.prepare("policy.md", V1)
        queued = ingestor.register(prepared)
        doc_id = queued.record.id
        assert ingestor.delete(doc_id)
        with pytest.raises(DocumentError) as gone:
            ingestor.commit(queued.record, prepared)
        assert gone.value.status == 409
        assert texts(index, store, doc_id) == ([], []) and index.document_text(doc_id) is None
        assert ingestor.files.get(doc_id) is None and doc_id not in ingestor.leases.live()


def test_a_registration_that_fails_releases_the_lease(tmp_path, engine, monkeypatch):
    with opened(tmp_path, engine) as (db, index, store, ingestor):
        ingestor.ingest("policy.md", V1)

        def lost(*args, **kwargs):
            raise RuntimeError("connection lost")

        monkeypatch.setattr(index, "upsert_pending", lost)
        with pytest.raises(RuntimeError):
            ingestor.register(ingestor.prepare("policy.md", V2))
        assert not ingestor.leases.live()


def test_a_version_committed_while_a_later_one_fails_to_register_ends_ready_not_queued(tmp_path, engine, monkeypatch):
    # second review: the first version was committed as "queued" (the second was counted), the second's registration
    # then failed, and the document stayed queued with nothing behind it
    with opened(tmp_path, engine) as (db, index, store, ingestor):
        first = ingestor.prepare("policy.md", V1)
        queued = ingestor.register(first)

        def commit_the_first_then_fail(*args, **kwargs):
            ingestor.commit(queued.record, first)
            raise RuntimeError("connection lost")

        monkeypatch.setattr(index, "upsert_pending", commit_the_first_then_fail)
        with pytest.raises(RuntimeError):
            ingestor.register(ingestor.prepare("policy.md", V2))
        record = index.document(queued.record.id)
        assert (record.status, record.version) == ("ready", 1) and not ingestor.leases.live()


async def test_an_upload_cancelled_while_it_registers_is_still_ingested_and_lets_go_of_its_lease(tmp_path, engine):
    # the client went away while the row was being written: the version was registered (leased, counted as queued)
    # but never queued, so the document stayed queued and leased until a restart
    settings = fake_settings(tmp_path, **engine)
    with knowledge_database(settings) as db:
        kb = KnowledgeBase(settings, db, open_vectors(settings, db, None), fake_embed, "fake")
        register = kb.ingestor.register

        def slow_register(*args):
            time.sleep(0.3)
            return register(*args)

        kb.ingestor.register = slow_register  # type: ignore[method-assign]
        async with kb.running():
            upload = asyncio.create_task(kb.submit("policy.md", V1))
            await asyncio.sleep(0.1)
            upload.cancel()
            with pytest.raises(asyncio.CancelledError):
                await upload
            for _ in range(100):  # the version commits in the background; its lease goes once the commit returns
                record = kb.index.by_name("policy.md")
                if record and record.status == "ready" and not kb.ingestor._queued:
                    break
                await asyncio.sleep(0.05)
            assert record is not None and record.status == "ready"
            assert not kb.ingestor.leases.live() and not kb.ingestor._queued


def test_a_document_deleted_while_it_is_embedded_goes_at_once_and_its_ingestion_stops(tmp_path, engine):
    # the delete waited for the whole ingestion (73 s for a 600-paragraph file through the API: a proxy gives up
    # first), and so did the delete of a document queued behind another one being embedded
    with opened(tmp_path, engine) as (db, index, store, ingestor):
        embedding, go_on, batches = threading.Event(), threading.Event(), []

        def slow_embed(texts: list[str]) -> list[list[float]]:
            batches.append(len(texts))
            embedding.set()
            go_on.wait(10)
            return fake_embed(texts)

        ingestor._embed = slow_embed
        long = "\n\n".join(f"Paragraph {n} of the leave policy: staff get {n} days." * 8 for n in range(200))
        prepared = ingestor.prepare("policy.md", long.encode())
        queued = ingestor.register(prepared)
        doc_id = queued.record.id
        with ThreadPoolExecutor(2) as pool:
            commit = pool.submit(ingestor.commit, queued.record, prepared)
            assert embedding.wait(10)
            deleted = pool.submit(ingestor.delete, doc_id)
            try:
                assert deleted.result(timeout=2)
            finally:
                go_on.set()
            with pytest.raises(DocumentError) as gone:
                commit.result(timeout=10)
        assert gone.value.status == 409 and len(batches) == 1
        assert texts(index, store, doc_id) == ([], []) and index.document(doc_id) is None
        assert index.document_text(doc_id) is None and ingestor.files.get(doc_id) is None
        assert doc_id not in ingestor.leases.live()
