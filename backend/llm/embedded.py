"""The embedded backend: llama.cpp (xllamacpp) serving a GGUF model on 127.0.0.1 inside this process."""

import logging
import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx2
from langchain_openai import ChatOpenAI

from backend.settings import Settings

log = logging.getLogger(__name__)


@contextmanager
def llama_server(model_path: Path, settings: Settings) -> Iterator[str]:
    """Run llama.cpp's OpenAI-compatible server on a free loopback port; yields its base URL.

    Prompts are rendered with the chat template inside the GGUF file (llama.cpp's Jinja engine), so any chat model
    works. Each slot holds one conversation's KV cache; prompts are cached (`cache_prompt`), shifted prefixes
    reused (`n_cache_reuse`), idle slots kept in a host-memory prompt cache (`cache_ram_mib`), and slots can be
    saved to and restored from RAG_DATA_DIR/kv (`slot_save_path`).
    """
    import xllamacpp  # loaded here: importing it pulls in the native library

    params = xllamacpp.CommonParams()
    params.model.path = str(model_path)
    params.use_jinja = True  # the file's own chat template (xllamacpp's default too)
    params.n_ctx = settings.embedded_ctx * settings.embedded_slots
    params.n_parallel = settings.embedded_slots
    params.cpuparams.n_threads = settings.embedded_threads or os.cpu_count() or 2
    params.cpuparams_batch.n_threads = params.cpuparams.n_threads
    params.port = 0
    params.cache_prompt = True
    params.n_cache_reuse = settings.embedded_cache_reuse
    params.cache_ram_mib = settings.embedded_cache_ram_mb
    settings.kv_cache_path.mkdir(parents=True, exist_ok=True)
    params.slot_save_path = str(settings.kv_cache_path) + os.sep  # llama.cpp appends the file name as is
    if settings.embedded_kv_type == "q8_0":
        params.cache_type_k = params.cache_type_v = int(xllamacpp.ggml_type.GGML_TYPE_Q8_0)
    server = xllamacpp.Server(params)
    url = server.listening_address
    log.info("llama.cpp serving %s at %s", model_path.name, url)
    try:
        yield url
    finally:
        del server


def embedded_chat_model(base_url: str, model_name: str, settings: Settings, http: httpx2.AsyncClient) -> ChatOpenAI:
    """A streaming OpenAI-compatible chat model pointed at the in-process llama.cpp server, on the app's own
    connections (`http`, see open_models)."""
    return ChatOpenAI(
        http_async_client=http,
        base_url=f"{base_url}/v1",
        api_key="local",
        model=model_name,
        temperature=settings.temperature,
        max_tokens=settings.max_answer_tokens,
        timeout=settings.llm_timeout_seconds,
        stream_chunk_timeout=settings.llm_timeout_seconds,  # langchain-openai's own default (120 s) is shorter than
        # a long prompt's prefill on a slow CPU: the first chunk may take minutes
        max_retries=0,
        streaming=True,
        stream_usage=True,  # each call's last chunk carries llama.cpp's token counts (the /v1 API reports them)
    )
