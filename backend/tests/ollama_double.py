"""A fake Ollama server speaking the real wire format, served by uvicorn on 127.0.0.1 in a background thread."""

import asyncio
import dataclasses
import hashlib
import json
import math
import re
import socket
import threading
import time
from collections.abc import AsyncIterator, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any, Self

import uvicorn
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, PlainTextResponse, Response, StreamingResponse
from starlette.routing import Route

CHAT_MODEL = "qwen2.5:1.5b-instruct"
EMBED_MODEL = "all-minilm"
EMBED_DIMS = 384
DEFAULT_REPLY = "Hello from the Ollama double."
STOPWORDS = {"a", "an", "and", "are", "as", "at", "be", "by", "for", "from", "how", "in", "is", "it", "of", "on"}
STOPWORDS |= {"or", "that", "the", "this", "to", "was", "what", "when", "which", "who", "with"}
_WORD_RE = re.compile(r"[a-z0-9]+")


@dataclass
class Reply:
    """One scripted answer to POST /api/chat."""

    text: str = DEFAULT_REPLY
    tool_calls: list[dict[str, Any]] = field(default_factory=list)  # [{"name": ..., "arguments": {...}}]
    error: str | None = None  # sent as an {"error": ...} line (or a 500 body when not streaming)
    error_after: int = 0  # content pieces streamed before the error line
    status: int = 200  # a non-200 status answers with {"error": ...} before any streaming
    delay: float = 0.0  # seconds between streamed lines
    top_logprobs: list[tuple[str, float]] = field(default_factory=list)  # the first token's alternatives, sent
    # (as Ollama 0.12.11+ does) when the request asks for logprobs


@dataclass
class RecordedRequest:
    """One request the double received."""

    method: str
    path: str
    body: Any
    headers: dict[str, str]


def word_pieces(text: str) -> list[str]:
    """Text cut into token-like pieces with leading spaces, the way Ollama streams them; they join back exactly."""
    return re.findall(r"\s*\S+|\s+$", text)


def _stem(word: str) -> str:
    return word[:-1] if len(word) > 3 and word.endswith("s") and not word.endswith("ss") else word


def embed_text(text: str) -> list[float]:
    """Deterministic 384-dim embedding: hashed, signed bag of content words, L2-normalised."""
    vec = [0.0] * EMBED_DIMS
    for word in _WORD_RE.findall(text.lower()):
        if word in STOPWORDS:
            continue
        digest = hashlib.blake2b(_stem(word).encode(), digest_size=8).digest()
        vec[int.from_bytes(digest[:4], "little") % EMBED_DIMS] += 1.0 if digest[4] & 1 else -1.0
    norm = math.sqrt(sum(x * x for x in vec))
    if norm == 0:
        vec[0] = 1.0
        return vec
    return [x / norm for x in vec]


def cosine(a: list[float], b: list[float]) -> float:
    """Cosine similarity of two vectors."""
    dot = sum(x * y for x, y in zip(a, b, strict=True))
    return dot / (math.sqrt(sum(x * x for x in a)) * math.sqrt(sum(y * y for y in b)))


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="microseconds").replace("+00:00", "Z")


def _tag(name: str) -> str:
    return name if ":" in name else f"{name}:latest"


def _error(status: int, message: str) -> JSONResponse:
    return JSONResponse({"error": message}, status_code=status)


def _tool_call(call: dict[str, Any]) -> dict[str, Any]:
    return {"function": {"name": call["name"], "arguments": call.get("arguments", {})}}


