"""The whole app on the ollama backend: chat turns over HTTP against the Ollama wire-format double."""

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import httpx
import pytest
from asgi_lifespan import LifespanManager
from fastapi import FastAPI
from httpx_sse import connect_sse

from backend.graph.prompts import ANSWERED
from backend.main import create_app
from backend.settings import Settings
from backend.tests.ollama_double import Reply, unreachable_url, word_pieces
from bench.lib.server import serve_in_thread
from bench.lib.sse import parse_sse

pytestmark = pytest.mark.usefixtures("no_model_env")  # every test here ignores the caller's RAG_* shell

ANSWER = "The answer is forty-two, as the guide says."
CHECKS_IN = ("guardrail_input", "triage_relevance", "triage_faq", "triage_intent")
CHECKS_OUT = ("validate_answerable", "validate_sources", "validate_tone", "guardrail_output", "memory")
RUNNER_DIED = "llama runner process has terminated: signal: killed"
REFUNDS = "# Refunds\n\nAnnual plans can be refunded within 30 days of purchase. Monthly plans are not refundable."


@asynccontextmanager
async def ollama_app(tmp_path: Path, base_url: str, **overrides) -> AsyncIterator[tuple[FastAPI, httpx.AsyncClient]]:
    """The app on the ollama backend at base_url, started, with a client talking to it in-process."""
    settings = Settings(llm_backend="ollama", ollama_base_url=base_url, data_dir=tmp_path / "data", **overrides)
    app = create_app(settings)
    async with (
        LifespanManager(app) as manager,
        httpx.AsyncClient(transport=httpx.ASGITransport(app=manager.app), base_url="http://test", timeout=30) as client,
    ):
        yield app, client


async def stream_turn(client: httpx.AsyncClient, message: str, mode: str) -> list[tuple[str, dict]]:
    """POST /api/chat/stream and the parsed SSE events."""
    response = await client.post("/api/chat/stream", json={"message": message, "mode": mode})
    assert response.status_code == 200
    assert response.headers["content-type"].startswith("text/event-stream")
    return parse_sse(response)


def names(events: list[tuple[str, dict]]) -> list[str]:
    return [name for name, _ in events]


async def test_stream_chat_turn_relays_ollama_pieces_as_tokens_between_metadata_and_done(ollama, tmp_path):
    ollama.script(ANSWER)
    async with ollama_app(tmp_path, ollama.base_url) as (_, client):
        events = await stream_turn(client, "What is the answer?", "chat")
        thread_id = events[0][1]["thread_id"]
        thread = await client.get(f"/api/threads/{thread_id}")

    assert names(events)[0] == "metadata" and names(events)[-1] == "done"
    statuses = [(d["node"], d["phase"]) for n, d in events if n == "status"]
    chat_path = CHECKS_IN + ("router", "generator") + CHECKS_OUT
    assert statuses == [(node, phase) for node in chat_path for phase in ("start", "end")]
    tokens = [d["text"] for n, d in events if n == "token"]
    assert len(tokens) > 1 and all(tokens)  # streamed word by word (the PII gate releases whole words)
    assert "".join(tokens) == ANSWER
    order = [(n, d.get("node"), d.get("phase")) for n, d in events]
    first, last = order.index(("token", None, None)), len(order) - 1 - order[::-1].index(("token", None, None))
    assert order[first - 1] == ("status", "generator", "start") and order[last + 1] == ("status", "generator", "end")
    done = events[-1][1]
    assert done["answer"] == ANSWER and done["intent"] == "chat" and done["thread_id"] == thread_id
    request = ollama.requests_to("/api/chat")[0]  # a later one is the background summary update
    assert request.body["stream"] is True and request.body["messages"][-1]["content"] == "What is the answer?"
    assert thread.status_code == 200
    assert [m["content"] for m in thread.json()["messages"]] == ["What is the answer?", ANSWER]


