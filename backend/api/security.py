"""Who is asking: the Principal of a request, from the session cookie or a personal API key (RAG_AUTH=local).

With RAG_AUTH=off every request is the one local person. With RAG_AUTH=local every route but the public ones
(health, auth status, setup, sign-in) depends on `authenticated`: a bearer API key, or the session cookie plus the
CSRF header on writes. Behind an authenticating proxy (RAG_TRUSTED_HEADER from RAG_TRUSTED_PROXIES) the header names
the person; reads need nothing more, and GET /api/auth/status opens their session so that writes carry a CSRF token
as everywhere else (a cross-site form sent through the proxy would carry the header, never the token). Failures
are a 401 (403 for a missing CSRF token) that says what to send, and are logged.
"""

import logging
import re
from dataclasses import dataclass
from typing import Annotated

from fastapi import Depends, HTTPException, Request

from backend.accounts.service import Accounts
from backend.accounts.store import User
from backend.accounts.tokens import KEY_PREFIX, csrf_token, same
from backend.api.errors import checks_credentials
from backend.contract.auth import CSRF_HEADER, EMAIL_PATTERN, SESSION_COOKIE
from backend.memory.conversations import LOCAL_OWNER

log = logging.getLogger(__name__)
SAFE_METHODS = {"GET", "HEAD", "OPTIONS"}
READ_ONLY_POSTS = {"/api/search"}  # a POST that reads: a read-only key may search
SIGN_IN = "sign in (POST /api/auth/login) or send Authorization: Bearer <your API key>"


@dataclass(frozen=True)
class Principal:
    """The person a request acts for: a user (RAG_AUTH=local) or the one local person (off)."""

    user: User | None
    session: str | None = None  # the session token, when the cookie authenticated the request
    by_proxy: bool = False  # RAG_TRUSTED_HEADER named the user and no session of theirs came with the request
    read_only: bool = False  # a read-only API key: GET requests and searches only

    @property
    def owner(self) -> str:
        """The owner key of what this person creates (threads)."""
        return self.user.id if self.user else LOCAL_OWNER

    @property
    def is_admin(self) -> bool:
        """Whether this person may manage accounts (the local person with auth off may not: there are none)."""
        return self.user is not None and self.user.role == "admin"


def accounts_of(request: Request) -> Accounts:
    """The accounts service the lifespan opened."""
    return request.app.state.services.accounts


def _refuse(request: Request, status: int, reason: str, detail: str) -> HTTPException:
    client = request.client.host if request.client else "?"
    log.warning("refused %s %s from %s: %s", request.method, request.url.path, client, reason)
    headers = {"WWW-Authenticate": "Bearer"} if status == 401 else None
    return HTTPException(status, detail, headers=headers)


async def identify(request: Request) -> Principal | None:
    """The principal the request's credentials name, or None when it has none; HTTPException for bad ones."""
    accounts = accounts_of(request)
    scheme, _, token = request.headers.get("authorization", "").partition(" ")
    if scheme.lower() == "bearer":
        token = token.strip()
        found = await accounts.key_owner(token) if token.startswith(KEY_PREFIX) else None
        if found is None:
            detail = f"The API key is unknown, revoked or expired; {SIGN_IN}"
            raise _refuse(request, 401, "unknown, revoked or expired API key", detail)
        return Principal(found[0], read_only=found[1])
    proxied = await proxy_user(request, accounts)
    session = request.cookies.get(SESSION_COOKIE)
    if not session:
        return proxied and Principal(proxied, by_proxy=True)
    user = await accounts.session_user(session)
    if proxied is not None and (user is None or user.id != proxied.id):  # the proxy decides who this is
        return Principal(proxied, by_proxy=True)
    if user is None:
        raise _refuse(request, 401, "expired or unknown session", f"Your session has ended; {SIGN_IN}")
    return Principal(user, session)


async def proxy_user(request: Request, accounts: Accounts) -> User | None:
    """The account RAG_TRUSTED_HEADER names, made at its first request; None without the header or when the
    request did not come from RAG_TRUSTED_PROXIES (then the header is ignored and that is logged)."""
    settings = request.app.state.settings
    if not settings.trusted_header or not (email := request.headers.get(settings.trusted_header, "").strip()):
        return None
    client = request.client.host if request.client else ""
    if not settings.trusted_proxy(client):
        log.warning("ignored %s from %s: not one of RAG_TRUSTED_PROXIES", settings.trusted_header, client)
        return None
    if not re.fullmatch(EMAIL_PATTERN, email) or len(email) > 254:
        raise _refuse(request, 401, f"{settings.trusted_header} is not an e-mail", "The proxy sent no valid e-mail")
    user, made = await accounts.vouched_account(email, "", first_is_admin=True)
    if not made:
        return user
    log.info("%s account %s made for %s, named by %s", user.role, user.id, email, settings.trusted_header)
    return user


@checks_credentials
async def authenticated(request: Request) -> Principal:
    """FastAPI dependency: the signed-in principal (the local person when RAG_AUTH=off), or 401/403."""
    if request.app.state.settings.auth == "off":
        return Principal(None)
    principal = await identify(request)
    if principal is None:
        raise _refuse(request, 401, "no credentials", f"Not signed in: {SIGN_IN}")
    if principal.read_only and request.method not in SAFE_METHODS and request.url.path not in READ_ONLY_POSTS:
        detail = "This API key is read-only: it may read and search, not ask, upload or change anything"
        raise _refuse(request, 403, "a write with a read-only API key", detail)
    if principal.by_proxy and request.method not in SAFE_METHODS:
        detail = f"Load Ragline first: GET /api/auth/status starts your session and gives the {CSRF_HEADER} for writes"
        raise _refuse(request, 403, "a write named by the proxy header without its session", detail)
    if principal.session and request.method not in SAFE_METHODS:
        given = request.headers.get(CSRF_HEADER, "")
        if not given or not same(given, csrf_token(principal.session)):
            detail = f"Missing or wrong {CSRF_HEADER} header: send the csrf_token GET /api/auth/status returns"
            raise _refuse(request, 403, "CSRF token missing or wrong", detail)
    return principal


async def signed_in_user(principal: Annotated[Principal, Depends(authenticated)]) -> User:
    """FastAPI dependency: a real account (404 with RAG_AUTH=off, where there are none)."""
    if principal.user is None:
        raise HTTPException(404, "Accounts are off (RAG_AUTH=off): there is no user, key or account to manage")
    return principal.user


async def admin(user: Annotated[User, Depends(signed_in_user)], request: Request) -> User:
    """FastAPI dependency: an admin account, else 403."""
    if user.role != "admin":
        what = next((w for prefix, w in ADMINS_MANAGE.items() if request.url.path.startswith(prefix)), "accounts")
        raise _refuse(request, 403, f"user {user.id} is not an admin", f"Only an admin may manage {what}")
    return user


# what an admin-only route manages, by path (the rest manage accounts: users, invitations)
ADMINS_MANAGE = {"/api/collections": "collections (create, rename, share, delete)", "/api/groups": "groups"}


PrincipalDep = Annotated[Principal, Depends(authenticated)]
UserDep = Annotated[User, Depends(signed_in_user)]
AdminDep = Annotated[User, Depends(admin)]
