"""RAG_EMBEDDED_MODEL_PATH: a GGUF file of the user's, here the bundled 0.5B model under another name, runs a real
turn in the embedded backend; nothing bundled is fetched, and /api/health and the saved KV cache name that file."""

import pytest

from backend.llm import factory
from backend.llm.model_files import MODELS, file_tag
from backend.main import create_app
from backend.settings import Settings
from bench.lib.server import asgi_client
from bench.lib.sse import parse_sse

pytestmark = pytest.mark.embedded_model


async def test_a_gguf_file_given_by_path_answers_a_turn_and_health_names_it(tmp_path, monkeypatch):
    bundled = Settings(_env_file=None).cache_dir / "models" / MODELS["qwen2.5-coder-0.5b"].filename
    if not bundled.exists():
        pytest.fail(f"{bundled} is missing: run python -m backend.cli prepare --model qwen2.5-coder-0.5b")
    mine = tmp_path / "my-own-chat-model.Q4_K_M.gguf"
    mine.symlink_to(bundled)
    monkeypatch.setattr(factory, "ensure_model", lambda *a: pytest.fail("a bundled model was fetched"))
    settings = Settings(
        llm_backend="embedded",
        embedded_model_path=mine,
        embedded_ctx=1024,
        embedded_slots=1,
        temperature=0.0,
        max_answer_tokens=12,
        data_dir=tmp_path / "data",
        _env_file=None,
    )
    async with asgi_client(create_app(settings)) as client:
        events = parse_sse(await client.post("/api/chat/stream", json={"message": "Say hello to me.", "mode": "chat"}))
        health = (await client.get("/api/health")).json()

    names = [n for n, _ in events]
    assert names[0] == "metadata" and names[-1] == "done", events[-3:]
    assert [d["text"] for n, d in events if n == "token"] and events[-1][1]["answer"]
    assert (health["backend"], health["model"], health["model_server"]) == ("embedded", mine.name, None)
    saved = [p.name for p in (tmp_path / "data" / "kv").glob("*.bin")]
    assert len(saved) == 2  # the primed system prompt and the thread
    assert all(f".{file_tag(mine)}." in name for name in saved)  # keyed on this file, not on a bundled model
