"""A fake OpenAI-compatible server (the wire format of vLLM and llama.cpp's server) for the cases a real server
cannot be made to show on demand: an error or a hang-up mid-answer, tools refused, scripted tool calls."""

import asyncio
import json
import threading
import time
from collections.abc import AsyncIterator, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import Route

from backend.tests.ollama_double import RecordedRequest, ServedDouble, embed_text, word_pieces

DEFAULT_REPLY = "Hello from the OpenAI double."


@dataclass
class Completion:
    """One scripted answer to POST /v1/chat/completions."""

    text: str = DEFAULT_REPLY
    tool_calls: list[dict[str, Any]] = field(default_factory=list)  # [{"name": ..., "arguments": {...}}]
    error: str | None = None  # sent as a `data: {"error": ...}` event after `error_after` pieces
    error_after: int = 0
    hang_up_after: int | None = None  # close the connection without ending the response after this many pieces
    delay: float = 0.0  # seconds before the first piece (a slow server)


class OpenAIDouble(ServedDouble):
    """Fake OpenAI-compatible server: scripted streamed completions, hashed embeddings; records every request.

    `refuse_tools` answers a request carrying tools with vLLM's 400 (a server started without tool support);
    `refuse_stream_options` answers one asking for token counts with the 400 of a server that does not know the field.
    Otherwise, asked with `stream_options.include_usage`, the last chunk carries counts: the prompt's characters
    divided by 4, and the pieces streamed.
    """

    def __init__(
        self, refuse_tools: bool = False, refuse_stream_options: bool = False, refuse_after: float = 0.0
    ) -> None:
        self.refuse_tools = refuse_tools
        self.refuse_stream_options = refuse_stream_options
        self.refuse_after = refuse_after  # seconds before a refusal: lets two first requests both be refused
        self.requests: list[RecordedRequest] = []
        self._replies: list[Completion] = []
        self._lock = threading.Lock()
        self.app = Starlette(
            routes=[
                Route("/v1/models", self._models, methods=["GET"]),
                Route("/v1/chat/completions", self._chat, methods=["POST"]),
                Route("/v1/embeddings", self._embeddings, methods=["POST"]),
            ]
        )

    @property
    def url(self) -> str:
        """The API's base URL, as RAG_OPENAI_BASE_URL takes it."""
        return f"{self.base_url}/v1"

    def script(self, *replies: Completion | str) -> None:
        """Queue the next completions, in order; plain strings are reply texts."""
        with self._lock:
            self._replies.extend(Completion(text=r) if isinstance(r, str) else r for r in replies)

    def requests_to(self, path: str) -> list[RecordedRequest]:
        """The recorded requests for one path, oldest first."""
        with self._lock:
            return [r for r in self.requests if r.path == path]

    async def _record(self, request: Request) -> Any:
        body = json.loads(await request.body() or b"null")
        with self._lock:
            self.requests.append(RecordedRequest(request.method, request.url.path, body, dict(request.headers)))
        return body

    async def _models(self, request: Request) -> Response:
        await self._record(request)
        return JSONResponse({"object": "list", "data": [{"id": "double-chat", "object": "model"}]})

    async def _embeddings(self, request: Request) -> Response:
        body = await self._record(request)
        texts = [body["input"]] if isinstance(body["input"], str) else body["input"]
        data = [{"object": "embedding", "index": i, "embedding": embed_text(t)} for i, t in enumerate(texts)]
        return JSONResponse({"object": "list", "model": body["model"], "data": data, "usage": {"prompt_tokens": 1}})

    async def _chat(self, request: Request) -> Response:
        body = await self._record(request)
        if (self.refuse_tools and body.get("tools")) or (self.refuse_stream_options and "stream_options" in body):
            await asyncio.sleep(self.refuse_after)
        if self.refuse_tools and body.get("tools"):
            message = '"auto" tool choice requires --enable-auto-tool-choice and --tool-call-parser to be set'
            return JSONResponse({"object": "error", "message": message, "type": "BadRequestError", "code": 400}, 400)
        if self.refuse_stream_options and "stream_options" in body:
            message = "Unrecognized request argument supplied: stream_options"
            return JSONResponse({"error": {"message": message, "type": "invalid_request_error", "code": 400}}, 400)
        with self._lock:
            reply = self._replies.pop(0) if self._replies else Completion()
        usage = (body.get("stream_options") or {}).get("include_usage", False)
        prompt = sum(len(str(m.get("content") or "")) for m in body["messages"]) // 4
        return StreamingResponse(
            self._events(body["model"], reply, prompt if usage else None), media_type="text/event-stream"
        )

    async def _events(self, model: str, reply: Completion, prompt_tokens: int | None = None) -> AsyncIterator[bytes]:
        def event(delta: dict[str, Any], finish: str | None = None) -> bytes:
            chunk = {"id": "chatcmpl-double", "object": "chat.completion.chunk", "created": int(time.time())}
            chunk |= {"model": model, "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}
            return f"data: {json.dumps(chunk)}\n\n".encode()

        await asyncio.sleep(reply.delay)
        yield event({"role": "assistant", "content": ""})
        for i, piece in enumerate(word_pieces(reply.text)):
            if reply.error is not None and i == reply.error_after:
                yield f"data: {json.dumps({'error': {'code': 500, 'message': reply.error}})}\n\n".encode()
                return
            if reply.hang_up_after == i:
                raise ConnectionAbortedError("the double hangs up mid-answer")  # uvicorn drops the connection
            yield event({"content": piece})
            await asyncio.sleep(0)
        for n, call in enumerate(reply.tool_calls):
            function = {"name": call["name"], "arguments": json.dumps(call.get("arguments", {}))}
            yield event({"tool_calls": [{"index": n, "id": f"call_{n}", "type": "function", "function": function}]})
        yield event({}, "tool_calls" if reply.tool_calls else "stop")
        if prompt_tokens is not None:  # as llama.cpp and vLLM send it: a last chunk without choices
            pieces = len(word_pieces(reply.text))
            usage = {
                "prompt_tokens": prompt_tokens,
                "completion_tokens": pieces,
                "total_tokens": prompt_tokens + pieces,
            }
            chunk = {"id": "chatcmpl-double", "object": "chat.completion.chunk", "created": int(time.time())}
            yield f"data: {json.dumps(chunk | {'model': model, 'choices': [], 'usage': usage})}\n\n".encode()
        yield b"data: [DONE]\n\n"


@contextmanager
def serve_openai(
    refuse_tools: bool = False, refuse_stream_options: bool = False, refuse_after: float = 0.0
) -> Iterator[OpenAIDouble]:
    """An OpenAI-compatible double running for the duration of the block."""
    with OpenAIDouble(refuse_tools, refuse_stream_options, refuse_after) as double:
        yield double
