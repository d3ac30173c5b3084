"""Errors: every bad request becomes a 4xx JSON {"detail": "..."} saying what to fix, and routes declare them.

Under /v1 (the OpenAI-compatible API) the same errors take OpenAI's shape instead:
{"error": {"message", "type", "param", "code"}}, so OpenAI clients and SDKs read them.
"""

import inspect
import re
from collections.abc import Callable, Sequence
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse, Response
from starlette.exceptions import HTTPException as StarletteHTTPException

from backend.contract.api import ErrorBody
from backend.contract.auth import EMAIL_PATTERN
from backend.contract.events import ErrorEvent
from backend.contract.openai import OpenAIError, OpenAIErrorDetail, OpenAIRequestError
from backend.contract.text import NAME_PATTERN, OPTIONAL_NAME_PATTERN, THREAD_ID_RULE, shown

NAME_PATTERNS = (NAME_PATTERN, OPTIONAL_NAME_PATTERN)
# what FastAPI reports when a body that should be a JSON object is not one: a body sent as a form or as text (curl's
# default Content-Type) arrives as a string, although it is valid JSON (tester)
OBJECT_EXPECTED = ("dict_type", "model_attributes_type")

DESCRIPTIONS = {
    401: "Not signed in, or the session or API key is not valid (RAG_AUTH=local).",
    403: "Signed in, but not allowed: a cookie write without its CSRF token, an admin-only route, or a change to "
    "a collection you may read but not write.",
    404: "No such object (or not yours).",
    409: "Conflicts with work in progress on the same object.",
    413: "Too large; the message says which limit.",
    415: "Unsupported file type.",
    422: "The request is malformed or a value is not allowed; the message says which and why.",
    429: "Too many attempts; the Retry-After header says how many seconds to wait.",
    502: "The model server (or the single sign-on provider) reported an error or could not be reached.",
    503: "The model server could not be reached.",
}


OPENAI_PREFIX = "/v1"
OPENAI_CODES = {400: "invalid_request", 401: "invalid_api_key", 404: "not_found", 405: "method_not_allowed"}


def openai_error_body(status: int, message: str, param: str | None = None, code: str | None = None) -> OpenAIError:
    """An OpenAI-shaped error; 5xx are server errors, the rest invalid requests."""
    kind = "server_error" if status >= 500 else "invalid_request_error"
    return OpenAIError(
        error=OpenAIErrorDetail(message=message, type=kind, param=param, code=code or OPENAI_CODES.get(status))
    )


def openai_error(status: int, message: str, param: str | None = None, code: str | None = None) -> JSONResponse:
    """An OpenAI-shaped error response."""
    headers = {"WWW-Authenticate": "Bearer"} if status == 401 else None
    body = openai_error_body(status, message, param, code)
    return JSONResponse(status_code=status, content=body.model_dump(), headers=headers)


def turn_status(event: ErrorEvent) -> int:
    """The HTTP status of a failed turn for the JSON API: the request's fault (a message too long for the model's
    context) is a 413, an unreachable model server a 503, any other model failure a 502."""
    return {"model_unreachable": 503, "too_long": 413}.get(event.code, 502)


def turn_openai_error(event: ErrorEvent) -> tuple[int, OpenAIError]:
    """A failed turn as /v1 answers it: OpenAI's 400 `context_length_exceeded` for a prompt too long for the model
    (which clients such as LibreChat recognise), else the JSON API's status with the turn's code."""
    if event.code == "too_long":
        return 400, openai_error_body(400, event.message, code="context_length_exceeded")
    status = turn_status(event)
    return status, openai_error_body(status, event.message, code=event.code)


def is_openai(request: Request) -> bool:
    """Whether the request is for the OpenAI-compatible API."""
    return is_openai_path(request.url.path)


def is_openai_path(path: str) -> bool:
    """Whether a URL path is under the OpenAI-compatible API."""
    return path == OPENAI_PREFIX or path.startswith(OPENAI_PREFIX + "/")


# what pydantic adds to a location for each type a field may take: "temperature.float", "messages.0.content.str",
# "…content.list[ContentPart]"; not parameters, so not named (tester)
_TYPE_TAG = re.compile(r"(?:str|int|float|bool|none|bytes|[a-z-]+\[.*\])")


def _fields(loc: tuple) -> list:
    """The parts of a validation error's location that name the request: no "body", no type tags."""
    return [p for p in loc if p != "body" and not (isinstance(p, str) and _TYPE_TAG.fullmatch(p))]


