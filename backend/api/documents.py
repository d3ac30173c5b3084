"""/api/documents: list, upload (parsed now, embedded in the background), progress and delete."""

import asyncio
from typing import Annotated

from fastapi import APIRouter, File, HTTPException, UploadFile
from fastapi.responses import FileResponse

from backend.api.deps import Services, ServicesDep
from backend.api.errors import responses
from backend.contract.api import DocumentOut, DocumentText, PageSpan, UploadAccepted, UploadRejected
from backend.rag.index import DocumentRecord
from backend.rag.loaders import DocumentError

router = APIRouter(prefix="/api/documents", tags=["documents"])
READ_BLOCK = 1 << 20
MEDIA_TYPES = {
    "pdf": "application/pdf",
    "docx": "application/vnd.openxmlformats-officedocument.wordprocessingml.document",
    "markdown": "text/markdown; charset=utf-8",
    "html": "text/plain; charset=utf-8",  # shown as source, never rendered: an upload must not run script here
    "text": "text/plain; charset=utf-8",
}


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


@router.get("/{doc_id}/text", response_model=DocumentText, responses=responses(404))
async def get_document_text(doc_id: str, services: ServicesDep) -> DocumentText:
    """The document's extracted text, which every source's `start`/`end` span indexes (and PDF page spans)."""
    record = await _existing(services, doc_id)
    stored = await asyncio.to_thread(services.knowledge.index.document_text, doc_id)
    if stored is None:
        raise HTTPException(
            404, f"the text of {record.name} is not stored (ingested by an older version); upload it again"
        )
    text, pages = stored
    spans = [PageSpan(page=p, start=s, end=e) for p, s, e in pages] if pages else None
    return DocumentText(id=record.id, name=record.name, type=record.type, text=text, pages=spans)


@router.get(
    "/{doc_id}/file",
    response_class=FileResponse,
    responses={200: {"content": {t: {} for t in MEDIA_TYPES.values()}, "description": "The uploaded file."}}
    | responses(404),
)
async def get_document_file(doc_id: str, services: ServicesDep) -> FileResponse:
    """The uploaded file as it was (a PDF opens at a cited page); other types download, never render."""
    record = await _existing(services, doc_id)
    path = services.knowledge.ingestor.file_path(doc_id)
    if path is None or not path.is_file():
        raise HTTPException(404, f"the file {record.name} is not kept (ingested by an older version); upload it again")
    inline = record.type == "pdf"
    return FileResponse(
        path,
        media_type=MEDIA_TYPES.get(record.type, "application/octet-stream"),
        filename=record.name,
        content_disposition_type="inline" if inline else "attachment",
        headers={"X-Content-Type-Options": "nosniff", "Content-Security-Policy": "sandbox"},
    )


@router.delete("/{doc_id}", status_code=204, responses=responses(404))
async def delete_document(doc_id: str, services: ServicesDep) -> None:
    """Remove a document from every index."""
    await _existing(services, doc_id)
    await services.knowledge.delete(doc_id)
