"""GET /api/me and your sessions (GET /api/me/sessions, DELETE /api/me/sessions/{id}); for admins POST/GET
/api/users and DELETE /api/users/{id} (with their threads, keys and personal collection)."""

import logging

from fastapi import APIRouter, HTTPException, Request

from backend.accounts.store import SESSION_ID_CHARS, EmailTaken, LastAdmin
from backend.accounts.tokens import digest
from backend.api.auth import user_out
from backend.api.deps import ServicesDep
from backend.api.errors import responses
from backend.api.security import AdminDep, PrincipalDep, UserDep, accounts_of
from backend.api.threads import remove_thread
from backend.clock import now
from backend.contract.auth import NewUser, SessionOut, UserOut
from backend.contract.text import shown

log = logging.getLogger(__name__)
router = APIRouter(prefix="/api", tags=["users"])
LAST_ADMIN = (
    "This is the only admin left, and an installation keeps at least one: create another admin first "
    '(POST /api/users with role "admin", or python -m backend.cli users create-admin)'
)


@router.get("/me", response_model=UserOut, responses=responses(401, 404))
async def me(user: UserDep) -> UserOut:
    """The signed-in account."""
    return user_out(user)


@router.get("/me/sessions", response_model=list[SessionOut], responses=responses(401, 404))
async def my_sessions(request: Request, user: UserDep, principal: PrincipalDep) -> list[SessionOut]:
    """Your signed-in sessions that have not expired, most recently used first; `current` marks this one."""
    current = digest(principal.session)[:SESSION_ID_CHARS] if principal.session else None
    sessions = await accounts_of(request).store.sessions(user.id, now())
    return [SessionOut(**vars(s), current=s.id == current) for s in sessions]


@router.delete("/me/sessions/{session_id}", status_code=204, responses=responses(401, 403, 404))
async def end_session(session_id: str, request: Request, user: UserDep) -> None:
    """Sign one of your sessions out (this one too, if you name it): its cookie stops working at once."""
    if not await accounts_of(request).store.delete_user_session(user.id, session_id):
        raise HTTPException(404, f"session {shown(session_id)} does not exist; GET /api/me/sessions lists yours")
    log.info("user %s ended session %s", user.id, session_id)


@router.post("/users", response_model=UserOut, status_code=201, responses=responses(401, 403, 404, 409, 422))
async def create_user(body: NewUser, request: Request, admin: AdminDep) -> UserOut:
    """Create an account (admins only); its owner signs in with the e-mail and password given here."""
    try:
        user = await accounts_of(request).create_user(
            body.email.strip(), body.display_name.strip(), body.password, body.role
        )
    except EmailTaken:
        raise HTTPException(409, f"An account with the e-mail {body.email!r} exists already") from None
    log.info("admin %s created user %s (%s)", admin.id, user.id, user.role)
    return user_out(user)


@router.get("/users", response_model=list[UserOut], responses=responses(401, 403, 404))
async def list_users(request: Request, admin: AdminDep) -> list[UserOut]:
    """Every account, oldest first (admins only)."""
    return [user_out(u) for u in await accounts_of(request).store.users()]


@router.delete("/users/{user_id}", status_code=204, responses=responses(401, 403, 404, 409))
async def delete_user(user_id: str, request: Request, services: ServicesDep, admin: AdminDep) -> None:
    """Remove an account with its sessions, API keys, threads and personal collection with its documents (admins
    only; not your own account, nor the last admin)."""
    store = accounts_of(request).store
    if user_id == admin.id:
        raise HTTPException(409, "You cannot delete your own account; another admin can")
    if await store.user(user_id) is None:
        raise HTTPException(404, f"user {shown(user_id)} does not exist; GET /api/users lists the accounts")
    try:
        await store.delete_user(user_id)  # signed out everywhere before the threads go
    except LastAdmin:  # checked in the delete's transaction, so two admins deleting each other at once leave one
        raise HTTPException(409, LAST_ADMIN) from None
    for run in [r for r in services.runner.live.values() if not r.finished]:
        if await services.conversations.owner_of(run.thread_id) == user_id:
            await services.runner.cancel(run)  # their answers in progress stop before their threads go
    for thread_id in await services.conversations.owned(user_id):
        await remove_thread(services, thread_id)
    for doc_id in await services.knowledge.collections.drop_personal(user_id):  # readable by nobody from here on
        await services.knowledge.delete(doc_id)
    log.info("admin %s deleted user %s with their threads, keys and personal documents", admin.id, user_id)