def openai_param(loc: tuple) -> str:
    """A validation error's location as OpenAI names parameters: messages[0].content."""
    out = ""
    for part in _fields(loc):
        out += f"[{part}]" if isinstance(part, int) else f".{part}" if out else str(part)
    return out


def responses(*codes: int) -> dict[int | str, dict[str, Any]]:
    """OpenAPI `responses` for the error codes a route can return, all with the one error body."""
    return {code: {"model": ErrorBody, "description": DESCRIPTIONS[code]} for code in codes}


def _json_sent(request: Request) -> bool:
    """Whether the request says its body is JSON (application/json, or a +json type)."""
    media = (request.headers.get("content-type") or "").split(";")[0].strip().lower()
    return media == "application/json" or media.endswith("+json")


def _where(loc: tuple) -> str:
    return ".".join(str(p) for p in _fields(loc)) or "body"


def _one_per_field(errors: Sequence[Any]) -> list[Any]:
    """A field that may take several types fails once for each ("stop": five strings is not a string, and not a
    list of at most four): keep the failures of the type the value has (a constraint it broke), else the first."""
    fields: dict[tuple, list[Any]] = {}
    for err in errors:
        where = () if err["type"] == "json_invalid" else tuple(_fields(tuple(err["loc"])))
        fields.setdefault(where, []).append(err)
    kept = []
    for found in fields.values():
        broken = [e for e in found if not e["type"].endswith("_type") and e["type"] not in OBJECT_EXPECTED]
        kept += broken if len(found) > 1 and broken else found[:1] if len(found) > 1 else found
    return kept


async def validation_error(request: Request, exc: RequestValidationError) -> Response:
    """422 with one readable sentence per problem (malformed JSON, missing or wrong fields); 400 under /v1."""
    if refused := await refused_credentials(request):
        return refused
    if unstorable := request.scope.get("state", {}).get(UNSTORABLE_TEXT):  # backend/api/unicode_guard.py
        return openai_error(400, unstorable) if is_openai(request) else JSONResponse({"detail": unstorable}, 422)
    problems = []
    for err in _one_per_field(exc.errors()):
        if err["type"] == "json_invalid":
            problems.append(f"body is not valid JSON ({err.get('ctx', {}).get('error', 'parse error')})")
        elif err["type"] in OBJECT_EXPECTED and tuple(err["loc"]) == ("body",) and not _json_sent(request):
            sent = request.headers.get("content-type") or "no Content-Type"
            problems.append(f"send the body as JSON with the header Content-Type: application/json (got {sent})")
        elif err["type"] == "string_pattern_mismatch" and _where(tuple(err["loc"])).endswith("thread_id"):
            problems.append(f"thread_id: use {THREAD_ID_RULE}")
        elif err["type"] == "string_pattern_mismatch" and _where(tuple(err["loc"])) == "header.last-event-id":
            sent = shown(str(err.get("input")))
            problems.append(f"Last-Event-ID must be an event number: 0 or more, at most 18 digits, not {sent}")
        elif err["type"] == "string_pattern_mismatch" and err.get("ctx", {}).get("pattern") == EMAIL_PATTERN:
            problems.append(f"{_where(tuple(err['loc']))}: not an e-mail address (name@domain.tld, no spaces)")
        elif err["type"] == "string_pattern_mismatch" and err.get("ctx", {}).get("pattern") in NAME_PATTERNS:
            blank = "" if err["ctx"]["pattern"] == OPTIONAL_NAME_PATTERN else " blank nor"
            problems.append(
                f"{_where(tuple(err['loc']))}: use one line of text without control characters or characters that "
                f"reorder the text, not{blank} only invisible characters"
            )
        else:
            problems.append(f"{_where(tuple(err['loc']))}: {err['msg']}")
    if is_openai(request):
        first = exc.errors()[0] if exc.errors() else {}
        # a JSON syntax error's location is a character position, not a parameter
        where = () if first.get("type") == "json_invalid" else tuple(first.get("loc", ()))
        return openai_error(400, "; ".join(problems), openai_param(where) or None)
    return JSONResponse(status_code=422, content={"detail": "; ".join(problems)})


