"""GET /api/collections (yours to read); admins: POST /api/collections (a team or group collection), PATCH and
DELETE /api/collections/{id} (rename, let users write, remove an empty one) and PUT/DELETE
/api/collections/{id}/groups/{group_id} (share a group collection); and what every route uses to ask
rag/collections.py who may read or write: `readable_documents`, `writable_collection`."""

import logging
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from functools import cached_property
from typing import Any

from fastapi import APIRouter, HTTPException, Request
from pydantic import BaseModel

from backend.api.deps import Services, ServicesDep
from backend.api.errors import responses
from backend.api.security import AdminDep, Principal, PrincipalDep, UserDep, accounts_of
from backend.contract.api import CollectionChange, CollectionOut, CollectionShare, NewCollection, ShareRequest
from backend.contract.events import DoneEvent, SourcesEvent, StatusEvent
from backend.contract.text import fold_name, shown
from backend.contract.types import NAME_NOT_AVAILABLE, PublicSource, Scope, Triage, withheld
from backend.rag.collections import PERSONAL, CollectionRecord, NameTaken, Reader, may_write

log = logging.getLogger(__name__)
USERS_WRITE_TEAM_ONLY = "users_write is for team collections: share a group collection with a group to write"
router = APIRouter(prefix="/api/collections", tags=["collections"])


async def reader_of(services: Services, principal: Principal) -> Reader | None:
    """The principal as collections see it, with its groups; None with RAG_AUTH=off (the one local person reads
    everything)."""
    if principal.user is None:
        return None
    groups = await services.accounts.store.user_groups(principal.user.id)
    return Reader(principal.user.id, principal.is_admin, groups)


async def readable_documents(services: Services, principal: Principal) -> frozenset[str] | None:
    """Ids of the documents the principal may read (None: every document, RAG_AUTH=off)."""
    reader = await reader_of(services, principal)
    return None if reader is None else await services.knowledge.collections.readable_documents(reader)


def missing_collection(collection_id: str) -> HTTPException:
    """The 404 of a collection that does not exist, or that the asker may not read: the same words."""
    return HTTPException(404, f"collection {shown(collection_id)} does not exist; GET /api/collections lists yours")


async def writable_collection(services: Services, principal: Principal, collection_id: str | None) -> str:
    """The id of the collection an upload goes to: the one named (404 unless readable, 403 unless writable) or the
    uploader's personal one; "" (no collection) with RAG_AUTH=off."""
    reader = await reader_of(services, principal)
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


@dataclass(frozen=True)
class DocumentNames:
    """The names of the documents a reader may read, and the names to withhold from what one thread recorded: those
    of documents it was given passages of that the reader may no longer read (and no readable document shares)."""

    readable: frozenset[str]
    hidden: frozenset[str]

    def text(self, text: str) -> str:
        """Text a turn recorded ("mentions minutes.md") with each name the reader may no longer read withheld."""
        if not self.hidden or not any(name in text for name in self.hidden):
            return text
        return self._names.sub(lambda m: NAME_NOT_AVAILABLE if m[0] in self.hidden else m[0], text)

    def scope(self, scope: Scope | None) -> Scope | None:
        """A turn's scope with the names withheld as `text` withholds them (None when none is left to show)."""
        if scope is None or not self.hidden:
            return scope
        documents = [name for name in scope["documents"] if name not in self.hidden]
        return Scope(documents=documents, source=scope["source"]) if documents else None

    @cached_property
    def _names(self) -> re.Pattern[str]:
        """The hidden names and the readable ones that contain one, longest first, each as a whole name: "a.md" in
        "data.md" or in "board a.md" is not "a.md"."""
        guarded = {name for name in self.readable if any(hidden in name for hidden in self.hidden)}
        every = sorted(self.hidden | guarded, key=len, reverse=True)
        return re.compile(r"(?<![\w.-])(?:" + "|".join(map(re.escape, every)) + r")(?![\w-])")


async def readable_names(services: Services, readable: frozenset[str]) -> frozenset[str]:
    """The names of the documents a reader may read."""
    return frozenset(await services.knowledge.retriever.scoped(readable).document_names())


