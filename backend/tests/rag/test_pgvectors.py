"""PgVectorStore against real Chroma on the same vectors, its filters, and keyword search on Postgres."""

from collections.abc import Iterator

import numpy as np
import pytest

from backend.rag.chunking import Chunk
from backend.rag.index import KnowledgeIndex
from backend.rag.knowledge import knowledge_database
from backend.rag.pgvectors import DimensionMismatch, PgVectorStore, UnsupportedFilter
from backend.rag.store import open_client, open_collection
from backend.store.database import Database
from backend.tests.conftest import fake_settings

DIM = 384


@pytest.fixture
def pg(tmp_path, postgres_url) -> Iterator[Database]:
    """A migrated Postgres database."""
    with knowledge_database(fake_settings(tmp_path, database_url=postgres_url)) as db:
        yield db


def _unit(rng: np.random.Generator, n: int, around: np.ndarray | None = None) -> list[list[float]]:
    vectors = rng.normal(size=(n, DIM)).astype(np.float32)
    if around is not None:
        vectors = vectors * 0.3 + around
    return (vectors / np.linalg.norm(vectors, axis=1, keepdims=True)).tolist()


def _fill(stores: list, docs: dict[str, list[list[float]]]) -> None:
    for doc, vectors in docs.items():
        ids = [f"{doc}:1:{i}" for i in range(len(vectors))]
        metas = [{"document_id": doc, "version": 1, "chunk": i, "document": f"{doc}.md"} for i in range(len(vectors))]
        for store in stores:
            store.add(ids=ids, embeddings=vectors, documents=[f"text {i}" for i in ids], metadatas=metas)


def test_distances_ids_and_metadata_match_chroma_on_the_same_vectors(tmp_path, pg):
    rng = np.random.default_rng(7)
    chroma = open_collection(open_client(fake_settings(tmp_path / "chroma")), "test", None)
    vectors = PgVectorStore(pg)
    _fill([chroma, vectors], {"a": _unit(rng, 30), "b": _unit(rng, 30), "c": _unit(rng, 30)})
    queries = _unit(rng, 3)
    for where in (None, {"document_id": {"$in": ["a", "c"]}}, {"document_id": "b"}):
        want = chroma.query(query_embeddings=queries, n_results=8, where=where, include=["metadatas", "distances"])
        got = vectors.query(query_embeddings=queries, n_results=8, where=where, include=["metadatas", "distances"])
        assert got["ids"] == want["ids"], where
        assert got["metadatas"] == want["metadatas"], where
        assert np.allclose(got["distances"], want["distances"], atol=1e-5), where
    ids = ["a:1:3", "b:1:0", "missing"]
    want = chroma.get(ids=ids, include=["embeddings"])
    got = vectors.get(ids=ids, include=["embeddings"])
    assert sorted(got["ids"]) == sorted(want["ids"]) == ["a:1:3", "b:1:0"]
    by_id = dict(zip(want["ids"], want["embeddings"], strict=True))
    assert all(np.allclose(e, by_id[i], atol=1e-6) for i, e in zip(got["ids"], got["embeddings"], strict=True))


def test_delete_by_ids_by_document_and_by_other_versions(pg):
    rng = np.random.default_rng(1)
    vectors = PgVectorStore(pg)
    _fill([vectors], {"a": _unit(rng, 3), "b": _unit(rng, 2)})
    vectors.add(
        ids=["a:2:0"], embeddings=_unit(rng, 1), documents=["new"], metadatas=[{"document_id": "a", "version": 2}]
    )
    vectors.delete(ids=["b:1:0"])
    assert vectors.get(where={"document_id": "b"})["ids"] == ["b:1:1"]
    vectors.delete(where={"$and": [{"document_id": "a"}, {"version": {"$ne": 2}}]})
    assert vectors.get(where={"document_id": "a"})["documents"] == ["new"]
    vectors.delete(where={"document_id": "a"})
    assert vectors.get()["ids"] == ["b:1:1"]
    vectors.delete()  # neither ids nor where: nothing, as a bare DELETE would be everything
    assert vectors.count() == 1


