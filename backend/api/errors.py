"""Errors: every bad request becomes a 4xx JSON {"detail": "..."} saying what to fix, and routes declare them."""

import re
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from starlette.exceptions import HTTPException as StarletteHTTPException

from backend.contract.api import ErrorBody

DESCRIPTIONS = {
    404: "No such object (or not yours).",
    409: "Conflicts with work in progress on the same object.",
    413: "Too large; the message says which limit.",
    415: "Unsupported file type.",
    422: "The request is malformed or a value is not allowed; the message says which and why.",
    502: "The model server reported an error.",
    503: "The model server could not be reached.",
}


def responses(*codes: int) -> dict[int | str, dict[str, Any]]:
    """OpenAPI `responses` for the error codes a route can return, all with the one error body."""
    return {code: {"model": ErrorBody, "description": DESCRIPTIONS[code]} for code in codes}


def _where(loc: tuple) -> str:
    return ".".join(str(p) for p in loc if p != "body") or "body"


async def validation_error(request: Request, exc: RequestValidationError) -> JSONResponse:
    """422 with one readable sentence per problem (malformed JSON, missing or wrong fields)."""
    problems = []
    for err in exc.errors():
        if err["type"] == "json_invalid":
            problems.append(f"body is not valid JSON ({err.get('ctx', {}).get('error', 'parse error')})")
        elif err["type"] == "string_pattern_mismatch" and _where(tuple(err["loc"])).endswith("thread_id"):
            problems.append("thread_id: use 1 to 128 letters, digits and _ . : - (and not '.' or '..')")
        elif err["type"] == "string_pattern_mismatch" and _where(tuple(err["loc"])) == "header.last-event-id":
            problems.append(f"Last-Event-ID must be an event number (0 or more), not {err.get('input')!r}")
        else:
            problems.append(f"{_where(tuple(err['loc']))}: {err['msg']}")
    return JSONResponse(status_code=422, content={"detail": "; ".join(problems)})


async def http_error(request: Request, exc: StarletteHTTPException) -> JSONResponse:
    """The route's own errors as they are; a body that cannot be parsed (400 from the framework) becomes a 422."""
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


def allowed_methods(request: Request) -> list[str]:
    """Every method the API documents for the request's path."""
    for template, operations in request.app.openapi()["paths"].items():
        if re.fullmatch(re.sub(r"\{[^}/]+\}", "[^/]+", template), request.url.path):
            return sorted(method.upper() for method in operations)
    return []


def install(app: FastAPI) -> None:
    """Register the handlers on the app."""
    app.add_exception_handler(RequestValidationError, validation_error)  # type: ignore[arg-type]
    app.add_exception_handler(StarletteHTTPException, http_error)  # type: ignore[arg-type]