async def thread_names(
    services: Services, readable: frozenset[str], thread_id: str, turns: Iterable[Mapping[str, Any]]
) -> DocumentNames:
    """The reader's document names for one thread. Only the names of documents the thread was given passages of
    (its ledger, which also holds passages no answer cited, and its stored turns' sources) are withheld, so a name
    the reader never saw as a document (their own "@salaries.md" that matched nothing) is never told apart from one
    that does not exist."""
    mine = await readable_names(services, readable)
    state = await services.graph.aget_state({"configurable": {"thread_id": thread_id}})
    given = [*state.values.get("ledger", {}).values(), *(s for turn in turns for s in turn["sources"] or [])]
    lost = {s["document"] for s in given if s.get("doc_id") and s["doc_id"] not in readable}
    return DocumentNames(mine, frozenset(lost - mine))


def visible_faq(triage: Triage | None, names: DocumentNames | None) -> Triage | None:
    """A turn's triage with its FAQ answer's documents cut to those the reader may read (names None: all). The FAQ
    named them when the reader could read them; a reloaded, exported or replayed turn does not name them again."""
    faq = (triage or {}).get("faq")
    if triage is None or faq is None or names is None:
        return triage
    return {**triage, "faq": {**faq, "sources": [s for s in faq.get("sources") or [] if s in names.readable]}}


def visible_turn(turn: dict, readable: frozenset[str] | None, names: DocumentNames | None) -> dict:
    """A stored turn as its reader may see it now: citations, FAQ documents, and the names in its step lines and
    route reason ("mentions minutes.md") of documents they may no longer read withheld. Their question and the answer
    they were given stay as they were."""
    sources = visible_sources(turn["sources"] or [], readable)
    if names is None:
        return {**turn, "sources": sources}
    return {
        **turn,
        "sources": sources,
        "triage": visible_faq(turn["triage"], names),
        "steps": [names.text(step) for step in turn["steps"] or []],
        "route_reason": names.text(turn["route_reason"] or ""),
        "scope": names.scope(turn["scope"]),
    }


def visible_event(event: BaseModel, readable: frozenset[str], names: DocumentNames) -> BaseModel:
    """A run's event as its reader may see it now, as `visible_turn` shows a stored turn: citations, FAQ documents
    and the names in status lines and the route reason of documents they may no longer read withheld."""
    if isinstance(event, SourcesEvent):
        return event.model_copy(update={"sources": visible_sources(event.sources, readable)})
    if isinstance(event, StatusEvent):
        detail = names.text(event.detail) if event.detail else event.detail
        return event.model_copy(update={"label": names.text(event.label), "detail": detail})
    if isinstance(event, DoneEvent):
        triage = visible_faq(event.triage, names)
        update = {"triage": triage, "route_reason": names.text(event.route_reason), "scope": names.scope(event.scope)}
        return event.model_copy(update=update)
    return event


def _out(record: CollectionRecord, reader: Reader) -> CollectionOut:
    return CollectionOut(
        id=record.id,
        name=record.name,
        kind=record.kind,
        users_write=record.users_write,
        can_write=may_write(reader, record),
        created_at=record.created_at,
        groups=[CollectionShare(group_id=g, access=a) for g, a in record.groups],
    )


@router.get("", response_model=list[CollectionOut], responses=responses(401, 404))
async def list_collections(services: ServicesDep, principal: PrincipalDep, user: UserDep) -> list[CollectionOut]:
    """The collections you may read, your personal one first (made now if it is new), with whether you may write."""
    reader = await reader_of(services, principal)
    assert reader is not None  # UserDep: accounts are on
    await services.knowledge.collections.personal(user.id)
    return [_out(c, reader) for c in await services.knowledge.collections.visible(reader)]


@router.post("", response_model=CollectionOut, status_code=201, responses=responses(401, 403, 404, 409, 422))
async def create_collection(body: NewCollection, services: ServicesDep, admin: AdminDep) -> CollectionOut:
    """Create a collection (admins only): a team one every signed-in user reads (`users_write` lets users add to
    it), or a group one only the groups it is shared with see (PUT /api/collections/{id}/groups/{group_id})."""
    name = _shared_name(body.name)
    if body.users_write and body.kind != "team":
        raise HTTPException(422, USERS_WRITE_TEAM_ONLY)
    try:
        record = await services.knowledge.collections.create(name, body.kind, admin.id, body.users_write)
    except NameTaken:
        raise HTTPException(409, f"A collection named {name!r} exists already") from None
    log.info("admin %s created %s collection %s (%s)", admin.id, body.kind, record.id, name)
    return _out(record, Reader(admin.id, True))