async def http_error(request: Request, exc: StarletteHTTPException) -> Response:
    """The route's own errors as they are; a body that cannot be parsed (400 from the framework) becomes a 422."""
    if exc.status_code == 400 and (refused := await refused_credentials(request)):
        return refused
    if is_openai(request):
        return _openai_http_error(request, exc)
    if exc.status_code == 400:  # no route of ours answers 400: this is FastAPI or Starlette refusing the body
        if isinstance(exc.__cause__, UnicodeDecodeError):
            return JSONResponse(status_code=422, content={"detail": "body is not valid JSON: it is not UTF-8 text"})
        return JSONResponse(status_code=422, content={"detail": f"body could not be read: {exc.detail}"})
    detail = exc.detail if isinstance(exc.detail, str) else str(exc.detail)
    headers = dict(exc.headers or {})
    if exc.status_code == 405:  # Starlette names the first matching route's methods; the path may have more
        allowed = allowed_methods(request)
        headers["Allow"] = ", ".join(allowed)
        detail = f"{request.method} is not allowed on {request.url.path}; use {' or '.join(allowed)}"
    return JSONResponse(status_code=exc.status_code, content={"detail": detail}, headers=headers)


def _openai_http_error(request: Request, exc: StarletteHTTPException) -> JSONResponse:
    """The framework's errors under /v1 (no such route, wrong method, unreadable body) in OpenAI's shape."""
    status, message = exc.status_code, exc.detail if isinstance(exc.detail, str) else str(exc.detail)
    if status == 404:
        message = f"no route {request.url.path}; the API has GET /v1/models and POST /v1/chat/completions"
    if status == 405:
        allowed = allowed_methods(request)
        use = " or ".join(allowed)
        response = openai_error(405, f"{request.method} is not allowed on {request.url.path}; use {use}")
        response.headers["Allow"] = ", ".join(allowed)
        return response
    if status == 400:
        message = f"body could not be read: {message}"
    return openai_error(status, message)


async def openai_request_error(request: Request, exc: OpenAIRequestError) -> JSONResponse:
    """A /v1 route's refusal."""
    return openai_error(exc.status, exc.message, exc.param, exc.code)


def allowed_methods(request: Request) -> list[str]:
    """Every method the API documents for the request's path."""
    for template, operations in request.app.openapi()["paths"].items():
        if re.fullmatch(re.sub(r"\{[^}/]+\}", "[^/]+", template), request.url.path):
            return sorted(method.upper() for method in operations)
    return []


UNSTORABLE_TEXT = "ragline.unstorable_text"  # the request state's key for what the unicode guard found
# the route dependencies that refuse a request for its credentials (401, 403): `checks_credentials` adds them
CREDENTIAL_CHECKS: list[Callable[[Request], Any]] = []


def checks_credentials(check: Callable[[Request], Any]) -> Callable[[Request], Any]:
    """Mark a route dependency of the request alone as a check of its credentials (see refused_credentials)."""
    CREDENTIAL_CHECKS.append(check)
    return check


async def refused_credentials(request: Request) -> Response | None:
    """The refusal the request's route gives its credentials, or None when they pass (or it asks for none).

    FastAPI parses a JSON body before it runs the route's dependencies, and the unstorable-text guard reads it before
    routing: a malformed body sent without a key was a 400 saying what was wrong with the body, not the 401 that
    OpenAI, and the README, give first (tester). So a refusal of the body asks the route's credential checks first
    (the guard lets such a body reach its route as malformed JSON, marked UNSTORABLE_TEXT, see validation_error)."""
    for check in _credential_checks(getattr(request.scope.get("route"), "dependant", None)):
        try:
            checked = check(request)
            if inspect.isawaitable(checked):
                await checked
        except StarletteHTTPException as exc:
            return await http_error(request, exc)
        except OpenAIRequestError as exc:
            return await openai_request_error(request, exc)
    return None


def _credential_checks(dependant: Any) -> list[Callable[[Request], Any]]:
    """The credential checks a route depends on, directly or through other dependencies, each once, in order."""
    found: list[Callable[[Request], Any]] = []
    for sub in getattr(dependant, "dependencies", None) or ():
        if sub.call in CREDENTIAL_CHECKS:
            found += [sub.call] if sub.call not in found else []
        else:
            found += [c for c in _credential_checks(sub) if c not in found]
    return found


def install(app: FastAPI) -> None:
    """Register the handlers on the app."""
    app.add_exception_handler(RequestValidationError, validation_error)  # type: ignore[arg-type]
    app.add_exception_handler(StarletteHTTPException, http_error)  # type: ignore[arg-type]
    app.add_exception_handler(OpenAIRequestError, openai_request_error)  # type: ignore[arg-type]
