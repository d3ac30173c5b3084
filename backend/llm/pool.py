"""ModelPool: one chat model per server URL (RAG_OLLAMA_BASE_URL or RAG_OPENAI_BASE_URL with several URLs).

A request goes to the healthy server with the fewest requests in flight (ties take turns). A server that cannot be
reached before the first chunk of its answer is marked down and the request moves on to the next one; an error
after a chunk was streamed is not retried (the client already has part of that answer) and propagates. Background
health checks bring servers back up. PooledChatModel is the pool as the one chat model the graph calls.
"""

import asyncio
import logging
import re
from collections.abc import AsyncIterator, Callable, Iterator, Sequence
from contextlib import aclosing, asynccontextmanager, contextmanager
from dataclasses import dataclass
from typing import Any

import httpx
import openai
from langchain_core.callbacks import AsyncCallbackManagerForLLMRun, CallbackManagerForLLMRun
from langchain_core.exceptions import ModelConnectionError
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import BaseMessage
from langchain_core.outputs import ChatGenerationChunk, ChatResult
from langchain_core.runnables import Runnable
from pydantic import ConfigDict

log = logging.getLogger(__name__)
# by name: the openai SDK runs on httpx2, whose exceptions are not httpx's. Ollama's client turns httpx's ConnectError
# into the builtin ConnectionError, except while streaming (then httpx's own comes through).
UNREACHABLE = ("ConnectError", "ConnectTimeout")
TRANSPORT = ("RemoteProtocolError", "ReadError")  # a hang-up mid-answer: the server is marked down, not retried
SERVER_NOTE = "model server: "  # added to an error's notes, naming the pool's server it came from
ERROR_CHARS = 200
CHECK_SECONDS = 5.0  # longest wait for a health check's answer


def _chain(exc: BaseException) -> Iterator[BaseException]:
    """The exception and those it was raised from or during."""
    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        yield current
        current = current.__cause__ or current.__context__


def _named(exc: BaseException, names: Sequence[str]) -> bool:
    return any(cls.__name__ in names for cls in type(exc).__mro__)


def unreachable(exc: BaseException) -> bool:
    """Whether a request failed to reach its server at all (so no part of an answer came back)."""
    return any(_sending_failed(e) or _refused(e) or _named(e, UNREACHABLE) for e in _chain(exc))


def _sending_failed(exc: BaseException) -> bool:
    """openai's (and langchain-openai's) error for a request it could not send; a timeout is one only when the
    connect timed out (its cause says so)."""
    return isinstance(exc, ModelConnectionError | openai.APIConnectionError) and not isinstance(
        exc, openai.APITimeoutError
    )


def _refused(exc: BaseException) -> bool:
    """Ollama's "Failed to connect" (a plain ConnectionError) or a refused socket; not a reset mid-answer."""
    return type(exc) is ConnectionError or isinstance(exc, ConnectionRefusedError)


def short_error(exc: BaseException | str) -> str:
    """`Type: message`, with the error it came from when that says more, without any user:password@ of a URL in
    it, cut to ERROR_CHARS."""
    if isinstance(exc, str):
        text = exc
    else:
        text = f"{type(exc).__name__}: {exc}".rstrip(": ")
        root = list(_chain(exc))[-1]
        if root is not exc and str(root) and str(root) not in text:
            text += f" ({type(root).__name__}: {root})"
    text = re.sub(r"([a-z][a-z0-9+.-]*://)[^/@\s]*@", r"\1", text, flags=re.IGNORECASE)
    return text if len(text) <= ERROR_CHARS else text[: ERROR_CHARS - 1] + "…"


@dataclass
class ModelServer:
    """One chat server of the pool and what is known about it."""

    url: str  # without credentials: for logs and /api/health
    model: BaseChatModel
    health_url: str  # GET it to check the server (Ollama: /api/version; OpenAI-compatible: /v1/models)
    headers: dict[str, str]
    healthy: bool = True  # until a request or a check says otherwise
    in_flight: int = 0
    last_error: str | None = None


