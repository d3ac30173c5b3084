"""The OpenAPI schema as the API really behaves: one error body per API (ErrorBody under /api, OpenAI's under /v1),
and the SSE payloads documented."""

from typing import Any

from fastapi import FastAPI
from fastapi.openapi.utils import get_openapi
from pydantic.json_schema import models_json_schema

from backend.contract.api import ErrorBody
from backend.contract.events import SSE_EVENTS
from backend.contract.openai import ChatCompletionChunk

REF = "#/components/schemas/{model}"
FASTAPI_422 = {"HTTPValidationError", "ValidationError"}


def build_openapi(app: FastAPI) -> dict[str, Any]:
    """The schema FastAPI generates, with its 422 list-of-errors body replaced by ErrorBody and SSE events added.

    /v1 answers a malformed request with 400 in OpenAI's shape, never 422; its routes need a bearer key when
    RAG_API_KEYS is set.
    """
    schema = get_openapi(title=app.title, version=app.version, routes=app.routes)
    components = schema.setdefault("components", {}).setdefault("schemas", {})
    models = [(m, "serialization") for m in (*SSE_EVENTS, ErrorBody, ChatCompletionChunk)]
    _, extra = models_json_schema(models, ref_template=REF)  # type: ignore[arg-type]
    components.update(extra.get("$defs", {}))
    components["ChatStreamEvent"] = stream_event_schema()
    error_ref = {"$ref": REF.format(model="ErrorBody")}
    keys = bool(app.state.settings.api_key_list)
    if keys:
        schema["components"]["securitySchemes"] = {"apiKey": {"type": "http", "scheme": "bearer"}}
    for path, operations in schema["paths"].items():
        if path.startswith("/v1/"):
            for operation in operations.values():
                operation["responses"].pop("422", None)
                if keys:
                    operation["security"] = [{"apiKey": []}]
    for operation in (op for path in schema["paths"].values() for op in path.values()):
        unprocessable = operation.get("responses", {}).get("422")
        if unprocessable:
            unprocessable["description"] = "The request is malformed or a value is not allowed; the message says why."
            unprocessable["content"] = {"application/json": {"schema": error_ref}}
    for name in FASTAPI_422:
        components.pop(name, None)
    if app.state.settings.auth == "local":
        document_sign_in(schema)
    return schema


PUBLIC = {
    ("get", "/api/health"),
    ("get", "/api/auth/status"),
    ("post", "/api/auth/setup"),
    ("post", "/api/auth/login"),
    ("get", "/api/auth/invitations/{token}"),  # joining: the invitation's token or an allowed domain
    ("post", "/api/auth/accept"),
    ("post", "/api/auth/signup"),
    ("get", "/api/auth/oidc/login"),  # single sign-on: the provider vouches for the person
    ("get", "/api/auth/oidc/callback"),
}


def document_sign_in(schema: dict[str, Any]) -> None:
    """RAG_AUTH=local: every operation but the public ones needs a session cookie (with the CSRF header on writes)
    or a personal API key, and says so with its 401 (and 403) responses."""
    schemes = schema["components"].setdefault("securitySchemes", {})
    schemes["apiKey"] = {"type": "http", "scheme": "bearer", "description": "A personal API key (POST /api/keys)."}
    schemes["session"] = {"type": "apiKey", "in": "cookie", "name": "ragline_session"}
    error_ref = {"$ref": REF.format(model="ErrorBody")}
    for path, operations in schema["paths"].items():
        for method, operation in operations.items():
            if (method, path) in PUBLIC:
                continue
            operation["security"] = [{"apiKey": []}, {"session": []}]
            answers = operation.setdefault("responses", {})
            if not path.startswith("/v1/"):
                answers.setdefault(
                    "401", {"description": "Not signed in.", "content": {"application/json": {"schema": error_ref}}}
                )
                if method != "get":
                    answers.setdefault(
                        "403",
                        {
                            "description": "No CSRF header with the cookie.",
                            "content": {"application/json": {"schema": error_ref}},
                        },
                    )


def stream_event_schema() -> dict[str, Any]:
    """One SSE event of a chat stream (OpenAPI 3.2 style): its name, and its data as JSON of that event's model."""
    return {
        "description": "One server-sent event: `event` names it, `data` is the JSON of its model.",
        "oneOf": [
            {
                "type": "object",
                "properties": {
                    "event": {"const": name},
                    "data": {
                        "type": "string",
                        "contentMediaType": "application/json",
                        "contentSchema": {"$ref": REF.format(model=model.__name__)},
                    },
                },
                "required": ["event", "data"],
            }
            for model, name in SSE_EVENTS.items()
        ],
    }


def install_openapi(app: FastAPI) -> None:
    """Serve build_openapi's schema (built once, on first request)."""

    def openapi() -> dict[str, Any]:
        if app.openapi_schema is None:
            app.openapi_schema = build_openapi(app)
        return app.openapi_schema

    app.openapi = openapi  # type: ignore[method-assign]
