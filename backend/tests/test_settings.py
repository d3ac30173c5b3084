"""Settings that derive from others: model server URLs, tool calling and concurrency per backend."""

import pytest

from backend.settings import Settings, openai_url, public_url


@pytest.mark.parametrize(
    ("given", "base"),
    [
        ("http://gpu-box:8000", "http://gpu-box:8000/v1"),
        ("http://gpu-box:8000/", "http://gpu-box:8000/v1"),
        ("http://127.0.0.1:1234/v1/", "http://127.0.0.1:1234/v1"),
        ("https://models.example.com/api/v1", "https://models.example.com/api/v1"),
    ],
)
def test_openai_url_adds_v1_only_to_a_bare_host(given, base):
    assert openai_url(given) == base


def test_public_url_drops_credentials_only():
    assert public_url("https://team:s3cret@models.example.com/v1") == "https://models.example.com/v1"
    assert public_url("http://127.0.0.1:8080/v1?x=a@b") == "http://127.0.0.1:8080/v1?x=a@b"


def test_openai_backend_defaults_tools_on_and_leaves_queueing_to_the_server():
    settings = Settings(llm_backend="openai", openai_chat_model="m", _env_file=None)
    assert settings.uses_tools and settings.concurrency == 0
    assert not Settings(llm_backend="openai", openai_chat_model="m", tool_calling="off", _env_file=None).uses_tools
    assert Settings(llm_backend="openai", openai_chat_model="m", model_concurrency=4, _env_file=None).concurrency == 4


def test_embed_server_is_named_only_when_embeddings_come_from_another_server():
    base = {"llm_backend": "openai", "openai_chat_model": "m", "openai_base_url": "http://chat:8000", "_env_file": None}
    assert Settings(**base).embed_server is None  # no embedding model: the offline MiniLM
    assert Settings(**base, openai_embed_model="e").embed_server is None  # the chat server embeds
    split = Settings(**base, openai_embed_model="e", openai_embed_base_url="http://u:p@embed:9000")
    assert (split.model_server, split.embed_server) == ("http://chat:8000/v1", "http://embed:9000/v1")
    assert Settings(llm_backend="embedded", _env_file=None).model_server is None
