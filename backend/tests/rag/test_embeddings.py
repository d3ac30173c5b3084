import numpy as np
from chromadb.utils.embedding_functions import ONNXMiniLM_L6_V2

from backend.rag.embeddings import OfflineMiniLM, ensure_onnx_files
from backend.settings import Settings

TEXTS = ["hi", "The Zephyr-9 must be serviced every 12 months. " * 8, "Passwords must be at least 14 characters."]


def test_offline_minilm_has_chroma_files_and_matches_chroma_vectors():
    root = ensure_onnx_files(Settings().cache_dir)
    names = {p.name for p in (root / "onnx").iterdir()}
    assert {
        "config.json",
        "model.onnx",
        "special_tokens_map.json",
        "tokenizer_config.json",
        "tokenizer.json",
        "vocab.txt",
    } <= names
    ours = np.array(OfflineMiniLM(root)(TEXTS))
    reference = ONNXMiniLM_L6_V2(preferred_providers=["CPUExecutionProvider"])
    reference.DOWNLOAD_PATH = root  # same files, Chroma's own pad-to-256 code path
    assert ours.shape == (3, 384)
    assert np.abs(ours - np.array(reference(TEXTS))).max() < 1e-5
    assert float(ours[1] @ ours[2]) < float(ours[1] @ ours[1])


def test_vocab_txt_lists_tokens_in_id_order():
    folder = ensure_onnx_files(Settings().cache_dir) / "onnx"
    vocab = (folder / "vocab.txt").read_text().splitlines()
    assert vocab[0] == "[PAD]" and vocab[101] == "[CLS]" and len(vocab) == 30522
