"""GET /api/health: which backend and model answer, how each chat server is, how many documents (those the asker
may read), and versions."""

import asyncio
from importlib.metadata import PackageNotFoundError, version

from fastapi import APIRouter, HTTPException, Request

from backend.api.collections import readable_documents
from backend.api.deps import Services, ServicesDep
from backend.api.security import identify
from backend.contract.api import Health

router = APIRouter(prefix="/api", tags=["health"])
PACKAGES = ("fastapi", "langgraph", "langchain-core", "chromadb", "sse-starlette", "xllamacpp")


def _version(package: str) -> str | None:
    try:
        return version(package)
    except PackageNotFoundError:
        return None


async def _visible(request: Request, services: Services) -> frozenset[str] | None:
    """Ids of the documents the asker may read; None for all (RAG_AUTH=off). Health is public: with accounts on,
    a request without valid credentials counts none, so the route tells strangers nothing about the documents."""
    if services.deps.settings.auth == "off":
        return None
    try:
        principal = await identify(request)
    except HTTPException:
        principal = None
    return frozenset() if principal is None else await readable_documents(services, principal) or frozenset()


@router.get("/health", response_model=Health)
async def health(request: Request, services: ServicesDep) -> dict:
    """Status of the server and its models, with the documents and chunks the asker may read."""
    index = services.knowledge.index
    visible = await _visible(request, services)
    documents = [
        d for d in await asyncio.to_thread(index.documents) if d.version > 0 and (visible is None or d.id in visible)
    ]
    return {
        "status": "ok",
        "backend": services.models.backend,
        "model": services.models.model,
        "model_server": services.deps.settings.model_server,
        "model_servers": services.models.pool.status() if services.models.pool else [],
        "embedding_model": services.models.embedding_model,
        "reranker": services.knowledge.reranker.name,
        "documents": len(documents),
        "chunks": await asyncio.to_thread(index.count_chunks) if visible is None else sum(d.chunks for d in documents),
        "max_message_chars": services.deps.settings.max_message_chars,
        "versions": {p: _version(p) for p in PACKAGES},
    }
