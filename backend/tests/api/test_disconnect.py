import asyncio
import sqlite3
import time

import httpx
import psycopg
from httpx_sse import connect_sse
from langchain_core.messages import HumanMessage

from backend.llm.fake import ScriptedChatModel
from backend.main import create_app
from bench.lib.server import serve_in_thread


class CancellationRecordingFake(ScriptedChatModel):
    """Scripted fake that remembers whether its stream was cancelled and how many tokens it produced."""

    cancelled: bool = False
    produced: int = 0

    async def _astream(self, messages, stop=None, run_manager=None, **kwargs):
        try:
            async for chunk in super()._astream(messages, stop, run_manager, **kwargs):
                self.produced += 1
                yield chunk
        except (asyncio.CancelledError, GeneratorExit):
            self.cancelled = True
            raise


def wait_until_runs_end(app, seconds: float = 5) -> None:
    runner = app.state.services.runner
    deadline = time.monotonic() + seconds
    while runner.live and time.monotonic() < deadline:
        time.sleep(0.02)
    assert not runner.live, "the cancelled run never ended"


def test_stream_when_client_that_asked_for_it_disconnects_then_model_cancelled_and_turn_not_persisted(settings):
    app = create_app(settings)
    with serve_in_thread(app) as url:
        slow = CancellationRecordingFake(tokens_per_second=10)
        app.state.services.deps.chat_model = slow
        reply_words = len(slow.invoke([HumanMessage("Write a poem about the sea")]).text.split())
        thread_id = "disconnect-test"
        with httpx.Client(base_url=url, timeout=30) as client:
            body = {"message": "Write a poem about the sea", "thread_id": thread_id, "on_disconnect": "cancel"}
            with connect_sse(client, "POST", "/api/chat/stream", json=body) as source:
                next(sse for sse in source.iter_sse() if sse.event == "token")  # leaving the block disconnects
            deadline = time.monotonic() + 3
            while not slow.cancelled and time.monotonic() < deadline:
                time.sleep(0.05)
            assert slow.cancelled, "the model stream kept running after the client left"
            assert slow.produced < reply_words
            wait_until_runs_end(app)  # the cancelled run discards its checkpoints after the model stream closed
            assert client.get(f"/api/threads/{thread_id}").status_code == 404
            assert client.get("/api/threads").json() == []
            # the thread still works afterwards, with no half-finished turn in its history
            done = client.post(
                "/api/chat", json={"message": "thanks", "thread_id": thread_id, "mode": "chat"}
            )  # small talk
            assert done.status_code == 200
            messages = client.get(f"/api/threads/{thread_id}").json()["messages"]
            assert [m["content"] for m in messages if m["role"] == "user"] == ["thanks"]


def test_openai_stream_when_client_disconnects_then_model_cancelled_and_nothing_recorded(settings):
    app = create_app(settings)
    with serve_in_thread(app) as url:
        slow = CancellationRecordingFake(tokens_per_second=10)
        app.state.services.deps.chat_model = slow
        reply_words = len(slow.invoke([HumanMessage("Write a poem about the sea")]).text.split())
        question = {"role": "user", "content": "Write a poem about the sea"}
        body = {"model": "ragline-chat", "messages": [question], "stream": True}
        headers = {"X-Ragline-Thread-Id": "openai-disconnect"}
        with httpx.Client(base_url=url, timeout=30) as client:
            with client.stream("POST", "/v1/chat/completions", json=body, headers=headers) as response:
                assert response.headers["x-ragline-thread-id"] == "openai-disconnect"
                lines = response.iter_lines()
                next(line for line in lines if '"content":"' in line and '"content":""' not in line)
            deadline = time.monotonic() + 3  # leaving the block disconnected
            while not slow.cancelled and time.monotonic() < deadline:
                time.sleep(0.05)
            assert slow.cancelled, "the model stream kept running after the client left"
            assert slow.produced < reply_words
            wait_until_runs_end(app)  # the cancelled run discards its checkpoints after the model stream closed
            assert client.get("/api/threads/openai-disconnect").status_code == 404
            assert client.get("/api/threads").json() == []
        assert count_rows(settings, "conversation_keys") == 0


def count_rows(settings, table: str) -> int:
    """Rows of a conversations table, read with a connection of its own (SQLite file or Postgres)."""
    if settings.database_url:
        with psycopg.connect(settings.database_url.get_secret_value()) as db:
            return db.execute(f"SELECT COUNT(*) FROM {table}").fetchone()[0]
    with sqlite3.connect(settings.checkpoint_path) as db:
        return db.execute(f"SELECT COUNT(*) FROM {table}").fetchone()[0]
