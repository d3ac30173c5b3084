"""GET /api/collections (yours to read) and POST /api/collections (admins: a team collection); and what every route
uses to ask rag/collections.py who may read or write: `readable_documents`, `writable_collection`."""

import logging

from fastapi import APIRouter, HTTPException

from backend.api.deps import Services, ServicesDep
from backend.api.errors import responses
from backend.api.security import AdminDep, Principal, UserDep
from backend.contract.api import CollectionOut, NewCollection
from backend.contract.types import PublicSource, withheld
from backend.rag.collections import CollectionRecord, NameTaken, Reader, may_write

log = logging.getLogger(__name__)
router = APIRouter(prefix="/api/collections", tags=["collections"])


def reader_of(principal: Principal) -> Reader | None:
    """The principal as collections see it; None with RAG_AUTH=off (the one local person reads everything)."""
    if principal.user is None:
        return None
    return Reader(principal.user.id, principal.is_admin)


async def readable_documents(services: Services, principal: Principal) -> frozenset[str] | None:
    """Ids of the documents the principal may read (None: every document, RAG_AUTH=off)."""
    reader = reader_of(principal)
    return None if reader is None else await services.knowledge.collections.readable_documents(reader)


def missing_collection(collection_id: str) -> HTTPException:
    """The 404 of a collection that does not exist, or that the asker may not read: the same words."""
    return HTTPException(404, f"collection {collection_id!r} does not exist; GET /api/collections lists yours")


async def writable_collection(services: Services, principal: Principal, collection_id: str | None) -> str:
    """The id of the collection an upload goes to: the one named (404 unless readable, 403 unless writable) or the
    uploader's personal one; "" (no collection) with RAG_AUTH=off."""
    reader = reader_of(principal)
    if reader is None:
        if collection_id:
            raise HTTPException(422, "collections need accounts (RAG_AUTH=local); upload without `collection`")
        return ""
    store = services.knowledge.collections
    if not collection_id:
        return (await store.personal(reader.user_id)).id
    record = await store.collection(collection_id)
    if record is None or record.id not in {c.id for c in await store.visible(reader)}:
        log.warning("user %s refused: upload into unreadable collection %r", reader.user_id, collection_id)
        raise missing_collection(collection_id)
    if not may_write(reader, record):
        log.warning("user %s refused: upload into read-only collection %s", reader.user_id, record.id)
        raise HTTPException(403, f"You may read the collection {record.name!r} but not add documents to it")
    return record.id


def visible_sources(sources: list[PublicSource], readable: frozenset[str] | None) -> list[PublicSource]:
    """Citations as this reader may see them: one to a document they may not read is withheld."""
    if readable is None:
        return sources
    return [s if s.get("doc_id") in readable else withheld(s) for s in sources]


def _out(record: CollectionRecord, reader: Reader) -> CollectionOut:
    return CollectionOut(
        id=record.id,
        name=record.name,
        kind=record.kind,
        users_write=record.users_write,
        can_write=may_write(reader, record),
        created_at=record.created_at,
    )


@router.get("", response_model=list[CollectionOut], responses=responses(401, 404))
async def list_collections(services: ServicesDep, user: UserDep) -> list[CollectionOut]:
    """The collections you may read, your personal one first (made now if it is new), with whether you may write."""
    reader = Reader(user.id, user.role == "admin")
    await services.knowledge.collections.personal(user.id)
    return [_out(c, reader) for c in await services.knowledge.collections.visible(reader)]


@router.post("", response_model=CollectionOut, status_code=201, responses=responses(401, 403, 404, 409, 422))
async def create_collection(body: NewCollection, services: ServicesDep, admin: AdminDep) -> CollectionOut:
    """Create a team collection every signed-in user reads (admins only); `users_write` lets users add to it."""
    name = body.name.strip()
    if not name:
        raise HTTPException(422, "name is blank: give the collection a name")
    try:
        record = await services.knowledge.collections.create_team(name, admin.id, body.users_write)
    except NameTaken:
        raise HTTPException(409, f"A team collection named {name!r} exists already") from None
    log.info("admin %s created team collection %s (%s)", admin.id, record.id, name)
    return _out(record, Reader(admin.id, True))
