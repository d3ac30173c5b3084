"""/api/documents: list, upload (parsed now, embedded in the background), progress, move and delete.

With RAG_AUTH=local each route sees only the documents the asker may read (api/collections.py): another user's
document is the same 404 as a missing one; deleting or moving needs write access to its collection (and moving, to
the one it goes to).
"""

import asyncio
import logging
from typing import Annotated
from urllib.parse import quote

from fastapi import APIRouter, File, Form, HTTPException, UploadFile
from fastapi.responses import FileResponse, Response

from backend.api.collections import readable_documents, reader_of, writable_collection
from backend.api.deps import Services, ServicesDep
from backend.api.errors import responses
from backend.api.security import Principal, PrincipalDep
from backend.contract.api import (
    DocumentMove,
    DocumentOut,
    DocumentText,
    PageSpan,
    UploadAccepted,
    UploadedDocument,
    UploadRejected,
)
from backend.contract.text import shown
from backend.rag.collections import DocumentNameTaken, Reader, may_write
from backend.rag.index import DocumentRecord
from backend.rag.loaders import DocumentError

log = logging.getLogger(__name__)
router = APIRouter(prefix="/api/documents", tags=["documents"])
READ_BLOCK = 1 << 20
MEDIA_TYPES = {
    "pdf": "application/pdf",
    "docx": "application/vnd.openxmlformats-officedocument.wordprocessingml.document",
    "markdown": "text/markdown; charset=utf-8",
    "html": "text/plain; charset=utf-8",  # shown as source, never rendered: an upload must not run script here
    "text": "text/plain; charset=utf-8",
}


# what a browser writes in a multipart file name for a double quote, a line feed and a carriage return (WHATWG
# HTML, "multipart/form-data encoding algorithm"): `Rapport "Q3".md` arrived as `Rapport %22Q3%22.md` (tester)
_BROWSER_ESCAPES = {"%22": '"', "%0A": " ", "%0D": " "}


def browser_name(filename: str) -> str:
    """An uploaded file's name as the user wrote it, without a browser's escapes."""
    for escape, char in _BROWSER_ESCAPES.items():
        filename = filename.replace(escape, char).replace(escape.lower(), char)
    return filename


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
async def list_documents(services: ServicesDep, principal: PrincipalDep) -> list[DocumentOut]:
    """Every document you may read, with its status (also feeds @mention autocomplete)."""
    readable = await readable_documents(services, principal)
    records = await asyncio.to_thread(services.knowledge.index.documents)
    return [_out(d) for d in records if readable is None or d.id in readable]


@router.post("", status_code=202, response_model=UploadAccepted, responses=responses(403, 404, 413, 415, 422))
async def upload_documents(
    services: ServicesDep,
    principal: PrincipalDep,
    files: Annotated[list[UploadFile], File(min_length=1, description="one or more documents")],
    collection: Annotated[
        str | None, Form(max_length=64, description="the collection's id (GET /api/collections); default: yours")
    ] = None,
) -> UploadAccepted:
    """Accept files into a collection you may write: each is checked and parsed now (4xx when bad) and embedded in
    the background."""
    target = await writable_collection(services, principal, collection)
    limit = int(services.deps.settings.max_upload_mb * 1e6)
    accepted, rejected = [], []
    for upload in files:
        name = browser_name(upload.filename or "")
        try:
            record, outcome = await services.knowledge.submit(name, await _read_limited(upload, limit), target)
            accepted.append(UploadedDocument(**_out(record).model_dump(), outcome=outcome))
        except DocumentError as exc:
            rejected.append(UploadRejected(name=name, status=exc.status, detail=exc.message))
    if not accepted:
        statuses = {r.status for r in rejected}
        raise HTTPException(statuses.pop() if len(statuses) == 1 else 422, "; ".join(r.detail for r in rejected))
    return UploadAccepted(documents=accepted, rejected=rejected)


async def _existing(services: Services, doc_id: str, principal: Principal) -> DocumentRecord:
    """The document, if it exists and the principal may read it; else the one 404."""
    record = await asyncio.to_thread(services.knowledge.index.document, doc_id)
    readable = await readable_documents(services, principal) if record is not None else None
    if record is None or readable is not None and record.id not in readable:
        raise HTTPException(404, f"document {shown(doc_id)} does not exist; GET /api/documents lists the documents")
    return record


@router.get("/{doc_id}", response_model=DocumentOut, responses=responses(404))
async def get_document(doc_id: str, services: ServicesDep, principal: PrincipalDep) -> DocumentOut:
    """One document with its ingestion progress (0..1) and error, if any."""
    return _out(await _existing(services, doc_id, principal))


