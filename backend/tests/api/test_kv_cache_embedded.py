"""The KV cache follows the thread, on the real embedded 0.5B model: follow-ups and restarts are served from it."""

import logging

import httpx
import pytest

from backend.main import create_app
from backend.rag.knowledge import ingest_paths
from backend.settings import Settings
from backend.tests.conftest import SAMPLE_DOCS
from bench.lib.server import serve_in_thread
from bench.lib.sse import parse_sse

pytestmark = pytest.mark.embedded_model


def settings(data_dir) -> Settings:
    return Settings(
        llm_backend="embedded",
        embedded_model="qwen2.5-coder-0.5b",
        embedded_ctx=2048,
        embedded_slots=1,  # one slot: its counters describe the last request
        temperature=0.0,
        max_answer_tokens=60,
        data_dir=data_dir,
    )


def ask(url: str, message: str, thread_id: str) -> dict:
    events = parse_sse(
        httpx.post(f"{url}/api/chat/stream", json={"message": message, "thread_id": thread_id}, timeout=600)
    )
    assert events[-1][0] == "done", events[-1]
    return events[-1][1]


def last_request(app) -> dict:
    """llama.cpp's counters for the last request on the (only) slot: prompt tokens, evaluated, from cache."""
    slot = httpx.get(f"{app.state.services.models.base_url}/slots").json()[0]
    return {k: slot[k] for k in ("n_prompt_tokens", "n_prompt_tokens_processed", "n_prompt_tokens_cache")}


def test_follow_ups_come_from_the_kv_cache_also_after_a_restart_and_the_cache_goes_with_its_thread(tmp_path, caplog):
    data = tmp_path / "data"
    first = create_app(settings(data))
    with serve_in_thread(first) as url:
        import asyncio

        asyncio.run(ingest_paths(first.state.services.knowledge, [SAMPLE_DOCS]))
        ask(url, "How often must the Zephyr-9 be serviced?", "kv")
        ask(url, "And how much does a service cost?", "kv")
        follow = last_request(first)
        kv = first.state.services.models.kv
        saved = kv.folder / kv.filename("kv")
        assert saved.exists() and 0 < saved.stat().st_size <= 50e6
    assert follow["n_prompt_tokens_processed"] < follow["n_prompt_tokens"] / 2, follow

    second = create_app(settings(data))
    caplog.set_level(logging.WARNING, logger="backend.llm.kv_cache")
    with serve_in_thread(second) as url:
        kv = second.state.services.models.kv
        (kv.folder / kv.filename("garbage")).write_bytes(b"not a KV cache" * 100)
        ask(url, "@it-security-policy what must I do when a laptop is lost?", "garbage")  # ignored, no error
        assert "KV cache restore ignored" in caplog.text
        ask(url, "Is the service covered by the warranty?", "kv")
        after_restart = last_request(second)
        assert after_restart["n_prompt_tokens_processed"] < after_restart["n_prompt_tokens"] / 2, after_restart
        assert httpx.delete(f"{url}/api/threads/kv").status_code == 204
        assert not list(kv.folder.glob(f"{kv.thread_key('kv')}.*"))
