from backend.rag.embeddings import OfflineMiniLM, ensure_onnx_files
from backend.rag.ingest import replace_document, split_paragraphs
from backend.rag.store import open_client, open_collection
from backend.tests.conftest import fake_settings


def test_split_paragraphs_groups_to_target_and_starts_chunks_at_headings():
    text = "# A\n\n" + "one two. " * 10 + "\n\n" + "three. " * 10 + "\n\n# B\n\nfour."
    chunks = split_paragraphs(text, target_chars=500)
    assert len(chunks) == 2
    assert chunks[0].startswith("# A") and chunks[1] == "# B\n\nfour."


def test_replace_document_replaces_old_chunks_without_stale_ones(tmp_path):
    settings = fake_settings(tmp_path)
    collection = open_collection(open_client(settings), "test", OfflineMiniLM(ensure_onnx_files(settings.cache_dir)))
    long_version = "\n\n".join(f"# Part {i}\n\nText {i}." for i in range(5))
    assert replace_document(collection, "doc.md", long_version) == 5
    assert replace_document(collection, "doc.md", "# Only\n\nShort now.") == 1
    stored = collection.get(where={"document": "doc.md"})
    assert stored["documents"] == ["# Only\n\nShort now."]
