"""The Ollama backend at the model layer, against the wire-format double in backend/tests/ollama_double.py."""

from pathlib import Path

import pytest
from langchain_core.tools import tool
from ollama import ResponseError

from backend.llm.factory import open_models
from backend.llm.ollama import ollama_chat_model
from backend.settings import Settings
from backend.tests.ollama_double import EMBED_MODEL, Reply, cosine, serve_ollama, word_pieces

pytestmark = pytest.mark.usefixtures("no_model_env")  # every test here ignores the caller's RAG_* shell

ANSWER = "Paris is the capital of France."


def ollama_settings(tmp_path: Path, base_url: str, **overrides) -> Settings:
    """Settings for the ollama backend on a temp data dir."""
    return Settings(llm_backend="ollama", ollama_base_url=base_url, data_dir=tmp_path / "data", **overrides)


@tool
def lookup_policy(name: str, year: int) -> str:
    """Look up a company policy by name and year."""
    return f"{name} {year}"


async def test_chat_model_streams_reply_pieces_in_order_then_an_empty_done_chunk(ollama, tmp_path):
    ollama.script(ANSWER)
    model = ollama_chat_model(ollama_settings(tmp_path, ollama.base_url))

    chunks = [chunk async for chunk in model.astream("What is the capital of France?")]

    texts = [c.text for c in chunks]
    pieces = word_pieces(ANSWER)
    assert len(pieces) == 6
    assert texts[: len(pieces)] == pieces
    tail = chunks[len(pieces) :]
    assert tail and all(c.text == "" for c in tail)
    done = [c for c in tail if c.response_metadata.get("done")]
    assert len(done) == 1
    assert done[0].response_metadata["done_reason"] == "stop"
    assert done[0].usage_metadata["output_tokens"] == len(pieces)


async def test_chat_model_sends_model_name_and_sampling_options_from_settings(ollama, tmp_path):
    settings = ollama_settings(tmp_path, ollama.base_url, temperature=0.7, max_answer_tokens=64)
    model = ollama_chat_model(settings)

    await model.ainvoke("Say hello.")

    [request] = ollama.requests_to("/api/chat")
    assert request.body["model"] == settings.ollama_chat_model
    assert request.body["stream"] is True
    assert request.body["options"] == {"temperature": 0.7, "num_predict": 64}
    assert request.body["messages"] == [{"role": "user", "content": "Say hello."}]


async def test_chat_model_with_tools_returns_tool_calls_with_dict_args(ollama, tmp_path):
    call = {"name": "lookup_policy", "arguments": {"name": "refunds", "year": 2024}}
    ollama.script(Reply(text="", tool_calls=[call]))
    model = ollama_chat_model(ollama_settings(tmp_path, ollama.base_url)).bind_tools([lookup_policy])

    message = await model.ainvoke("What was the 2024 refunds policy?")

    [tool_call] = message.tool_calls
    assert tool_call["name"] == "lookup_policy"
    assert tool_call["args"] == {"name": "refunds", "year": 2024}
    assert tool_call["id"]
    [request] = ollama.requests_to("/api/chat")
    sent = request.body["tools"][0]["function"]
    assert sent["name"] == "lookup_policy"
    assert set(sent["parameters"]["properties"]) == {"name", "year"}


async def test_chat_model_when_runner_dies_mid_stream_then_response_error_after_partial_pieces(ollama, tmp_path):
    ollama.script(Reply(text=ANSWER, error="llama runner process has terminated: signal: killed", error_after=2))
    model = ollama_chat_model(ollama_settings(tmp_path, ollama.base_url))

    received: list[str] = []
    with pytest.raises(ResponseError, match="llama runner process has terminated"):
        async for chunk in model.astream("What is the capital of France?"):
            received.append(chunk.text)

    assert received == word_pieces(ANSWER)[:2]


async def test_chat_model_when_model_not_pulled_then_404_response_error(ollama, tmp_path):
    model = ollama_chat_model(ollama_settings(tmp_path, ollama.base_url, ollama_chat_model="llama9:70b"))

    with pytest.raises(ResponseError) as raised:
        await model.ainvoke("hi")

    assert raised.value.status_code == 404
    assert raised.value.error == 'model "llama9:70b" not found, try pulling it first'


async def test_open_models_sends_embeddings_to_embed_host_and_chat_to_chat_host(tmp_path):
    with serve_ollama() as chat_host, serve_ollama() as embed_host:
        settings = ollama_settings(tmp_path, chat_host.base_url, ollama_embed_base_url=embed_host.base_url)
        async with open_models(settings) as models:
            vectors = models.embedding_function(["annual plan refunds", "refund policy for annual plans"])
            await models.chat_model.ainvoke("hi")

    assert chat_host.paths == ["/api/chat"]
    assert embed_host.paths == ["/api/embed"]
    assert embed_host.requests[0].body["model"] == EMBED_MODEL
    assert embed_host.requests[0].body["input"] == ["annual plan refunds", "refund policy for annual plans"]
    assert [len(v) for v in vectors] == [384, 384]
    assert models.backend == "ollama" and models.embedding_model == EMBED_MODEL


async def test_embeddings_of_related_texts_are_closer_than_unrelated(ollama, tmp_path):
    async with open_models(ollama_settings(tmp_path, ollama.base_url)) as models:
        query, related, unrelated = models.embedding_function(
            ["How long is the refund window?", "Refunds are possible within a 30 day window.", "The cat sat down."]
        )

    assert cosine(query, related) > 0.3 > cosine(query, unrelated)


async def test_embed_host_defaults_to_chat_host(ollama, tmp_path):
    async with open_models(ollama_settings(tmp_path, ollama.base_url)) as models:
        models.embedding_function(["one text"])
        await models.chat_model.ainvoke("hi")

    assert sorted(ollama.paths) == ["/api/chat", "/api/embed"]


def test_ollama_base_url_given_by_field_name_is_used_and_gets_a_scheme(tmp_path):
    settings = Settings(ollama_base_url="10.0.0.5:11500", data_dir=tmp_path)

    assert settings.ollama_base_url == "http://10.0.0.5:11500"


@pytest.mark.parametrize("with_scheme", [False, True], ids=["host:port", "http://host:port"])
async def test_ollama_host_env_is_chat_host_when_rag_url_unset(ollama, monkeypatch, with_scheme):
    address = ollama.base_url.removeprefix("http://")
    monkeypatch.setenv("OLLAMA_HOST", ollama.base_url if with_scheme else address)
    monkeypatch.setenv("RAG_LLM_BACKEND", "ollama")

    settings = Settings()
    await ollama_chat_model(settings).ainvoke("hi")

    assert settings.ollama_base_url == ollama.base_url
    assert settings.ollama_embed_url == ollama.base_url
    assert ollama.paths == ["/api/chat"]


async def test_rag_ollama_base_url_wins_over_ollama_host(monkeypatch):
    with serve_ollama() as preferred, serve_ollama() as fallback:
        monkeypatch.setenv("OLLAMA_HOST", fallback.base_url.removeprefix("http://"))
        monkeypatch.setenv("RAG_OLLAMA_BASE_URL", preferred.base_url)

        await ollama_chat_model(Settings()).ainvoke("hi")

    assert preferred.paths == ["/api/chat"]
    assert fallback.paths == []


def test_ollama_host_without_port_means_ollama_default_port(monkeypatch):
    monkeypatch.setenv("OLLAMA_HOST", "gpu-box")

    assert Settings().ollama_base_url == "http://gpu-box:11434"
