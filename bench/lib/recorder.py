"""The real app plus a recorder of every chat-model call, served as `--factory bench.lib.recorder:create_recording_app`.

The product code is untouched: the lifespan is wrapped to attach a LangChain callback handler to the chat model
that records each call (node, thread, messages, the exact request payload, and time.monotonic() stamps, comparable
across processes on Linux). GET /_bench/calls returns the records.
"""

import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any
from uuid import UUID

import httpx
from fastapi import FastAPI
from langchain_core.callbacks import BaseCallbackHandler
from langchain_core.messages import BaseMessage

from backend.main import create_app

FACTORY = "bench.lib.recorder:create_recording_app"


class CallRecorder(BaseCallbackHandler):
    """Records each chat-model call: start, first and second non-empty token, end, node, thread and messages."""

    run_inline = True  # called on the event loop, no executor hop

    def __init__(self) -> None:
        self.calls: dict[UUID, dict[str, Any]] = {}

    def on_chat_model_start(
        self,
        serialized: dict[str, Any],
        messages: list[list[BaseMessage]],
        *,
        run_id: UUID,
        metadata: dict[str, Any] | None = None,
        **kwargs: Any,
    ) -> None:
        """Stamp the start and keep the messages exactly as the node built them."""
        meta = metadata or {}
        self.calls[run_id] = {
            "t_start": time.monotonic(),
            "t_first_token": None,
            "t_second_token": None,
            "t_end": None,
            "node": meta.get("langgraph_node"),
            "thread_id": meta.get("thread_id"),
            "messages": list(messages[0]),
            "error": None,
        }

    def on_llm_new_token(self, token: str, *, run_id: UUID, **kwargs: Any) -> None:
        """Stamp the first and the second non-empty token (the gap is one generation step)."""
        call = self.calls.get(run_id)
        if call is None or not token or call["t_second_token"] is not None:
            return
        call["t_first_token" if call["t_first_token"] is None else "t_second_token"] = time.monotonic()

    def on_llm_end(self, response: Any, *, run_id: UUID, **kwargs: Any) -> None:
        """Stamp the end."""
        if (call := self.calls.get(run_id)) is not None:
            call["t_end"] = time.monotonic()

    def on_llm_error(self, error: BaseException, *, run_id: UUID, **kwargs: Any) -> None:
        """Stamp the end and keep the error's name."""
        if (call := self.calls.get(run_id)) is not None:
            call["t_end"], call["error"] = time.monotonic(), type(error).__name__


def request_payload(model: Any, messages: list[BaseMessage]) -> dict | None:
    """The exact JSON body an OpenAI-compatible model sends for these messages (None for other models)."""
    if not hasattr(model, "_get_request_payload"):
        return None
    kwargs: dict[str, Any] = {"stream": True}
    if model._should_stream_usage():
        kwargs["stream_options"] = {"include_usage": True}
    return model._get_request_payload(messages, **kwargs)


def create_recording_app() -> FastAPI:
    """The product app with the recorder attached in its lifespan and the /_bench/calls route."""
    app = create_app()
    inner = app.router.lifespan_context
    recorder = CallRecorder()

    @asynccontextmanager
    async def lifespan(a: FastAPI) -> AsyncIterator[Any]:
        async with inner(a) as state:
            a.state.services.models.chat_model.callbacks = [recorder]
            yield state

    app.router.lifespan_context = lifespan

    @app.get("/_bench/calls", include_in_schema=False)
    async def calls() -> list[dict]:
        model = app.state.services.models.chat_model
        return [
            {
                **{k: v for k, v in c.items() if k != "messages"},
                "messages": [{"type": m.type, "content": m.text} for m in c["messages"]],
                "payload": request_payload(model, c["messages"]),
            }
            for c in sorted(recorder.calls.values(), key=lambda c: c["t_start"])
        ]

    return app


def recorded_calls(base_url: str) -> list[dict]:
    """The model calls a running recording app has made, oldest first."""
    return httpx.get(f"{base_url}/_bench/calls", timeout=60).json()
