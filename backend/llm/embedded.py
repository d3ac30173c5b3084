"""The embedded backend: llama.cpp (xllamacpp) serving a GGUF model on 127.0.0.1 inside this process."""

import logging
import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from langchain_openai import ChatOpenAI

from backend.settings import Settings

log = logging.getLogger(__name__)

SLOTS = 2  # one per concurrent request; each keeps its own KV-cache prefix


@contextmanager
def llama_server(model_path: Path, ctx: int, threads: int) -> Iterator[str]:
    """Run llama.cpp's OpenAI-compatible server on a free loopback port; yields its base URL."""
    import xllamacpp  # loaded here: importing it pulls in the native library

    params = xllamacpp.CommonParams()
    params.model.path = str(model_path)
    params.n_ctx = ctx * SLOTS
    params.n_parallel = SLOTS
    params.cpuparams.n_threads = threads or os.cpu_count() or 2
    params.cpuparams_batch.n_threads = params.cpuparams.n_threads
    params.port = 0
    params.cache_prompt = True
    server = xllamacpp.Server(params)
    url = server.listening_address
    log.info("llama.cpp serving %s at %s", model_path.name, url)
    try:
        yield url
    finally:
        del server


def embedded_chat_model(base_url: str, model_name: str, settings: Settings) -> ChatOpenAI:
    """A streaming OpenAI-compatible chat model pointed at the in-process llama.cpp server."""
    return ChatOpenAI(
        base_url=f"{base_url}/v1",
        api_key="local",
        model=model_name,
        temperature=settings.temperature,
        max_tokens=settings.max_answer_tokens,
        timeout=settings.llm_timeout_seconds,
        max_retries=0,
        streaming=True,
    )
