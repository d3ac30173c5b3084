"""Versions of one document queued behind each other, on each engine (cases from a review, each of which failed
before): the lease, the status, a re-upload, a deletion meanwhile, a failed registration. A fake embedder (hash
bytes as a vector) stands in for MiniLM: the vectors' values do not matter here, only which texts they carry."""

import hashlib
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from backend.rag.files import document_files
from backend.rag.index import KnowledgeIndex
from backend.rag.ingestion import Ingestor
from backend.rag.knowledge import knowledge_database
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
