"""The whole app on the openai backend against the OpenAI wire-format double: what a real server cannot be made to
do on demand (errors and hang-ups mid-answer, tools refused, scripted tool calls). test_e2e_openai.py runs the
same backend against a real llama.cpp server."""

import asyncio
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from pathlib import Path

import httpx
import pytest
from fastapi import FastAPI

from backend.main import create_app
from backend.settings import Settings
from backend.tests.api.test_chat_ollama import REFUNDS, names, stream_turn
from backend.tests.ollama_double import unreachable_url, word_pieces
from backend.tests.openai_double import Completion, OpenAIDouble, serve_openai
from bench.lib.server import asgi_client

pytestmark = pytest.mark.usefixtures("no_model_env")  # every test here ignores the caller's RAG_* shell

ANSWER = "The answer is forty-two, as the guide says."
CHAT = "/v1/chat/completions"


@pytest.fixture
def server() -> Iterator[OpenAIDouble]:
    with serve_openai() as double:
        yield double


@asynccontextmanager
async def openai_app(tmp_path: Path, url: str, **overrides) -> AsyncIterator[tuple[FastAPI, httpx.AsyncClient]]:
    """The app on the openai backend at url, started, with a client talking to it in-process."""
    values = {"openai_chat_model": "served-model", "data_dir": tmp_path / "data", **overrides}
    app = create_app(Settings(llm_backend="openai", openai_base_url=url, **values))
    async with asgi_client(app) as client:
        yield app, client


def tokens(events: list[tuple[str, dict]]) -> str:
    return "".join(d["text"] for n, d in events if n == "token")


