"""Admins: POST/GET /api/groups, PATCH/DELETE /api/groups/{id} and PUT/DELETE /api/groups/{id}/members/{user_id};
group collections are shared with groups (api/collections.py)."""

import logging
import uuid

from fastapi import APIRouter, HTTPException, Request

from backend.accounts.store import Group, GroupTaken
from backend.api.deps import ServicesDep
from backend.api.errors import responses
from backend.api.security import AdminDep, accounts_of
from backend.clock import now
from backend.contract.auth import GroupChange, GroupOut, NewGroup
from backend.contract.text import shown

log = logging.getLogger(__name__)
router = APIRouter(prefix="/api/groups", tags=["groups"])


def _out(group: Group) -> GroupOut:
    return GroupOut(id=group.id, name=group.name, members=list(group.members), created_at=group.created_at)


@router.post("", response_model=GroupOut, status_code=201, responses=responses(401, 403, 404, 409, 422))
async def create_group(body: NewGroup, request: Request, admin: AdminDep) -> GroupOut:
    """Create a group (admins only)."""
    name = body.name.strip()
    if not name:
        raise HTTPException(422, "name is blank: give the group a name")
    try:
        group = await accounts_of(request).store.create_group(Group(str(uuid.uuid4()), name, now()))
    except GroupTaken:
        raise HTTPException(409, f"A group named {name!r} exists already") from None
    log.info("admin %s created group %s (%s)", admin.id, group.id, name)
    return _out(group)


@router.get("", response_model=list[GroupOut], responses=responses(401, 403, 404))
async def list_groups(request: Request, admin: AdminDep) -> list[GroupOut]:
    """Every group with its members' ids, by name (admins only)."""
    return [_out(g) for g in await accounts_of(request).store.groups()]


def _missing(group_id: str) -> HTTPException:
    """The 404 of a group that does not exist."""
    return HTTPException(404, f"group {shown(group_id)} does not exist; GET /api/groups lists the groups")


@router.patch("/{group_id}", response_model=GroupOut, responses=responses(401, 403, 404, 409, 422))
async def rename_group(group_id: str, body: GroupChange, request: Request, admin: AdminDep) -> GroupOut:
    """Give a group another name (admins only)."""
    store, name = accounts_of(request).store, body.name.strip()
    try:
        if not await store.rename_group(group_id, name):
            raise _missing(group_id)
    except GroupTaken:
        raise HTTPException(409, f"A group named {name!r} exists already") from None
    log.info("admin %s renamed group %s (%s)", admin.id, group_id, name)
    if (group := next((g for g in await store.groups() if g.id == group_id), None)) is None:
        raise _missing(group_id)  # deleted meanwhile
    return _out(group)


@router.delete("/{group_id}", status_code=204, responses=responses(401, 403, 404))
async def delete_group(group_id: str, request: Request, services: ServicesDep, admin: AdminDep) -> None:
    """Remove a group (admins only): its members leave it, and the collections shared with it are no longer
    shared with them through it."""
    store = accounts_of(request).store
    if group_id not in {g.id for g in await store.groups()}:
        raise _missing(group_id)
    await services.knowledge.collections.unshare_group(group_id)  # first: a failure leaves the group, not a share
    await store.delete_group(group_id)
    await services.knowledge.collections.unshare_group(group_id)  # and a share made meanwhile goes too
    log.info("admin %s deleted group %s", admin.id, group_id)


async def _member(request: Request, group_id: str, user_id: str, member: bool) -> None:
    if not await accounts_of(request).store.set_member(group_id, user_id, member):
        raise HTTPException(
            404, f"group {shown(group_id)} or user {shown(user_id)} does not exist; GET /api/groups, /api/users"
        )


@router.put("/{group_id}/members/{user_id}", status_code=204, responses=responses(401, 403, 404))
async def add_member(group_id: str, user_id: str, request: Request, admin: AdminDep) -> None:
    """Add a user to a group (admins only; again is a no-op)."""
    await _member(request, group_id, user_id, True)
    log.info("admin %s added user %s to group %s", admin.id, user_id, group_id)


@router.delete("/{group_id}/members/{user_id}", status_code=204, responses=responses(401, 403, 404))
async def remove_member(group_id: str, user_id: str, request: Request, admin: AdminDep) -> None:
    """Remove a user from a group (admins only)."""
    await _member(request, group_id, user_id, False)
    log.info("admin %s removed user %s from group %s", admin.id, user_id, group_id)
