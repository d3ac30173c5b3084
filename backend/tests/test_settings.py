"""Settings that derive from others: model server URLs, tool calling and concurrency per backend."""

import pytest
from pydantic import ValidationError

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


def test_several_chat_urls_make_a_pool_each_normalised_and_embeddings_go_to_the_first():
    settings = Settings(
        llm_backend="ollama", ollama_base_url=" gpu-a, gpu-b:11500 ,http://u:p@gpu-c:80/", _env_file=None
    )
    assert settings.chat_urls == ["http://gpu-a:11434", "http://gpu-b:11500", "http://u:p@gpu-c:80"]
    assert settings.model_servers == ["http://gpu-a:11434", "http://gpu-b:11500", "http://gpu-c:80"]
    assert settings.model_server == "http://gpu-a:11434, http://gpu-b:11500, http://gpu-c:80"
    assert settings.ollama_embed_url == "http://gpu-a:11434" and settings.embed_server is None
    assert settings.concurrency == 3  # one turn per Ollama server
    openai = Settings(llm_backend="openai", openai_chat_model="m", openai_base_url="http://a:8000,http://b:9/v1/")
    assert openai.chat_urls == ["http://a:8000/v1", "http://b:9/v1"] and openai.openai_embed_url == "http://a:8000/v1"


def test_one_chat_url_stays_exactly_as_before():
    settings = Settings(llm_backend="ollama", ollama_base_url="10.0.0.5", _env_file=None)
    assert settings.ollama_base_url == "http://10.0.0.5:11434" and settings.chat_urls == [settings.ollama_base_url]
    assert settings.model_server == "http://10.0.0.5:11434" and settings.concurrency == 1


@pytest.mark.parametrize(
    ("field", "urls", "problem"),
    [
        ("ollama_base_url", "http://a:11434,ftp://b", "'ftp://b' is not a server address"),
        ("ollama_base_url", "http://a:11434,,http://b:11434", "empty address at position 2"),
        ("openai_base_url", "http://a:8000,http://b:port", "'http://b:port' is not a server address"),
        ("openai_base_url", "http://a:8000,http://b:99999", "'http://b:99999' is not a server address"),
        ("openai_base_url", "http://team:s3cret@b c:80", "'http://b c:80' is not a server address"),
        ("openai_base_url", " , ", "no server address given"),
    ],
)
def test_a_bad_url_in_a_pool_is_a_settings_error_naming_it(field, urls, problem):
    with pytest.raises(ValidationError) as raised:
        Settings(llm_backend="openai", openai_chat_model="m", _env_file=None, **{field: urls})
    assert problem in str(raised.value) and field in str(raised.value)
