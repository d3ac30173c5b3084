"""/api/documents: list, upload (parsed now, embedded in the background), progress and delete."""

import asyncio
from typing import Annotated

from fastapi import APIRouter, File, HTTPException, UploadFile

from backend.api.deps import Services, ServicesDep
from backend.api.errors import responses
from backend.contract.api import DocumentOut, UploadAccepted, UploadRejected
from backend.rag.index import DocumentRecord
from backend.rag.loaders import DocumentError

router = APIRouter(prefix="/api/documents", tags=["documents"])
READ_BLOCK = 1 << 20


def _out(record: DocumentRecord) -> DocumentOut:
    return DocumentOut.model_validate(record, from_attributes=True)


async def _read_limited(upload: UploadFile, limit: int) -> bytes:
    """The upload's bytes, or DocumentError 413 as soon as it passes the limit."""
    parts, size = [], 0
    while block := await upload.read(READ_BLOCK):
        size += len(block)
        if size > limit:
            raise DocumentError(413, f"{upload.filename} is larger than the {limit / 1e6:g} MB upload limit")
        parts.append(block)
    return b"".join(parts)


@router.get("", response_model=list[DocumentOut])
async def list_documents(services: ServicesDep) -> list[DocumentOut]:
    """Every document with its status (also feeds @mention autocomplete)."""
    return [_out(d) for d in await asyncio.to_thread(services.knowledge.index.documents)]


@router.post("", status_code=202, response_model=UploadAccepted, responses=responses(413, 415, 422))
async def upload_documents(
    services: ServicesDep, files: Annotated[list[UploadFile], File(min_length=1, description="one or more documents")]
) -> UploadAccepted:
    """Accept files: each is checked and parsed now (4xx when bad) and embedded in the background."""
    limit = int(services.deps.settings.max_upload_mb * 1e6)
    accepted, rejected = [], []
    for upload in files:
        name = upload.filename or ""
        try:
            record, _ = await services.knowledge.submit(name, await _read_limited(upload, limit))
            accepted.append(_out(record))
        except DocumentError as exc:
            rejected.append(UploadRejected(name=name, status=exc.status, detail=exc.message))
    if not accepted:
        statuses = {r.status for r in rejected}
        raise HTTPException(statuses.pop() if len(statuses) == 1 else 422, "; ".join(r.detail for r in rejected))
    return UploadAccepted(documents=accepted, rejected=rejected)


async def _existing(services: Services, doc_id: str) -> DocumentRecord:
    record = await asyncio.to_thread(services.knowledge.index.document, doc_id)
    if record is None:
        raise HTTPException(404, f"document {doc_id!r} does not exist; GET /api/documents lists the documents")
    return record


@router.get("/{doc_id}", response_model=DocumentOut, responses=responses(404))
async def get_document(doc_id: str, services: ServicesDep) -> DocumentOut:
    """One document with its ingestion progress (0..1) and error, if any."""
    return _out(await _existing(services, doc_id))


@router.delete("/{doc_id}", status_code=204, responses=responses(404))
async def delete_document(doc_id: str, services: ServicesDep) -> None:
    """Remove a document from every index."""
    await _existing(services, doc_id)
    await services.knowledge.delete(doc_id)
