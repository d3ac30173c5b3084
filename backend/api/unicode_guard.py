"""Refuse a JSON body whose strings hold an unpaired UTF-16 surrogate escape ("\\ud800") or a NUL ("\\u0000").

JSON may spell such an escape, and Python decodes it into a string that cannot be written as UTF-8: it passed
some request models and failed deep inside a turn (the classifier's hashing, a search's error message, the
conversation key), as a 500 or a dropped stream. It is found here, once for every route, and refused by the route
once the request's credentials pass (a 401 comes first): the route is given a body that is not JSON, and the
refusal (api/errors.validation_error) says what was wrong with the one sent, in the API's own error body: 422, or
400 in OpenAI's shape under /v1. A route that takes no JSON body ignores it. A NUL is refused for the same reason
on Postgres, whose text columns cannot hold one, and because no one types it: a message or a name made of it looked
blank and was kept.
"""

import json
import re
from collections.abc import Iterator

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from backend.api.errors import UNSTORABLE_TEXT

_ESCAPE = re.compile(rb"\\u([dD][89a-fA-F]|0000)")  # a surrogate escape (paired or not) or NUL: only then parsed
SURROGATE = (
    "the request body has a string with an unpaired UTF-16 surrogate escape (such as \\ud800), which is not a "
    "character; send valid Unicode text"
)
NUL = "the request body has a string with a NUL character (\\u0000), which cannot be stored; remove it"


def problem(body: bytes) -> str | None:
    """What is wrong with the JSON body's strings, or None (also for a body that is not JSON: its route says so)."""
    if not _ESCAPE.search(body):
        return None
    try:
        strings = list(_strings(json.loads(body)))
    except ValueError:  # not JSON (or not UTF-8): the route's own parsing says so
        return None
    for text in strings:
        try:
            text.encode()
        except UnicodeEncodeError:
            return SURROGATE
    return NUL if any("\x00" in text for text in strings) else None


def _strings(value: object) -> Iterator[str]:
    """Every string of a decoded JSON value, keys included."""
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for key, item in value.items():
            yield key
            yield from _strings(item)
    elif isinstance(value, list):
        for item in value:
            yield from _strings(item)


class RejectUnstorableText:
    """ASGI middleware: reads a JSON request's body first, refuses it when it has a `problem`, else replays it."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or not _is_json(scope):
            await self.app(scope, receive, send)
            return
        messages: list[Message] = []
        while True:
            message = await receive()
            messages.append(message)
            if message["type"] != "http.request" or not message.get("more_body", False):
                break
        body = b"".join(m.get("body", b"") for m in messages if m["type"] == "http.request")
        if (wrong := problem(body)) is not None:
            # the route refuses it once it has checked the request's credentials (a 401 comes first): it gets a body
            # that is not JSON, and the refusal says what is wrong with the one sent (api/errors.validation_error)
            scope.setdefault("state", {})[UNSTORABLE_TEXT] = wrong
            messages = [{"type": "http.request", "body": b"{", "more_body": False}]
        pending = iter(messages)

        async def replay() -> Message:
            return next(pending, None) or await receive()

        await self.app(scope, replay, send)


def _is_json(scope: Scope) -> bool:
    """Whether the body may be JSON: it says so, or it says nothing (FastAPI then reads it as JSON)."""
    if scope.get("method") not in ("POST", "PUT", "PATCH"):
        return False
    for name, value in scope.get("headers", ()):
        if name == b"content-type":
            return b"json" in value.lower()
    return True
