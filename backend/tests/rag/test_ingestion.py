import threading
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor

import pytest

from backend.rag.ingestion import Prepared, Registered
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


def chunk_texts(kb: KnowledgeBase, doc_id: str) -> list[str]:
    return sorted(r["text"] for r in kb.index.rows("SELECT text FROM chunks WHERE doc_id = ?", (doc_id,)))


def test_a_version_queued_behind_another_of_a_new_name_replaces_it_in_every_index(kb):
    # a user uploads a file, then a corrected copy before the first is embedded: both were registered as version 0,
    # both were committed as version 1, and the vector store kept the first copy's vectors (a known id is ignored)
    # while the keyword index and the document's text held the second's
    first, second = (kb.ingestor.prepare("policy.md", v) for v in (V1, V2))
    queued = [kb.ingestor.register(p) for p in (first, second)]
    assert [q.outcome for q in queued] == ["new", "replaced"] and queued[0].record.id == queued[1].record.id
    results = [kb.ingestor.commit(q.record, p) for q, p in zip(queued, (first, second), strict=True)]
    doc_id = queued[0].record.id
    assert [(r.outcome, r.record.version) for r in results] == [("added", 1), ("updated", 2)]
    assert vectors_of(kb, doc_id) == chunk_texts(kb, doc_id) and "30 days" in " ".join(vectors_of(kb, doc_id))
    assert all("28 days" not in h["text"] for h in kb.retriever.run("how many days of annual leave?", 4).sources)


def test_vectors_an_interrupted_ingestion_left_under_the_next_version_are_replaced(kb):
    prepared = kb.ingestor.prepare("policy.md", V2)
    queued = kb.ingestor.register(prepared)
    doc_id = queued.record.id
    stale = [f"{doc_id}:1:{c.index}" for c in prepared.chunks]  # a process killed after adding them, before activating
    kb.collection.add(
        ids=stale,
        embeddings=kb.ingestor._embed(["Staff get 28 days of annual leave."] * len(stale)),
        documents=["Staff get 28 days of annual leave."] * len(stale),
        metadatas=[{"document_id": doc_id, "version": 1} for _ in stale],
    )
    kb.ingestor.commit(queued.record, prepared)
    assert vectors_of(kb, doc_id) == chunk_texts(kb, doc_id) and "30 days" in " ".join(vectors_of(kb, doc_id))


def test_uploads_of_one_new_name_at_once_make_one_document_and_one_of_them_is_new(kb):
    prepared = [
        kb.ingestor.prepare("rates.md", f"# Rates\n\nMileage is 0.{40 + k} euros per km.".encode()) for k in range(6)
    ]
    start = threading.Barrier(len(prepared))

    def register(p: Prepared) -> Registered:
        start.wait()
        return kb.ingestor.register(p)

    with ThreadPoolExecutor(len(prepared)) as pool:
        queued = list(pool.map(register, prepared))  # before: by_name then insert, so two could both insert
    assert sorted(q.outcome for q in queued) == ["new"] + ["replaced"] * 5
    assert len({q.record.id for q in queued}) == 1 and [d.name for d in kb.index.documents()] == ["rates.md"]


def test_bad_names_are_rejected_before_anything_is_stored(kb):
    for name in ("../evil.md", "a/b.md", "..\\x.md", "", "\u200b.md", "\u2800\ufeff.txt"):  # last two: no name shows
        with pytest.raises(DocumentError) as err:
            kb.ingestor.ingest(name, V1)
        assert err.value.status == 422
    with pytest.raises(DocumentError) as err:
        kb.ingestor.ingest("tool.exe", b"MZ")
    assert err.value.status == 415
    assert kb.index.documents() == []


def test_a_name_stored_decomposed_before_names_were_composed_is_still_found_by_its_file(kb):
    """Names are composed (NFC) at upload now; one stored decomposed by an older Ragline (macOS sends NFD) was not
    found again: the same file from the same Mac was "added" as a second document (review)."""
    decomposed = "Re\u0301sume\u0301.md"
    record = kb.ingestor.register(kb.ingestor.prepare("x.md", b"# CV\n\nFluent in Basque.\n")).record
    with kb.index.transaction() as c:  # as an older Ragline stored it
        c.execute("UPDATE documents SET name = ? WHERE id = ?", (decomposed, record.id))
    kb.ingestor.commit(kb.index.document(record.id), kb.ingestor.prepare("x.md", b"# CV\n\nFluent in Basque.\n"))
    again = kb.ingestor.ingest(decomposed, b"# CV\n\nFluent in Basque.\n")
    assert again.outcome == "unchanged" and again.record.id == record.id
    changed = kb.ingestor.ingest(decomposed.upper(), b"# CV\n\nFluent in Basque and Welsh.\n")
    assert changed.outcome == "updated" and changed.record.id == record.id
    assert [d.id for d in kb.index.documents()] == [record.id]


def test_index_survives_reopen(tmp_path, engine):
    with open_kb(fake_settings(tmp_path, **engine)) as kb:
        kb.ingestor.ingest("policy.md", V1)
    with open_kb(fake_settings(tmp_path, **engine)) as reopened:
        assert [d.name for d in reopened.index.documents()] == ["policy.md"]
        assert reopened.retriever.run("notice period", 2).sources[0]["document"] == "policy.md"
