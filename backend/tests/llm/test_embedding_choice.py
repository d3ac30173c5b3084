"""Which embedder fills the vector store on the openai backend, and what switching embedders does (as with Ollama:
the store remembers the kind of embedder and refuses another)."""

import pytest

from backend.llm.factory import MINILM, embedding_function
from backend.rag.embeddings import OpenAIEmbeddingFunction
from backend.rag.store import open_client, open_collection
from backend.settings import Settings


def settings(tmp_path, **values) -> Settings:
    return Settings(data_dir=tmp_path / "data", _env_file=None, **values)


def test_openai_without_an_embedding_model_reuses_a_store_the_offline_minilm_filled(tmp_path):
    embedded = settings(tmp_path, llm_backend="embedded")
    open_collection(open_client(embedded), embedded.collection, embedding_function(embedded)[0])
    openai = settings(tmp_path, llm_backend="openai", openai_chat_model="m")
    embed, name = embedding_function(openai)
    assert name == MINILM
    open_collection(open_client(openai), openai.collection, embed)  # no conflict: the same embedder


def test_openai_with_an_embedding_model_on_a_minilm_store_is_refused_at_open(tmp_path):
    embedded = settings(tmp_path, llm_backend="embedded")
    open_collection(open_client(embedded), embedded.collection, embedding_function(embedded)[0])
    openai = settings(tmp_path, llm_backend="openai", openai_chat_model="m", openai_embed_model="bge-small")
    embed, name = embedding_function(openai)
    assert isinstance(embed, OpenAIEmbeddingFunction) and name == "bge-small"
    with pytest.raises(ValueError, match="Embedding function conflict: new: ragline_openai vs persisted"):
        open_collection(open_client(openai), openai.collection, embed)