def _shared_name(name: str) -> str:
    """A team or group collection's name, stripped: not blank, and not the name of everyone's own collection (a team
    "Personal" that everyone reads, listed beside each user's own, invited uploads of private files into it)."""
    name = name.strip()
    if not name:
        raise HTTPException(422, "name is blank: give the collection a name")
    if fold_name(name) == fold_name(PERSONAL):
        raise HTTPException(422, f"{PERSONAL!r} is the name of each user's own collection: choose another name")
    return name


async def _shared_collection(services: Services, collection_id: str) -> CollectionRecord:
    """A team or group collection (a personal one is nobody else's: the same 404 as a missing one)."""
    record = await services.knowledge.collections.collection(collection_id)
    if record is None or record.kind == "personal":
        raise missing_collection(collection_id)
    return record


@router.patch("/{collection_id}", response_model=CollectionOut, responses=responses(401, 403, 404, 409, 422))
async def change_collection(
    collection_id: str, body: CollectionChange, services: ServicesDep, admin: AdminDep
) -> CollectionOut:
    """Rename a team or group collection, or change whether users may upload into a team one (admins only)."""
    record = await _shared_collection(services, collection_id)
    if body.users_write and record.kind != "team":
        raise HTTPException(422, USERS_WRITE_TEAM_ONLY)
    name = _shared_name(body.name) if body.name is not None else record.name
    users_write = record.users_write if body.users_write is None else body.users_write
    try:
        await services.knowledge.collections.change(record.id, name, users_write)
    except NameTaken:
        raise HTTPException(409, f"A collection named {name!r} exists already") from None
    log.info("admin %s changed collection %s (%s, users_write %s)", admin.id, record.id, name, users_write)
    changed = await _shared_collection(services, collection_id)
    return _out(changed, Reader(admin.id, True))


@router.delete("/{collection_id}", status_code=204, responses=responses(401, 403, 404, 409))
async def delete_collection(collection_id: str, services: ServicesDep, admin: AdminDep) -> None:
    """Remove an empty team or group collection with its shares (admins only); one that still holds documents is
    kept, so nothing stored is lost: move them (PATCH /api/documents/{id}) or delete them first."""
    record = await _shared_collection(services, collection_id)
    held = await services.knowledge.collections.delete(record.id)
    if held:
        raise HTTPException(
            409,
            f"The collection {record.name!r} still holds {held} document{'s' if held > 1 else ''}: move them to "
            "another collection or delete them first",
        )
    log.info("admin %s deleted collection %s (%s)", admin.id, record.id, record.name)


async def _group_collection(services: Services, request: Request, collection_id: str, group_id: str) -> None:
    """404 unless both exist; 422 unless the collection is a group collection."""
    record = await _shared_collection(services, collection_id)
    if record.kind != "group":
        raise HTTPException(422, f"{record.name!r} is a team collection, read by everyone: only group ones are shared")
    if group_id not in {g.id for g in await accounts_of(request).store.groups()}:
        raise HTTPException(404, f"group {shown(group_id)} does not exist; GET /api/groups lists the groups")


@router.put("/{collection_id}/groups/{group_id}", status_code=204, responses=responses(401, 403, 404, 422))
async def share_collection(
    collection_id: str, group_id: str, body: ShareRequest, request: Request, services: ServicesDep, admin: AdminDep
) -> None:
    """Share a group collection with a group, for reading or for reading and writing (admins only)."""
    await _group_collection(services, request, collection_id, group_id)
    await services.knowledge.collections.share(collection_id, group_id, body.access)
    log.info("admin %s shared collection %s with group %s (%s)", admin.id, collection_id, group_id, body.access)


@router.delete("/{collection_id}/groups/{group_id}", status_code=204, responses=responses(401, 403, 404, 422))
async def unshare_collection(
    collection_id: str, group_id: str, request: Request, services: ServicesDep, admin: AdminDep
) -> None:
    """Stop sharing a group collection with a group (admins only)."""
    await _group_collection(services, request, collection_id, group_id)
    await services.knowledge.collections.share(collection_id, group_id, None)
    log.info("admin %s stopped sharing collection %s with group %s", admin.id, collection_id, group_id)