class ModelPool:
    """The servers, routing between them, and what each is doing."""

    def __init__(self, servers: list[ModelServer]) -> None:
        if not servers:
            raise ValueError("a model pool needs at least one server")
        self.servers = servers
        self._turn = 0  # round-robin start among servers equally busy

    def order(self) -> list[ModelServer]:
        """The servers to try for a new request: healthy ones least busy first (ties take turns), then those down
        (a last resort: one may be back before its next health check)."""
        k = self._turn % len(self.servers)
        self._turn += 1
        rotated = self.servers[k:] + self.servers[:k]
        healthy = sorted((s for s in rotated if s.healthy), key=lambda s: s.in_flight)
        return healthy + [s for s in rotated if not s.healthy]

    @contextmanager
    def serving(self, server: ModelServer) -> Iterator[None]:
        """Count a request in flight on the server for the block."""
        server.in_flight += 1
        try:
            yield
        finally:
            server.in_flight -= 1

    def up(self, server: ModelServer) -> None:
        """The server answered."""
        if not server.healthy:
            log.info("model server %s is up again", server.url)
        server.healthy, server.last_error = True, None

    def down(self, server: ModelServer, exc: BaseException | str) -> None:
        """The server failed to answer (an error, or why in words)."""
        if server.healthy and len(self.servers) > 1:
            log.warning("model server %s is down: %s", server.url, short_error(exc))
        server.healthy, server.last_error = False, short_error(exc)

    def failed(self, server: ModelServer, exc: BaseException, started: bool) -> bool:
        """Note a request's failure on a server; whether to try the next server (only when the server could not
        be reached and nothing of the answer was streamed)."""
        if unreachable(exc) or _named(exc, TRANSPORT):
            self.down(server, exc)
        retry = not started and unreachable(exc)
        if not retry and len(self.servers) > 1:
            exc.add_note(SERVER_NOTE + server.url)
        return retry

    async def check(self, wait: float = CHECK_SECONDS) -> None:
        """Ask every server whether it is up, at once (waiting `wait` seconds at most), and mark each by its answer."""
        async with httpx.AsyncClient(timeout=wait) as client:
            await asyncio.gather(*(self._check(client, server) for server in self.servers))

    async def _check(self, client: httpx.AsyncClient, server: ModelServer) -> None:
        try:
            response = await client.get(server.health_url, headers=server.headers)
        except httpx.HTTPError as exc:
            self.down(server, exc)
            return
        if response.is_success:
            self.up(server)
        else:
            self.down(server, f"health check: HTTP {response.status_code} from GET {response.url.path}")

    @asynccontextmanager
    async def checking(self, every: float) -> AsyncIterator[None]:
        """Check the servers every `every` seconds while the block runs (not for a pool of one: its requests
        try it anyway, and say whether it is up)."""
        if len(self.servers) < 2:
            yield
            return
        task = asyncio.create_task(self._check_forever(every), name="model-health")
        try:
            yield
        finally:
            task.cancel()
            await asyncio.gather(task, return_exceptions=True)

    async def _check_forever(self, every: float) -> None:
        """Every `every` seconds (the first after that long: until then requests find out), check the servers."""
        while True:
            await asyncio.sleep(every)
            try:
                await self.check(min(every, CHECK_SECONDS))
            except Exception:  # a failed round must not end the checks
                log.exception("checking the model servers failed")

    def status(self) -> list[dict[str, Any]]:
        """Each server's URL, health, requests in flight and last error, for /api/health."""
        return [
            {"url": s.url, "healthy": s.healthy, "in_flight": s.in_flight, "last_error": s.last_error}
            for s in self.servers
        ]


class PooledChatModel(BaseChatModel):
    """The pool as one chat model: each request runs on a server's own model, chosen by the pool."""

    model_config = ConfigDict(arbitrary_types_allowed=True)
    pool: ModelPool

    @property
    def _llm_type(self) -> str:
        return "ragline-pool"

    def _should_stream(self, *, async_api: bool, **kwargs: Any) -> bool:
        """Stream when the servers' own model would (ChatOpenAI with streaming=True, a streaming callback)."""
        return self.pool.servers[0].model._should_stream(async_api=async_api, **kwargs)

    def bind_tools(self, tools: Sequence[Any], **kwargs: Any) -> Runnable:
        """The tools in the servers' format (they all run the same client), bound to the pool."""
        binding = self.pool.servers[0].model.bind_tools(tools, **kwargs)
        return self.bind(**binding.kwargs)  # type: ignore[attr-defined]

    async def _astream(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: AsyncCallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> AsyncIterator[ChatGenerationChunk]:
        """Stream from the first server that can be reached."""
        error: BaseException | None = None
        for server in self.pool.order():
            started = False
            with self.pool.serving(server):
                try:
                    async with aclosing(server.model._astream(messages, stop, run_manager, **kwargs)) as stream:
                        async for chunk in stream:
                            started = True
                            yield chunk
                except Exception as exc:
                    if not self.pool.failed(server, exc, started):
                        raise
                    error = exc
                    continue
            self.pool.up(server)
            return
        assert error is not None
        raise error

    async def _agenerate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: AsyncCallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        """The whole reply from the first server that can be reached (a connection fails before any token)."""
        return await self._first(lambda m: m._agenerate(messages, stop, run_manager, **kwargs))

    def _generate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        """The synchronous call, on the least busy server only."""
        server = self.pool.order()[0]
        with self.pool.serving(server):
            try:
                result = server.model._generate(messages, stop, run_manager, **kwargs)
            except Exception as exc:
                self.pool.failed(server, exc, started=True)
                raise
        self.pool.up(server)
        return result

    async def _first(self, call: Callable[[BaseChatModel], Any]) -> ChatResult:
        error: BaseException | None = None
        for server in self.pool.order():
            with self.pool.serving(server):
                try:
                    result = await call(server.model)
                except Exception as exc:
                    if not self.pool.failed(server, exc, started=False):
                        raise
                    error = exc
                    continue
            self.pool.up(server)
            return result
        assert error is not None
        raise error
