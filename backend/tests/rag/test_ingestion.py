from collections.abc import Iterator

import pytest

from backend.rag.knowledge import KnowledgeBase
from backend.rag.loaders import DocumentError
from backend.tests.conftest import fake_settings
from backend.tests.rag.conftest import open_kb

V1 = b"# Leave\n\nStaff get 28 days of annual leave.\n\n# Notice\n\nThe notice period is two months."
V2 = b"# Leave\n\nStaff get 30 days of annual leave from 2025."


@pytest.fixture
def kb(tmp_path, engine) -> Iterator[KnowledgeBase]:
    with open_kb(fake_settings(tmp_path, **engine)) as kb:
        yield kb


def vectors_of(kb: KnowledgeBase, doc_id: str) -> list[str]:
    return sorted(kb.collection.get(where={"document_id": doc_id})["documents"])


def test_ingest_then_same_file_again_is_a_no_op(kb):
    first = kb.ingestor.ingest("policy.md", V1)
    again = kb.ingestor.ingest("policy.md", V1)
    assert (first.outcome, again.outcome) == ("added", "unchanged")
    assert again.record.version == first.record.version == 1


def test_changed_file_replaces_all_old_chunks_in_every_index(kb):
    doc_id = kb.ingestor.ingest("policy.md", V1).record.id
    updated = kb.ingestor.ingest("POLICY.md", V2)
    assert updated.outcome == "updated" and updated.record.id == doc_id and updated.record.version == 2
    assert all("28 days" not in t for t in vectors_of(kb, doc_id))
    assert kb.index.bm25("notice period", 10) == []
    assert [("30 days" in c.text, c.version) for c, _ in kb.index.bm25("annual leave", 10)] == [(True, 2)]
    hits = kb.retriever.run("how many days of annual leave?", 4).sources
    assert hits and all("28 days" not in h["text"] for h in hits)


def test_delete_removes_document_from_registry_bm25_and_vectors(kb):
    doc_id = kb.ingestor.ingest("policy.md", V1).record.id
    kb.ingestor.ingest("other.md", b"Bicycles are parked in the basement.")
    assert kb.ingestor.delete(doc_id) is True
    assert kb.index.document(doc_id) is None
    assert vectors_of(kb, doc_id) == []
    assert kb.index.bm25("annual leave", 10) == []
    assert kb.ingestor.delete(doc_id) is False


def test_failing_embedding_leaves_no_partial_chunks_and_keeps_previous_version(kb, monkeypatch):
    doc_id = kb.ingestor.ingest("policy.md", V1).record.id
    calls = {"n": 0}
    real_add = kb.collection.add

    def add_then_fail(**kwargs):
        calls["n"] += 1
        real_add(**kwargs)
        raise RuntimeError("disk full")

    monkeypatch.setattr(
        kb.ingestor,
        "_collection",
        type("C", (), {"add": staticmethod(add_then_fail), "delete": kb.collection.delete})(),
    )
    with pytest.raises(RuntimeError):
        kb.ingestor.ingest("policy.md", V2)
    record = kb.index.document(doc_id)
    assert record.version == 1 and record.status == "ready" and "disk full" in record.error
    assert all("30 days" not in t for t in vectors_of(kb, doc_id))
    assert "28 days" in " ".join(vectors_of(kb, doc_id))


def test_bad_names_are_rejected_before_anything_is_stored(kb):
    for name in ("../evil.md", "a/b.md", "..\\x.md", ""):
        with pytest.raises(DocumentError) as err:
            kb.ingestor.ingest(name, V1)
        assert err.value.status == 422
    with pytest.raises(DocumentError) as err:
        kb.ingestor.ingest("tool.exe", b"MZ")
    assert err.value.status == 415
    assert kb.index.documents() == []


def test_index_survives_reopen(tmp_path, engine):
    with open_kb(fake_settings(tmp_path, **engine)) as kb:
        kb.ingestor.ingest("policy.md", V1)
    with open_kb(fake_settings(tmp_path, **engine)) as reopened:
        assert [d.name for d in reopened.index.documents()] == ["policy.md"]
        assert reopened.retriever.run("notice period", 2).sources[0]["document"] == "policy.md"