class ServedDouble:
    """A Starlette app (`self.app`) served by uvicorn on a free port of 127.0.0.1 in a background thread."""

    app: Starlette
    base_url = ""
    _server: uvicorn.Server | None = None
    _thread: threading.Thread | None = None

    # --- lifecycle ------------------------------------------------------------------------

    def start(self, port: int = 0) -> Self:
        """Serve on 127.0.0.1 (a free port unless given) until stop(); base_url is set when this returns."""
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind(("127.0.0.1", port))
        self.base_url = f"http://127.0.0.1:{sock.getsockname()[1]}"
        config = uvicorn.Config(
            self.app, lifespan="off", log_level="warning", access_log=False, timeout_graceful_shutdown=2
        )
        self._server = uvicorn.Server(config)
        self._thread = threading.Thread(target=self._server.run, kwargs={"sockets": [sock]}, daemon=True)
        self._thread.start()
        deadline = time.monotonic() + 10
        while not self._server.started:
            if time.monotonic() > deadline or not self._thread.is_alive():
                raise RuntimeError(f"{type(self).__name__} did not start")
            time.sleep(0.01)
        return self

    def stop(self) -> None:
        """Shut the server down and wait for its thread."""
        if self._server and self._thread:
            self._server.should_exit = True
            self._thread.join(timeout=10)

    def restart(self) -> Self:
        """Serve again on the port it served on before stop() (a server coming back)."""
        return self.start(int(self.base_url.rsplit(":", 1)[1]))

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


@dataclass
class StreamEnd:
    """How a streamed reply ended: when (time.monotonic()), after how many pieces, and whether the client went away
    before the end (the server then stops producing, as Ollama stops generating)."""

    at: float
    pieces_sent: int
    client_left: bool


