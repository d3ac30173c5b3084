"""A JSON request whose client leaves before the answer: the work is cancelled, as a stream's would be.

Starlette cancels a streaming response when its client disconnects, but a handler that returns one JSON body runs
to the end whether anyone waits for it or not. `until_client_leaves` runs the handler's work beside a watch on the
connection and cancels the work when the client has gone. `until_set` ends a stream's items when the server stops.
"""

import asyncio
import logging
from collections.abc import AsyncIterator, Coroutine
from typing import Any, TypeVar

import anyio
from fastapi import Request

log = logging.getLogger(__name__)
T = TypeVar("T")
POLL_SECONDS = 0.25  # how often the connection is checked while the work runs
SHUTDOWN_GRACE_SECONDS = 2.0  # how long a stream has to end cleanly once the server stops, before it is cut


class ClientLeft(Exception):
    """The client disconnected before the work ended; the work was cancelled."""


async def until_client_leaves(request: Request, work: Coroutine[Any, Any, T]) -> T:
    """The work's result; ClientLeft (the work cancelled and awaited) when the client disconnects first."""
    task = asyncio.ensure_future(work)
    try:
        while True:
            done, _ = await asyncio.wait({task}, timeout=POLL_SECONDS)
            if done:
                return task.result()
            if await request.is_disconnected():
                log.info("client left %s before its answer; its work is cancelled", request.url.path)
                raise ClientLeft
    finally:
        if not task.done():
            task.cancel()
            await asyncio.gather(task, return_exceptions=True)


async def until_set(items: AsyncIterator[T], stop: anyio.Event) -> AsyncIterator[T]:
    """The items until they end or `stop` is set; then, or when the caller stops early, the item being awaited is
    cancelled and the items are closed."""
    stopped = asyncio.ensure_future(stop.wait())
    item: asyncio.Future | None = None
    try:
        while True:
            item = asyncio.ensure_future(anext(items))
            await asyncio.wait({item, stopped}, return_when=asyncio.FIRST_COMPLETED)
            if not item.done():
                return
            try:
                value = item.result()
            except StopAsyncIteration:
                return
            yield value
    finally:
        pending = [task for task in (item, stopped) if task is not None and not task.done()]
        for task in pending:
            task.cancel()
        await asyncio.gather(*pending, return_exceptions=True)
        await items.aclose()  # type: ignore[attr-defined]
