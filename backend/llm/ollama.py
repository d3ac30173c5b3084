"""The Ollama backend: chat and embeddings from Ollama hosts, which may differ."""

import httpx
from langchain_ollama import ChatOllama, OllamaEmbeddings

from backend.settings import Settings


def ollama_chat_model(settings: Settings, url: str | None = None, connect_seconds: float | None = None) -> ChatOllama:
    """ChatOllama on a chat host (the first configured one unless given); `connect_seconds` caps the wait for a
    connection (a pool's next server should not wait RAG_LLM_TIMEOUT_SECONDS for a host that is off)."""
    timeout = settings.llm_timeout_seconds
    return ChatOllama(
        model=settings.ollama_chat_model,
        base_url=url or settings.ollama_base_url.split(",")[0],
        temperature=settings.temperature,
        num_predict=settings.max_answer_tokens,
        client_kwargs={"timeout": httpx.Timeout(timeout, connect=connect_seconds) if connect_seconds else timeout},
    )


def ollama_embeddings(settings: Settings) -> OllamaEmbeddings:
    """OllamaEmbeddings on the embedding host (the chat host unless set apart)."""
    return OllamaEmbeddings(model=settings.ollama_embed_model, base_url=settings.ollama_embed_url)