class OllamaDouble(ServedDouble):
    """Fake Ollama: scripted /api/chat replies, hashed /api/embed vectors, /api/tags; records every request."""

    def __init__(self, models: tuple[str, ...] = (CHAT_MODEL, EMBED_MODEL)) -> None:
        self.models = [_tag(m) for m in models]
        self.requests: list[RecordedRequest] = []
        self.stream_ends: list[StreamEnd] = []  # how each streamed /api/chat reply ended, in order
        self.default_reply = Reply()
        self._replies: list[Reply] = []
        self._lock = threading.Lock()
        self.app = Starlette(
            routes=[
                Route("/", self._root, methods=["GET", "HEAD"]),
                Route("/api/version", self._version, methods=["GET"]),
                Route("/api/tags", self._tags, methods=["GET"]),
                Route("/api/chat", self._chat, methods=["POST"]),
                Route("/api/embed", self._embed, methods=["POST"]),
            ]
        )

    # --- scripting and inspection -------------------------------------------------------

    def script(self, *replies: Reply | str) -> None:
        """Queue the next /api/chat replies, in order; plain strings are reply texts."""
        with self._lock:
            self._replies.extend(Reply(text=r) if isinstance(r, str) else r for r in replies)

    def requests_to(self, path: str) -> list[RecordedRequest]:
        """The recorded requests for one path, oldest first."""
        with self._lock:
            return [r for r in self.requests if r.path == path]

    @property
    def paths(self) -> list[str]:
        """Paths of every recorded request, oldest first."""
        with self._lock:
            return [r.path for r in self.requests]

    # --- endpoints ------------------------------------------------------------------------

    async def _record(self, request: Request) -> Any:
        raw = await request.body()
        try:
            body = json.loads(raw) if raw else None
        except json.JSONDecodeError:
            body = raw.decode(errors="replace")
        with self._lock:
            self.requests.append(RecordedRequest(request.method, request.url.path, body, dict(request.headers)))
        return body

    def _model_problem(self, body: Any) -> JSONResponse | None:
        if not isinstance(body, dict):
            return _error(400, "invalid request body")
        if not body.get("model"):
            return _error(400, "model is required")
        if _tag(body["model"]) not in self.models:
            return _error(404, f'model "{body["model"]}" not found, try pulling it first')
        return None

    async def _root(self, request: Request) -> Response:
        await self._record(request)
        return PlainTextResponse("Ollama is running")

    async def _version(self, request: Request) -> Response:
        await self._record(request)
        return JSONResponse({"version": "0.12.6"})

    async def _tags(self, request: Request) -> Response:
        await self._record(request)
        return JSONResponse({"models": [self._model_entry(name) for name in self.models]})

    @staticmethod
    def _model_entry(name: str) -> dict[str, Any]:
        family = name.split(":")[0].split(".")[0].rstrip("0123456789") or "llama"
        return {
            "name": name,
            "model": name,
            "modified_at": "2025-01-01T00:00:00.000000Z",
            "size": 1_000_000 + len(name) * 1000,
            "digest": hashlib.sha256(name.encode()).hexdigest(),
            "details": {
                "parent_model": "",
                "format": "gguf",
                "family": family,
                "families": [family],
                "parameter_size": "1.5B",
                "quantization_level": "Q4_K_M",
            },
        }

    async def _embed(self, request: Request) -> Response:
        body = await self._record(request)
        if problem := self._model_problem(body):
            return problem
        texts = body.get("input", [])
        texts = [texts] if isinstance(texts, str) else list(texts)
        return JSONResponse(
            {
                "model": body["model"],
                "embeddings": [embed_text(t) for t in texts],
                "total_duration": 14_143_917,
                "load_duration": 1_019_500,
                "prompt_eval_count": sum(len(t.split()) for t in texts),
            }
        )

    def _next_reply(self) -> Reply:
        with self._lock:
            return self._replies.pop(0) if self._replies else self.default_reply

    async def _chat(self, request: Request) -> Response:
        body = await self._record(request)
        if problem := self._model_problem(body):
            return problem
        reply = self._next_reply()
        if reply.status != 200:
            return _error(reply.status, reply.error or "internal error")
        prompt_count = sum(len(str(m.get("content", "")).split()) for m in body.get("messages", []))
        pieces = word_pieces(reply.text)
        reply = reply if body.get("logprobs") else dataclasses.replace(reply, top_logprobs=[])
        if not body.get("stream", True):
            if reply.error:
                return _error(500, reply.error)
            message = self._message(reply.text, reply.tool_calls)
            return JSONResponse(self._final(body["model"], message, prompt_count, len(pieces)))
        return StreamingResponse(
            self._lines(body["model"], reply, pieces, prompt_count), media_type="application/x-ndjson"
        )

    @staticmethod
    def _message(content: str, tool_calls: list[dict[str, Any]] | None = None) -> dict[str, Any]:
        message: dict[str, Any] = {"role": "assistant", "content": content}
        if tool_calls:
            message["tool_calls"] = [_tool_call(c) for c in tool_calls]
        return message

    @staticmethod
    def _final(model: str, message: dict[str, Any], prompt_count: int, eval_count: int) -> dict[str, Any]:
        return {
            "model": model,
            "created_at": _now(),
            "message": message,
            "done": True,
            "done_reason": "stop",
            "total_duration": 250_000_000 + eval_count * 20_000_000,
            "load_duration": 12_000_000,
            "prompt_eval_count": prompt_count,
            "prompt_eval_duration": 40_000_000,
            "eval_count": eval_count,
            "eval_duration": eval_count * 20_000_000,
        }

    async def _lines(self, model: str, reply: Reply, pieces: list[str], prompt_count: int) -> AsyncIterator[bytes]:
        def line(obj: dict[str, Any]) -> bytes:
            return (json.dumps(obj) + "\n").encode()

        sent, left = 0, False
        try:
            for i, piece in enumerate(pieces):
                if reply.error is not None and i == reply.error_after:
                    yield line({"error": reply.error})
                    return
                chunk = {"model": model, "created_at": _now(), "message": self._message(piece), "done": False}
                if i == 0 and reply.top_logprobs:
                    tops = [{"token": t, "logprob": lp, "bytes": list(t.encode())} for t, lp in reply.top_logprobs]
                    chunk["logprobs"] = [{**tops[0], "top_logprobs": tops}]
                yield line(chunk)
                sent += 1
                await asyncio.sleep(reply.delay)
        except (asyncio.CancelledError, GeneratorExit):
            left = True
            raise
        finally:
            with self._lock:
                self.stream_ends.append(StreamEnd(time.monotonic(), sent, left))
        if reply.error is not None:
            yield line({"error": reply.error})
            return
        if reply.tool_calls:
            message = self._message("", reply.tool_calls)
            yield line({"model": model, "created_at": _now(), "message": message, "done": False})
        yield line(self._final(model, self._message(""), prompt_count, len(pieces)))


@contextmanager
def serve_ollama(models: tuple[str, ...] = (CHAT_MODEL, EMBED_MODEL)) -> Iterator[OllamaDouble]:
    """An Ollama double running for the duration of the block."""
    double = OllamaDouble(models)
    with double:
        yield double


def unreachable_url() -> str:
    """An http URL on 127.0.0.1 where nothing listens (a port just freed)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    return f"http://127.0.0.1:{port}"