def test_a_filtered_query_returns_n_results_even_when_the_nearest_are_all_filtered_out(pg):
    rng = np.random.default_rng(3)
    centre = np.asarray(_unit(rng, 1)[0], dtype=np.float32)
    others = {f"far{i}": _unit(rng, 10, around=-centre) for i in range(50)}
    vectors = PgVectorStore(pg)
    _fill([vectors], {"near": _unit(rng, 400, around=centre), **others})
    with pg.connection() as conn:
        conn.execute("ANALYZE vectors")
    got = vectors.query(query_embeddings=[centre.tolist()], n_results=10, where={"document_id": {"$in": list(others)}})
    assert len(got["ids"][0]) == 10 and all(m["document_id"] != "near" for m in got["metadatas"][0])


def test_unsupported_filters_and_wrong_dimensions_are_refused_clearly(pg):
    vectors = PgVectorStore(pg)
    for where in ({"document": "a.md"}, {"document_id": {"$nin": ["a"]}}, {"$or": [{"document_id": "a"}]}):
        with pytest.raises(UnsupportedFilter):
            vectors.query(query_embeddings=[[0.0] * DIM], n_results=1, where=where)
    vectors.add(ids=["a"], embeddings=[[1.0] * DIM], metadatas=[{"document_id": "a", "version": 1}])  # sets it
    with pytest.raises(DimensionMismatch, match=f"holds {DIM}-dimensional vectors and the embedder gives 768"):
        vectors.add(ids=["x"], embeddings=[[1.0] * 768], metadatas=[{"document_id": "x", "version": 1}])
    assert PgVectorStore(pg).dimensions() == DIM  # as another replica sees it


def test_a_new_database_takes_the_size_of_the_first_vectors_stored(pg):
    vectors = PgVectorStore(pg)
    assert vectors.dimensions() == -1  # nothing stored: no size yet, no index
    vectors.add(ids=["a"], embeddings=[[0.5] * 768], metadatas=[{"document_id": "a", "version": 1}])
    assert vectors.dimensions() == 768
    with pg.connection() as conn:
        assert conn.execute("SELECT 1 FROM pg_indexes WHERE indexname = 'vectors_embedding'").fetchone()
    found = vectors.query(query_embeddings=[[0.5] * 768], n_results=1)
    assert found["ids"] == [["a"]] and found["distances"][0][0] == pytest.approx(0.0, abs=1e-6)


def _chunk(i: int, text: str) -> Chunk:
    return Chunk(index=i, text=text, page=None, section=None, start=0, end=len(text), hash=str(i))


def test_postgres_keyword_search_stems_ranks_and_respects_the_document_filter(pg):
    index = KnowledgeIndex(pg)
    for doc, texts in {
        "d1": ["The keepers rotated every six weeks.", "Puffins nest on the cliffs."],
        "d2": ["A keeper of bees keeps a keeper's diary about keepers.", "Bread is baked daily."],
    }.items():
        index.upsert_pending(doc, f"{doc}.md", "markdown", 1)
        index.activate(
            doc, 1, [_chunk(i, t) for i, t in enumerate(texts)], type_="markdown", size=1, pages=None, sha256=""
        )
    hits = index.bm25("Who was the keeper?", 10)
    assert [(c.doc_id, c.idx) for c, _ in hits] == [("d2", 0), ("d1", 0)]  # stemmed; more matches rank first
    assert hits[0][1] > hits[1][1] > 0
    assert [c.doc_id for c, _ in index.bm25("keeper", 10, ["d1"])] == ["d1"]
    assert index.bm25("keeper", 10, []) == []
    assert index.bm25("keeper & !bees | ' :* (", 10)  # user text is never tsquery syntax
    assert index.bm25("the and of", 10) == []