async def test_stream_rag_turn_embeds_through_ollama_and_cites_the_document(ollama, tmp_path):
    ollama.script("Within 30 days [S1].")
    async with ollama_app(tmp_path, ollama.base_url) as (app, client):
        await app.state.services.knowledge.ingest_now("refunds.md", REFUNDS.encode())
        events = await stream_turn(client, "How long is the refund window for annual plans?", "rag")

    assert names(events)[0] == "metadata" and names(events)[-2:] == ["sources", "done"]
    sources = events[-2][1]["sources"]
    assert [(s["id"], s["document"]) for s in sources] == [("S1", "refunds.md")]
    assert "".join(d["text"] for n, d in events if n == "token") == "Within 30 days [S1]."
    assert events[-1][1]["intent"] == "rag"
    embedded = [r.body["input"] for r in ollama.requests_to("/api/embed")]
    assert any("Annual plans can be refunded within 30 days" in text[0] for text in embedded)
    assert ["How long is the refund window for annual plans?"] in embedded
    [chat] = ollama.requests_to("/api/chat")  # no threshold is calibrated for an Ollama model: no verdict asked
    assert "Annual plans can be refunded within 30 days" in chat.body["messages"][-1]["content"]
    skipped = next(d for n, d in events if n == "status" and d["node"] == "validate_answerable" and d["phase"] == "end")
    assert "RAG_ANSWERABLE_MIN_YES" in skipped["detail"] and "answerable" not in events[-1][1]["validation"]


async def test_answerable_check_on_ollama_asks_one_token_with_logprobs_after_the_question(ollama, tmp_path):
    question = "How long is the refund window for annual plans?"
    ollama.script("Within 30 days [S1].", Reply(text="No", top_logprobs=[("No", -0.2), ("Yes", -1.8), ("yes", -4.0)]))
    async with ollama_app(tmp_path, ollama.base_url, answerable_min_yes=0.5) as (app, client):
        await app.state.services.knowledge.ingest_now("refunds.md", REFUNDS.encode())
        events = await stream_turn(client, question, "rag")

    chat, verdict = ollama.requests_to("/api/chat")
    assert verdict.body["messages"] == [
        *chat.body["messages"],
        {"role": "user", "content": ANSWERED.format(question=question)},
    ]
    assert verdict.body["logprobs"] is True and verdict.body["options"]["num_predict"] == 1
    done = events[-1][1]
    assert done["validation"]["answerable"]["p_yes"] == pytest.approx(0.18, abs=0.01)
    assert done["validation"]["answerable"]["answered"] is False
    assert done["answer"].startswith("I could not find this in the documents.")


async def test_stream_when_ollama_errors_mid_stream_then_model_error_and_thread_not_recorded(ollama, tmp_path):
    ollama.script(Reply(text=ANSWER, error=RUNNER_DIED, error_after=3))
    async with ollama_app(tmp_path, ollama.base_url) as (_, client):
        events = await stream_turn(client, "What is the answer?", "chat")
        thread_id = events[0][1]["thread_id"]
        thread = await client.get(f"/api/threads/{thread_id}")
        threads = await client.get("/api/threads")

    assert names(events)[0] == "metadata" and names(events)[-1] == "error"
    assert "done" not in names(events)
    streamed = "".join(d["text"] for n, d in events if n == "token")
    assert streamed and ANSWER.startswith(streamed) and len(streamed) <= len("The answer is")
    error = events[-1][1]
    assert error["code"] == "model_error"
    assert RUNNER_DIED in error["message"]
    assert thread.status_code == 404
    assert threads.status_code == 200 and threads.json() == []


async def test_stream_when_chat_model_not_pulled_then_model_error_names_the_model(ollama, tmp_path):
    async with ollama_app(tmp_path, ollama.base_url, ollama_chat_model="llama9:70b") as (_, client):
        events = await stream_turn(client, "What is the answer?", "chat")

    assert names(events)[-1] == "error" and "done" not in names(events)
    assert events[-1][1]["code"] == "model_error"
    assert 'model "llama9:70b" not found' in events[-1][1]["message"]