def _not_kept(record: DocumentRecord, missing: str) -> HTTPException:
    """Why a document's text or file is not there: not ingested yet (409, wait), its ingestion failed, or an older
    Ragline ingested it without keeping them (404, upload it again)."""
    if record.version == 0 and record.status in ("queued", "processing"):
        return HTTPException(
            409, f"{record.name} is not ingested yet ({record.status}); try again once its status is ready"
        )
    if record.version == 0:
        return HTTPException(
            404, f"{missing}: its ingestion failed ({record.error or 'no reason given'}); fix it and upload it again"
        )
    return HTTPException(404, f"{missing} (ingested by an older version); upload it again")


@router.get("/{doc_id}/text", response_model=DocumentText, responses=responses(404, 409))
async def get_document_text(doc_id: str, services: ServicesDep, principal: PrincipalDep) -> DocumentText:
    """The document's extracted text, which every source's `start`/`end` span indexes (and PDF page spans)."""
    record = await _existing(services, doc_id, principal)
    stored = await asyncio.to_thread(services.knowledge.index.document_text, doc_id)
    if stored is None:
        raise _not_kept(record, f"the text of {record.name} is not stored")
    text, pages = stored
    spans = [PageSpan(page=p, start=s, end=e) for p, s, e in pages] if pages else None
    return DocumentText(id=record.id, name=record.name, type=record.type, text=text, pages=spans)


@router.get(
    "/{doc_id}/file",
    response_class=FileResponse,
    responses={200: {"content": {t: {} for t in MEDIA_TYPES.values()}, "description": "The uploaded file."}}
    | responses(404, 409),
)
async def get_document_file(doc_id: str, services: ServicesDep, principal: PrincipalDep) -> Response:
    """The uploaded file as it was (a PDF opens at a cited page); other types download, never render."""
    record = await _existing(services, doc_id, principal)
    files = services.knowledge.ingestor.files
    path = files and await asyncio.to_thread(files.path, doc_id)
    data = None if path or files is None else await asyncio.to_thread(files.get, doc_id)  # in the database
    if path is None and data is None:
        raise _not_kept(record, f"the file {record.name} is not kept")
    media_type = MEDIA_TYPES.get(record.type, "application/octet-stream")
    disposition = "inline" if record.type == "pdf" else "attachment"
    headers = {"X-Content-Type-Options": "nosniff", "Content-Security-Policy": "sandbox"}
    if path:
        return FileResponse(
            path, media_type=media_type, filename=record.name, content_disposition_type=disposition, headers=headers
        )
    headers["Content-Disposition"] = f"{disposition}; filename*=utf-8''{quote(record.name)}"
    return Response(data, media_type=media_type, headers=headers)


async def _writable(services: Services, record: DocumentRecord, reader: Reader, verb: str) -> None:
    """403 unless the reader may write the document's collection."""
    collection = await services.knowledge.collections.collection(record.collection)
    if collection is None or not may_write(reader, collection):
        log.warning("user %s refused: %s of %s in a collection they may not write", reader.user_id, verb, record.id)
        raise HTTPException(403, f"You may read {record.name} but not {verb} it: its collection is read-only")


@router.patch("/{doc_id}", response_model=DocumentOut, responses=responses(403, 404, 409, 422))
async def move_document(doc_id: str, body: DocumentMove, services: ServicesDep, principal: PrincipalDep) -> DocumentOut:
    """File a document in another collection (you must be allowed to write both). Who may read it changes at
    once: a reader who loses it no longer sees its name or passages in their threads."""
    record = await _existing(services, doc_id, principal)
    if (reader := await reader_of(services, principal)) is None:
        raise HTTPException(
            422, "collections need accounts (RAG_AUTH=local): with RAG_AUTH=off there is none to move to"
        )
    await _writable(services, record, reader, "move")
    target = await writable_collection(services, principal, body.collection_id)
    if target != record.collection:
        try:
            moved = await services.knowledge.collections.move(record.id, record.collection, target)
        except DocumentNameTaken:
            raise HTTPException(
                409, f"That collection already holds a document named {record.name!r}: delete one of them first"
            ) from None
        if not moved:
            raise HTTPException(409, f"{record.name} or its collections changed meanwhile: reload and try again")
        log.info("user %s moved document %s to collection %s", reader.user_id, record.id, target)
    return _out(await _existing(services, doc_id, principal))


@router.delete("/{doc_id}", status_code=204, responses=responses(403, 404))
async def delete_document(doc_id: str, services: ServicesDep, principal: PrincipalDep) -> None:
    """Remove a document from every index (you must be allowed to write its collection)."""
    record = await _existing(services, doc_id, principal)
    if (reader := await reader_of(services, principal)) is not None:
        await _writable(services, record, reader, "remove")
    await services.knowledge.delete(doc_id)
