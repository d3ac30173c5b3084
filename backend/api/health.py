"""GET /api/health: which backend and model answer, how many documents, and versions."""

import asyncio
from importlib.metadata import PackageNotFoundError, version

from fastapi import APIRouter

from backend.api.deps import ServicesDep
from backend.contract.api import Health

router = APIRouter(prefix="/api", tags=["health"])
PACKAGES = ("fastapi", "langgraph", "langchain-core", "chromadb", "sse-starlette", "xllamacpp")


def _version(package: str) -> str | None:
    try:
        return version(package)
    except PackageNotFoundError:
        return None


@router.get("/health", response_model=Health)
async def health(services: ServicesDep) -> dict:
    """Status of the server and its models."""
    index = services.knowledge.index
    documents = await asyncio.to_thread(index.documents)
    return {
        "status": "ok",
        "backend": services.models.backend,
        "model": services.models.model,
        "model_server": services.deps.settings.model_server,
        "embedding_model": services.models.embedding_model,
        "reranker": services.knowledge.reranker.name,
        "documents": sum(1 for d in documents if d.version > 0),
        "chunks": await asyncio.to_thread(index.count_chunks),
        "versions": {p: _version(p) for p in PACKAGES},
    }