async def test_stream_when_ollama_unreachable_then_model_unreachable_naming_the_url(tmp_path):
    url = unreachable_url()
    async with ollama_app(tmp_path, url) as (_, client):
        events = await stream_turn(client, "What is the answer?", "chat")

    assert names(events)[0] == "metadata" and names(events)[-1] == "error"
    assert "done" not in names(events) and "token" not in names(events)
    error = events[-1][1]
    assert error["code"] == "model_unreachable"
    assert url in error["message"]


async def test_chat_json_when_ollama_unreachable_then_503_naming_the_url(tmp_path):
    url = unreachable_url()
    async with ollama_app(tmp_path, url) as (_, client):
        response = await client.post("/api/chat", json={"message": "What is the answer?", "mode": "chat"})
        threads = await client.get("/api/threads")

    assert response.status_code == 503
    assert url in response.json()["detail"] and "RAG_OLLAMA_BASE_URL" in response.json()["detail"]
    assert threads.json() == []


async def test_chat_json_when_ollama_errors_mid_stream_then_502_with_ollama_text(ollama, tmp_path):
    ollama.script(Reply(text=ANSWER, error=RUNNER_DIED, error_after=1))
    async with ollama_app(tmp_path, ollama.base_url) as (_, client):
        response = await client.post("/api/chat", json={"message": "What is the answer?", "mode": "chat"})

    assert response.status_code == 502
    assert RUNNER_DIED in response.json()["detail"]


async def test_chat_json_returns_the_whole_ollama_answer(ollama, tmp_path):
    ollama.script(ANSWER)
    async with ollama_app(tmp_path, ollama.base_url) as (_, client):
        response = await client.post("/api/chat", json={"message": "What is the answer?", "mode": "chat"})

    assert response.status_code == 200
    assert response.json()["answer"] == ANSWER and response.json()["sources"] == []
    # Ollama's own counts, summed over the turn's requests (the double counts a prompt's words: the system prompt's
    # too), neither an estimate of the question nor counted twice
    prompts = [
        sum(len(str(m.get("content", "")).split()) for m in r.body["messages"]) for r in ollama.requests_to("/api/chat")
    ]
    assert response.json()["usage"] == {"prompt_tokens": sum(prompts), "completion_tokens": len(word_pieces(ANSWER))}


def test_stop_closes_the_ollama_stream_mid_answer_and_keeps_the_partial_answer_marked_stopped(ollama, tmp_path):
    story = "The keeper walked along the shore with his dog. " * 25  # 225 pieces
    ollama.script(Reply(text=story, delay=0.05))  # 20 pieces a second: 10 s if nothing stops it
    settings = Settings(llm_backend="ollama", ollama_base_url=ollama.base_url, data_dir=tmp_path / "data")
    with serve_in_thread(create_app(settings)) as url, httpx.Client(base_url=url, timeout=30) as client:
        with connect_sse(client, "POST", "/api/chat/stream", json={"message": "Tell me a story", "mode": "chat"}) as s:
            events = []
            for sse in (e for e in s.iter_sse() if e.data):
                events.append((sse.event, sse.json()))
                if sse.event == "token" and sum(name == "token" for name, _ in events) == 3:
                    stopped = client.post(f"/api/runs/{events[0][1]['run_id']}/cancel")
        assert stopped.status_code == 200 and stopped.json()["status"] == "stopped"
        last = client.get(f"/api/threads/{events[0][1]['thread_id']}").json()["messages"][-1]
    [end] = ollama.stream_ends
    assert end.client_left and 3 <= end.pieces_sent < 100, end  # Ollama was told to stop, long before the end
    assert events[-1][0] == "stopped" and last["status"] == "stopped" and last["content"] == events[-1][1]["answer"]
