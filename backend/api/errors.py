"""Exception handlers: every bad request becomes a 4xx JSON {"detail": ...} saying what to fix."""

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse


def _where(loc: tuple) -> str:
    return ".".join(str(p) for p in loc if p != "body") or "body"


async def validation_error(request: Request, exc: RequestValidationError) -> JSONResponse:
    """422 with one readable sentence per problem (malformed JSON, missing or wrong fields)."""
    problems = []
    for err in exc.errors():
        if err["type"] == "json_invalid":
            problems.append(f"body is not valid JSON ({err.get('ctx', {}).get('error', 'parse error')})")
        else:
            problems.append(f"{_where(tuple(err['loc']))}: {err['msg']}")
    return JSONResponse(status_code=422, content={"detail": "; ".join(problems), "errors": jsonable(exc.errors())})


def jsonable(errors: list) -> list:
    """Validation errors with only JSON-safe values."""
    return [
        {k: (v if isinstance(v, str | int | float | list | None) else str(v)) for k, v in e.items()} for e in errors
    ]


def install(app: FastAPI) -> None:
    """Register the handlers on the app."""
    app.add_exception_handler(RequestValidationError, validation_error)  # type: ignore[arg-type]
