import pytest

from backend.rag.embeddings import OfflineMiniLM, ensure_onnx_files
from backend.rag.ingest import replace_document
from backend.rag.retriever import VectorRetriever, snippet
from backend.rag.store import open_client, open_collection
from backend.tests.conftest import fake_settings


@pytest.fixture
def collection(tmp_path):
    settings = fake_settings(tmp_path)
    embed = OfflineMiniLM(ensure_onnx_files(settings.cache_dir))
    return open_collection(open_client(settings), "test", embed)


async def test_nearest_distance_is_none_when_empty_then_small_for_matching_text(collection):
    retriever = VectorRetriever(collection, max_distance=0.9)
    assert await retriever.nearest_distance("anything") is None
    replace_document(collection, "cats.md", "Cats sleep for sixteen hours a day.")
    assert await retriever.nearest_distance("How long do cats sleep?") < 0.5


async def test_search_filters_by_document_and_drops_irrelevant_chunks(collection):
    replace_document(collection, "cats.md", "Cats sleep for sixteen hours a day.")
    replace_document(collection, "boats.md", "Sailing boats need wind to move.")
    retriever = VectorRetriever(collection, max_distance=0.7)
    hits = await retriever.search("How long do cats sleep?", k=4)
    assert [h["document"] for h in hits] == ["cats.md"]
    assert hits[0]["id"] == "S1" and 0 < hits[0]["score"] <= 1 and hits[0]["chunk"] == 0
    only_boats = await VectorRetriever(collection, max_distance=2.0).search("cats", k=4, documents=["boats.md"])
    assert {h["document"] for h in only_boats} == {"boats.md"}
    assert await retriever.document_names() == ["boats.md", "cats.md"]


def test_snippet_cuts_at_word_boundary():
    assert snippet("word " * 100).endswith("word…") and len(snippet("word " * 100)) <= 241
    assert snippet("short  text\n") == "short text"
