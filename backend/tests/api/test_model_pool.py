"""The whole app on a pool of two model servers (wire-format doubles): a turn survives one being stopped, /api/health
lists each server, down with its error, then up again after a health check; a hang-up mid-answer is not retried."""

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import httpx
import pytest
from asgi_lifespan import LifespanManager
from fastapi import FastAPI

from backend.main import create_app
from backend.settings import Settings
from backend.tests.ollama_double import serve_ollama, word_pieces
from backend.tests.openai_double import Completion, serve_openai
from bench.lib.server import asgi_client
from bench.lib.sse import parse_sse

pytestmark = pytest.mark.usefixtures("no_model_env")
ANSWER = "Annual plans can be refunded within 30 days."


@asynccontextmanager
async def pool_app(tmp_path: Path, urls: list[str], **overrides) -> AsyncIterator[tuple[FastAPI, httpx.AsyncClient]]:
    """The app on the ollama backend with a pool of chat hosts; health checks only when a test runs them."""
    settings = Settings(
        llm_backend="ollama",
        ollama_base_url=",".join(urls),
        model_health_seconds=3600,
        data_dir=tmp_path / "data",
        **overrides,
    )
    app = create_app(settings)
    async with (
        LifespanManager(app) as manager,
        httpx.AsyncClient(transport=httpx.ASGITransport(app=manager.app), base_url="http://test", timeout=30) as client,
    ):
        yield app, client


async def chat_turn(client: httpx.AsyncClient, message: str) -> list[tuple[str, dict]]:
    response = await client.post("/api/chat/stream", json={"message": message, "mode": "chat"})
    assert response.status_code == 200
    return parse_sse(response)


async def test_a_turn_when_one_server_is_stopped_is_answered_by_the_other_and_health_lists_it_down(tmp_path):
    with serve_ollama() as a, serve_ollama() as b:
        async with pool_app(tmp_path, [a.base_url, b.base_url], ollama_embed_base_url=b.base_url) as (app, client):
            before = (await client.get("/api/health")).json()
            a.stop()  # the first in turn: the turn's first request goes there and fails over
            b.script(ANSWER)
            events = await chat_turn(client, "Can I get a refund?")
            after = (await client.get("/api/health")).json()

            a.restart()
            await app.state.services.models.pool.check()
            back = (await client.get("/api/health")).json()

    assert before["model_server"] == f"{a.base_url}, {b.base_url}"
    assert before["model_servers"] == [
        {"url": a.base_url, "healthy": True, "in_flight": 0, "last_error": None},
        {"url": b.base_url, "healthy": True, "in_flight": 0, "last_error": None},
    ]
    assert events[-1][0] == "done" and events[-1][1]["answer"] == ANSWER
    assert "".join(d["text"] for n, d in events if n == "token") == ANSWER  # streamed once, from b
    assert a.requests_to("/api/chat") == []
    down, up = after["model_servers"]
    assert (down["url"], down["healthy"], down["in_flight"]) == (a.base_url, False, 0)
    assert "ConnectError" in down["last_error"] or "ConnectionError" in down["last_error"]
    assert up == {"url": b.base_url, "healthy": True, "in_flight": 0, "last_error": None}
    assert [s["healthy"] for s in back["model_servers"]] == [True, True]
    assert back["model_servers"][0]["last_error"] is None


async def test_when_every_server_of_the_pool_is_down_the_error_names_them_all(tmp_path):
    with serve_ollama() as a, serve_ollama() as b, serve_ollama() as embed:
        a.stop()
        b.stop()
        async with pool_app(tmp_path, [a.base_url, b.base_url], ollama_embed_base_url=embed.base_url) as (_, client):
            events = await chat_turn(client, "Anyone there?")
            health = (await client.get("/api/health")).json()

    name, error = events[-1]
    assert name == "error" and error["code"] == "model_unreachable"
    assert f"the ollama model servers at {a.base_url}, {b.base_url}" in error["message"]
    assert "RAG_OLLAMA_BASE_URL" in error["message"]
    assert [s["healthy"] for s in health["model_servers"]] == [False, False]


async def test_a_server_of_the_pool_that_hangs_up_mid_answer_is_not_retried_and_the_error_names_it(tmp_path):
    with serve_openai() as a, serve_openai() as b:
        a.script(Completion(text=ANSWER, hang_up_after=3))
        b.script("Text that must not be sent.")
        settings = Settings(
            llm_backend="openai",
            openai_base_url=f"{a.url},{b.url}",
            openai_chat_model="double-chat",
            model_health_seconds=3600,
            data_dir=tmp_path / "data",
        )
        async with asgi_client(create_app(settings)) as client:
            events = await chat_turn(client, "Can I get a refund?")
            threads = (await client.get("/api/threads")).json()

    name, error = events[-1]
    assert name == "error" and error["code"] == "model_error"
    assert error["message"] == f"The openai model server at {a.url} broke off its answer."
    assert "".join(d["text"] for n, d in events if n == "token") == "".join(word_pieces(ANSWER)[:3])
    assert b.requests_to("/v1/chat/completions") == [] and threads == []
