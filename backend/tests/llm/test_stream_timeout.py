"""The wait for a streamed answer's first chunk follows RAG_LLM_TIMEOUT_SECONDS, not langchain-openai's 120 s: a long
prompt's prefill on a slow CPU takes longer than that (bench.answers' first 1.5B turn failed with
StreamChunkTimeoutError on a loaded 2-core machine)."""

from openai import DefaultAsyncHttpxClient

from backend.llm.embedded import embedded_chat_model
from backend.llm.openai_compat import openai_chat_model
from backend.settings import Settings


def test_openai_compatible_models_wait_for_a_chunk_as_long_as_the_llm_timeout(tmp_path):
    settings = Settings(
        llm_backend="openai",
        openai_base_url="http://127.0.0.1:9/v1",
        openai_chat_model="m",
        llm_timeout_seconds=900,
        data_dir=tmp_path,
    )
    http = DefaultAsyncHttpxClient()
    for model in (embedded_chat_model("http://127.0.0.1:9", "qwen", settings, http), openai_chat_model(settings, http)):
        assert model.stream_chunk_timeout == 900
        assert model.request_timeout == 900
