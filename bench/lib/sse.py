"""The chat stream as a client sees it, over httpx-sse: one turn's events with their receive times."""

import re
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field

import httpx
from httpx_sse import EventSource, aconnect_sse


def parse_sse(response: httpx.Response) -> list[tuple[str, dict]]:
    """The (event, data) pairs of a finished text/event-stream response, in order; pings are skipped."""
    return [(sse.event, sse.json()) for sse in EventSource(response).iter_sse() if sse.data]


@dataclass
class Turn:
    """One streamed turn: every event with the time.monotonic() it arrived, and an error if it failed."""

    thread_id: str
    t_send: float
    t_headers: float | None = None
    events: list[tuple[str, dict, float]] = field(default_factory=list)
    error: str | None = None

    def times(self, name: str) -> list[float]:
        """When each event of this name arrived."""
        return [t for n, _, t in self.events if n == name]

    @property
    def done(self) -> dict | None:
        """The `done` event's data, None when the turn did not complete."""
        return next((d for n, d, _ in self.events if n == "done"), None)

    @property
    def n_tokens(self) -> int:
        """How many `token` events arrived."""
        return len(self.times("token"))

    @property
    def ttft(self) -> float | None:
        """Request sent -> first `token` event."""
        tokens = self.times("token")
        return tokens[0] - self.t_send if tokens else None

    @property
    def sse_rate(self) -> float | None:
        """Token events per second between the first and the last."""
        tokens = self.times("token")
        if len(tokens) < 2 or tokens[-1] <= tokens[0]:
            return None
        return (len(tokens) - 1) / (tokens[-1] - tokens[0])

    @property
    def route(self) -> str:
        """'intent: route reason' from the done event (without its distance figure), or 'error'."""
        if self.done is None:
            return "error"
        reason = re.sub(r"\s*\(distance [\d.]+\)", "", self.done.get("route_reason", ""))
        return f"{self.done.get('intent')}: {reason}"

    def marks(self) -> dict[str, float]:
        """The first arrival of every event, with status events named 'node:phase'."""
        out: dict[str, float] = {}
        for name, data, t in self.events:
            out.setdefault(f"{data['node']}:{data['phase']}" if name == "status" else name, t)
        return out


async def stream_turn(
    client: httpx.AsyncClient, url: str, body: dict, on_event: Callable[[Turn], Awaitable[None]] | None = None
) -> Turn:
    """POST body to the chat stream at url and time every event of the turn; failures end up in `error`.
    `on_event` is awaited with the turn after each event is added (to act mid-stream, e.g. cancel the run)."""
    turn = Turn(thread_id=body.get("thread_id", ""), t_send=time.monotonic())
    try:
        async with aconnect_sse(client, "POST", url, json=body) as source:
            turn.t_headers = time.monotonic()
            if source.response.status_code != 200:
                turn.error = f"HTTP {source.response.status_code}: {(await source.response.aread())[:200]!r}"
                return turn
            async for sse in source.aiter_sse():
                if sse.data:
                    turn.events.append((sse.event, sse.json(), time.monotonic()))
                    if on_event is not None:
                        await on_event(turn)
    except Exception as exc:  # counted as an error of this stream
        turn.error = f"{type(exc).__name__}: {exc}"
    failed = next((d for n, d, _ in turn.events if n == "error"), None)
    if failed:
        turn.error = f"{failed.get('code')}: {failed.get('message')}"
    elif turn.error is None and turn.done is None and not turn.times("stopped"):  # a stopped run ends with `stopped`
        turn.error = "stream ended without done"
    return turn


def client(streams: int = 10) -> httpx.AsyncClient:
    """An HTTP client with room for `streams` parallel streams and the patience of a slow model."""
    limits = httpx.Limits(max_connections=streams + 5, max_keepalive_connections=streams + 5)
    return httpx.AsyncClient(timeout=httpx.Timeout(900.0, connect=30.0), limits=limits)
