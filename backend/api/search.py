"""POST /api/search: the retrieval pipeline the chat uses, without the model."""

import asyncio

from fastapi import APIRouter, HTTPException

from backend.api.collections import readable_documents
from backend.api.deps import ServicesDep
from backend.api.errors import responses
from backend.api.security import PrincipalDep
from backend.contract.api import SearchRequest, SearchResponse
from backend.contract.text import fold_name, shown
from backend.contract.types import public

router = APIRouter(prefix="/api", tags=["search"])
SHOWN_UNKNOWN = 5  # unknown documents a 422 names (2,000 came back whole, 204 KB: tester)


@router.post("/search", response_model=SearchResponse, responses=responses(422))
async def search(body: SearchRequest, services: ServicesDep, principal: PrincipalDep) -> SearchResponse:
    """Hybrid search over the documents you may read, neighbour expansion, dedupe and rerank; k results, no context
    budget."""
    retriever = services.knowledge.retriever.scoped(await readable_documents(services, principal))
    if body.documents:
        known = {fold_name(n) for n in await retriever.document_names()}
        unknown = list(dict.fromkeys(d for d in body.documents if fold_name(d) not in known))
        if unknown:
            named = ", ".join(shown(d) for d in unknown[:SHOWN_UNKNOWN])
            more = f" and {len(unknown) - SHOWN_UNKNOWN} more" if len(unknown) > SHOWN_UNKNOWN else ""
            waiting = {fold_name(n) for n in await retriever.pending_names()}
            if all(fold_name(d) in waiting for d in unknown):
                raise HTTPException(422, f"not ingested yet: {named}{more}; search them once their status is ready")
            raise HTTPException(422, f"unknown documents: {named}{more}; GET /api/documents lists them")
    if not body.query.strip():
        raise HTTPException(422, "query is empty: send at least one non-blank character")
    result = await asyncio.to_thread(retriever.run, body.query, body.k, body.documents, 10**9)
    return SearchResponse(results=[public(s) for s in result.sources], timings=result.timings)