async def test_stream_chat_turn_relays_server_tokens_with_the_configured_model_and_key(server, tmp_path, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-of-the-caller")  # must never reach a self-hosted server
    server.script(ANSWER)
    async with openai_app(tmp_path, server.url, openai_api_key="team-key") as (_, client):
        events = await stream_turn(client, "What is the answer?", "chat")
        health = (await client.get("/api/health")).json()
        thread = await client.get(f"/api/threads/{events[0][1]['thread_id']}")

    assert names(events)[0] == "metadata" and names(events)[-1] == "done"
    assert tokens(events) == ANSWER and len([n for n in names(events) if n == "token"]) > 1
    request = server.requests_to(CHAT)[0]
    assert request.body["model"] == "served-model" and request.body["stream"] is True
    assert request.body["messages"][-1] == {"role": "user", "content": "What is the answer?"}
    assert request.headers["authorization"] == "Bearer team-key"
    assert [m["content"] for m in thread.json()["messages"]] == ["What is the answer?", ANSWER]
    assert (health["backend"], health["model"], health["model_server"]) == ("openai", "served-model", server.url)
    assert health["embedding_model"] == "all-MiniLM-L6-v2"  # no embedding model configured: the offline MiniLM


async def test_without_a_key_the_callers_openai_key_is_not_sent(server, tmp_path, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-of-the-caller")
    async with openai_app(tmp_path, server.url) as (_, client):
        events = await stream_turn(client, "What is the answer?", "chat")
    assert names(events)[-1] == "done"
    assert "sk-of-the-caller" not in server.requests_to(CHAT)[0].headers.get("authorization", "")


async def test_documents_are_embedded_by_the_servers_embedding_model_when_one_is_configured(server, tmp_path):
    server.script("Within 30 days [S1].")
    async with openai_app(tmp_path, server.url, openai_embed_model="served-embedder") as (app, client):
        await app.state.services.knowledge.ingest_now("refunds.md", REFUNDS.encode())
        events = await stream_turn(client, "How long is the refund window for annual plans?", "rag")
        health = (await client.get("/api/health")).json()

    embeddings = server.requests_to("/v1/embeddings")
    assert {r.body["model"] for r in embeddings} == {"served-embedder"}
    assert {r.body["encoding_format"] for r in embeddings} == {"float"}  # raw text in, floats out
    assert any("Annual plans can be refunded within 30 days" in text for r in embeddings for text in r.body["input"])
    assert any(r.body["input"] == ["How long is the refund window for annual plans?"] for r in embeddings)
    assert [(s["id"], s["document"]) for s in dict(events)["sources"]["sources"]] == [("S1", "refunds.md")]
    assert health["embedding_model"] == "served-embedder"


async def test_stream_when_server_errors_mid_answer_then_model_error_naming_it_and_nothing_recorded(server, tmp_path):
    server.script(Completion(text=ANSWER, error="slot 0 crashed: out of memory", error_after=3))
    async with openai_app(tmp_path, server.url) as (_, client):
        events = await stream_turn(client, "What is the answer?", "chat")
        thread = await client.get(f"/api/threads/{events[0][1]['thread_id']}")
        threads = await client.get("/api/threads")

    assert names(events)[0] == "metadata" and names(events)[-1] == "error" and "done" not in names(events)
    assert tokens(events) and ANSWER.startswith(tokens(events))
    error = events[-1][1]
    assert error["code"] == "model_error"
    assert server.url in error["message"] and "slot 0 crashed: out of memory" in error["message"]
    assert thread.status_code == 404 and threads.json() == []


async def test_stream_when_server_hangs_up_mid_answer_then_model_error_naming_it(server, tmp_path):
    server.script(Completion(text=ANSWER, hang_up_after=3))
    async with openai_app(tmp_path, server.url) as (_, client):
        events = await stream_turn(client, "What is the answer?", "chat")
        threads = await client.get("/api/threads")

    assert names(events)[-1] == "error" and "done" not in names(events)
    assert events[-1][1]["code"] == "model_error" and server.url in events[-1][1]["message"]
    assert "broke off" in events[-1][1]["message"] and threads.json() == []


async def test_stream_when_server_is_slow_then_timeout_names_it_and_the_setting(server, tmp_path):
    server.script(Completion(text=ANSWER, delay=3))
    async with openai_app(tmp_path, server.url, llm_timeout_seconds=0.5) as (_, client):
        events = await stream_turn(client, "What is the answer?", "chat")

    assert names(events)[-1] == "error" and "token" not in names(events)
    error = events[-1][1]
    assert error["code"] == "model_unreachable"
    assert server.url in error["message"] and "RAG_LLM_TIMEOUT_SECONDS (0.5 s)" in error["message"]


async def test_stream_when_server_is_down_then_model_unreachable_naming_url_and_setting(tmp_path):
    url = unreachable_url() + "/v1"
    async with openai_app(tmp_path, url) as (_, client):
        events = await stream_turn(client, "What is the answer?", "chat")
        response = await client.post("/api/chat", json={"message": "What is the answer?", "mode": "chat"})
        threads = await client.get("/api/threads")

    assert names(events)[0] == "metadata" and names(events)[-1] == "error" and "token" not in names(events)
    assert events[-1][1]["code"] == "model_unreachable"
    assert url in events[-1][1]["message"] and "RAG_OPENAI_BASE_URL" in events[-1][1]["message"]
    assert response.status_code == 503 and url in response.json()["detail"]
    assert threads.json() == []


async def test_stream_when_the_embedding_server_goes_down_then_the_error_names_it(server, tmp_path):
    with serve_openai() as embedder:
        settings = {"openai_embed_model": "served-embedder", "openai_embed_base_url": embedder.url}
        async with openai_app(tmp_path, server.url, **settings) as (app, client):
            await app.state.services.knowledge.ingest_now("refunds.md", REFUNDS.encode())
            embedder.stop()
            events = await stream_turn(client, "How long is the refund window for annual plans?", "rag")

    assert names(events)[-1] == "error" and events[-1][1]["code"] == "model_unreachable"
    message = events[-1][1]["message"]
    assert embedder.url in message and "RAG_OPENAI_EMBED_BASE_URL" in message and server.url not in message


async def test_chat_json_when_server_errors_mid_answer_then_502_not_500(server, tmp_path):
    server.script(Completion(text=ANSWER, error="upstream exploded", error_after=1))
    async with openai_app(tmp_path, server.url) as (_, client):
        response = await client.post("/api/chat", json={"message": "What is the answer?", "mode": "chat"})

    assert response.status_code == 502 and "upstream exploded" in response.json()["detail"]


async def test_model_searches_with_a_tool_and_cites_what_it_found(server, tmp_path):
    server.script(
        Completion(text="", tool_calls=[{"name": "search_knowledge_base", "arguments": {"query": "refunds"}}]),
        Completion(text="Annual plans: within 30 days [S1]."),
    )
    async with openai_app(tmp_path, server.url) as (app, client):
        await app.state.services.knowledge.ingest_now("refunds.md", REFUNDS.encode())
        events = await stream_turn(client, "Hello, tell me about refunds", "chat")

    first, second = server.requests_to(CHAT)[:2]
    assert {t["function"]["name"] for t in first.body["tools"]} >= {"search_knowledge_base"}
    assert second.body["messages"][-1]["role"] == "tool" and "[S1] refunds.md" in second.body["messages"][-1]["content"]
    assert tokens(events) == "Annual plans: within 30 days [S1]."
    assert [(s["id"], s["document"]) for s in dict(events)["sources"]["sources"]] == [("S1", "refunds.md")]


async def two_turns(server: OpenAIDouble, tmp_path: Path) -> list[tuple[str, dict]]:
    """Two chat turns on a server that refuses a field: both answered; the first turn's events."""
    server.script(ANSWER, "Second answer.")
    async with openai_app(tmp_path, server.url) as (_, client):
        first = await stream_turn(client, "What is the answer?", "chat")
        second = await stream_turn(client, "And the next one?", "chat")
    assert (first[-1][1]["answer"], second[-1][1]["answer"]) == (ANSWER, "Second answer.")
    return first


async def test_when_the_server_refuses_tools_turns_are_answered_without_them(tmp_path):
    with serve_openai(refuse_tools=True) as server:
        await two_turns(server, tmp_path)

    sent_tools = [bool(r.body.get("tools")) for r in server.requests_to(CHAT)]
    assert sent_tools[:3] == [True, False, False]  # refused once, then remembered


async def test_when_tools_are_forced_on_a_server_that_refuses_them_the_error_says_why(tmp_path):
    with serve_openai(refuse_tools=True) as server:
        async with openai_app(tmp_path, server.url, tool_calling="on") as (_, client):
            events = await stream_turn(client, "What is the answer?", "chat")

    assert names(events)[-1] == "error" and events[-1][1]["code"] == "model_error"
    assert "--enable-auto-tool-choice" in events[-1][1]["message"] and server.url in events[-1][1]["message"]


async def test_usage_is_the_servers_own_token_count(server, tmp_path):
    server.script(ANSWER)
    async with openai_app(tmp_path, server.url) as (_, client):
        done = (await stream_turn(client, "What is the answer?", "chat"))[-1][1]

    [request] = server.requests_to(CHAT)
    assert request.body["stream_options"] == {"include_usage": True}
    prompt = sum(len(m["content"]) for m in request.body["messages"]) // 4  # as the double counts
    assert done["usage"] == {"prompt_tokens": prompt, "completion_tokens": len(word_pieces(ANSWER))}


async def test_a_server_that_refuses_stream_options_answers_without_it_and_usage_is_left_to_the_estimate(tmp_path):
    with serve_openai(refuse_stream_options=True) as server:
        first = await two_turns(server, tmp_path)

    assert first[-1][1]["usage"] is None  # no counts reported: /v1 estimates them
    asked = ["stream_options" in r.body for r in server.requests_to(CHAT)]
    assert asked == [True, False, False]  # refused once, then remembered


async def test_two_first_requests_refused_stream_options_at_once_are_both_answered_and_tools_stay_on(tmp_path):
    with serve_openai(refuse_stream_options=True, refuse_after=0.3) as server:
        server.script(ANSWER, "Second answer.", "Third answer.")
        async with openai_app(tmp_path, server.url) as (_, client):
            both = await asyncio.gather(
                stream_turn(client, "What is the answer?", "chat"), stream_turn(client, "And another?", "chat")
            )
            later = await stream_turn(client, "And the next one?", "chat")

    assert all(names(events)[-1] == "done" for events in [*both, later])
    assert server.requests_to(CHAT)[-1].body.get("tools")  # the refusal named stream_options, not the tools


async def test_a_server_refusing_tools_and_stream_options_is_answered_on_the_third_request(tmp_path):
    with serve_openai(refuse_tools=True, refuse_stream_options=True) as server:
        server.script(ANSWER)
        async with openai_app(tmp_path, server.url) as (_, client):
            events = await stream_turn(client, "What is the answer?", "chat")

    assert events[-1][1]["answer"] == ANSWER
    sent = [(bool(r.body.get("tools")), "stream_options" in r.body) for r in server.requests_to(CHAT)]
    assert sent == [(True, True), (False, True), (False, False)]


def test_an_app_started_after_another_in_the_process_answers_from_a_server_restarted_on_the_same_port(tmp_path):
    """Each app opens its own connections to the model server, and closes them when it stops. langchain-openai
    otherwise shares one connection pool per server URL in the process: an app started after another (on an event
    loop of its own) took over the first one's connection, which the server had closed meanwhile, and failed
    closing it (RuntimeError: Event loop is closed). CI met it on the embedded model, whose llama.cpp server came
    back on the port of the previous one."""

    async def turn(data: str) -> list[tuple[str, dict]]:
        async with openai_app(tmp_path / data, server.url) as (_, client):
            return await stream_turn(client, "What is the answer?", "chat")

    with serve_openai() as server:
        server.script(ANSWER, ANSWER)
        first = asyncio.run(turn("first"))
        server.stop()
        server.restart()  # the first app's connection is closed by the server
        second = asyncio.run(turn("second"))

    assert names(first)[-1] == "done" and tokens(first) == ANSWER
    assert names(second)[-1] == "done", second[-1]
    assert tokens(second) == ANSWER
