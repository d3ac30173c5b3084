"""The openai backend: chat (and optionally embeddings) from any OpenAI-compatible server, such as vLLM,
llama.cpp's server, LM Studio or LocalAI."""

import logging
from collections.abc import AsyncIterator
from contextlib import aclosing
from typing import Any

import httpx2
import openai
from langchain_core.callbacks import AsyncCallbackManagerForLLMRun
from langchain_core.messages import BaseMessage
from langchain_core.outputs import ChatGenerationChunk
from langchain_openai import ChatOpenAI, OpenAIEmbeddings
from pydantic import PrivateAttr

from backend.settings import Settings, public_url

log = logging.getLogger(__name__)
NO_KEY = "unset"  # sent when no key is configured: the SDK needs one, and OPENAI_API_KEY must never leak to a server
TOOL_FIELDS = ("tools", "tool_choice", "parallel_tool_calls")
# How servers refuse a field they do not support: tools (vLLM needs --enable-auto-tool-choice), stream_options
FIELD_REFUSED = (400, 422, 501)


def api_key(settings: Settings) -> str:
    """The configured key, or a placeholder that servers without keys ignore."""
    return settings.openai_api_key.get_secret_value() if settings.openai_api_key else NO_KEY


class CompatChatOpenAI(ChatOpenAI):
    """ChatOpenAI for servers that may not support every field: when `tool_fallback` is set and the server refuses
    a request with tools before answering, the request is sent again without them, and so are later ones; a server
    that refuses `stream_options` (the token counts of the last chunk) is asked without it from then on."""

    tool_fallback: bool = False
    _tools_refused: bool = PrivateAttr(default=False)
    _usage_refused: bool = PrivateAttr(default=False)

    async def _astream(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: AsyncCallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> AsyncIterator[ChatGenerationChunk]:
        """Stream the reply, dropping the tools or the usage request when the server refuses them."""
        for _ in range(3):  # at most one refusal of each
            sent = self._supported(kwargs)
            async with aclosing(super()._astream(messages, stop, run_manager, **sent)) as stream:
                try:
                    first = await anext(stream)
                except StopAsyncIteration:
                    return
                except openai.APIStatusError as exc:
                    if not self._refused(exc, sent):
                        raise
                    continue
                yield first
                async for chunk in stream:
                    yield chunk
                return
        raise RuntimeError("the server refused the same request field twice")  # each refusal is remembered

    def _supported(self, kwargs: dict[str, Any]) -> dict[str, Any]:
        """The request's fields without those the server refused."""
        if kwargs.get("tools") and self._tools_refused:
            kwargs = {k: v for k, v in kwargs.items() if k not in TOOL_FIELDS}
        return {**kwargs, "stream_usage": False} if self._usage_refused else kwargs

    def _refused(self, exc: openai.APIStatusError, sent: dict[str, Any]) -> bool:
        """Whether the error refuses a field that can be left out (and remember it); False for any other error."""
        if exc.status_code not in FIELD_REFUSED:
            return False
        if "stream_options" in str(exc.message):  # this request's own field (another may have been refused first)
            if not self.stream_usage or sent.get("stream_usage") is False:
                return False
            log.warning(
                "%s refused stream_options (%s); token counts are estimated from now on",
                public_url(self.openai_api_base or ""),
                exc.message,
            )
            self._usage_refused = True
            return True
        if self.tool_fallback and sent.get("tools"):
            self._refuse_tools(exc)
            return True
        return False

    def _refuse_tools(self, exc: openai.APIStatusError) -> None:
        log.warning(
            "%s refused a request with tools (%s: %s); answering without tools from now on "
            "(RAG_TOOL_CALLING=off skips the attempt)",
            public_url(self.openai_api_base or ""),
            exc.status_code,
            exc.message,
        )
        self._tools_refused = True


def openai_chat_model(
    settings: Settings, http: httpx2.AsyncClient, url: str | None = None, connect_seconds: float | None = None
) -> CompatChatOpenAI:
    """A streaming chat model on a server (the first configured one unless given), on the app's own connections
    (`http`, see open_models); no retries (an error reaches the client, or the pool's next server, at once);
    `connect_seconds` caps the wait for a connection."""
    timeout = settings.llm_timeout_seconds
    return CompatChatOpenAI(
        http_async_client=http,
        base_url=url or settings.openai_base_url.split(",")[0],
        api_key=api_key(settings),
        model=settings.openai_chat_model,
        temperature=settings.temperature,
        max_tokens=settings.max_answer_tokens,
        timeout=httpx2.Timeout(timeout, connect=connect_seconds) if connect_seconds else timeout,  # the SDK's httpx
        stream_chunk_timeout=settings.llm_timeout_seconds,  # langchain-openai's own default (120 s) is shorter than
        # a long prompt's prefill on a slow CPU: the first chunk may take minutes
        max_retries=0,
        streaming=True,
        stream_usage=True,  # the last chunk carries the server's token counts (/v1 `usage`); refused: estimated
        tool_fallback=settings.tool_calling == "auto",
    )


def openai_embeddings(settings: Settings) -> OpenAIEmbeddings:
    """Embeddings from the embedding server's /v1/embeddings: raw text in (no tiktoken), floats out (not base64)."""
    return OpenAIEmbeddings(
        base_url=settings.openai_embed_url,
        api_key=api_key(settings),
        model=settings.openai_embed_model,
        check_embedding_ctx_length=False,
        model_kwargs={"encoding_format": "float"},
        timeout=settings.llm_timeout_seconds,
        max_retries=0,
    )
