"""POST /api/search: the retrieval pipeline the chat uses, without the model."""

import asyncio
from typing import Annotated

from fastapi import APIRouter, Depends, HTTPException

from backend.api.deps import Services, get_services
from backend.schemas import SearchRequest, SearchResponse, SourceOut

router = APIRouter(prefix="/api", tags=["search"])


@router.post("/search", response_model=SearchResponse)
async def search(body: SearchRequest, services: Annotated[Services, Depends(get_services)]) -> SearchResponse:
    """Hybrid search, neighbour expansion, dedupe and rerank; k results, no context budget."""
    kb = services.knowledge
    if body.documents:
        known = {n.lower() for n in await kb.retriever.document_names()}
        unknown = [d for d in body.documents if d.lower() not in known]
        if unknown:
            raise HTTPException(422, f"unknown documents: {', '.join(unknown)}; GET /api/documents lists them")
    if not body.query.strip():
        raise HTTPException(422, "query is empty: send at least one non-blank character")
    result = await asyncio.to_thread(kb.retriever.run, body.query, body.k, body.documents, 10**9)
    results = [SourceOut.model_validate({k: v for k, v in s.items() if k != "text"}) for s in result.sources]
    return SearchResponse(results=results, timings=result.timings)
