"""GET /api/auth/status, POST /api/auth/setup (first admin), /api/auth/login and /api/auth/logout; joining by an
admin's invitation (GET /api/auth/invitations/{token}, POST /api/auth/accept) or, for listed e-mail domains, by
signing up (POST /api/auth/signup)."""

import logging
import math

from fastapi import APIRouter, Depends, HTTPException, Request, Response

from backend.accounts.service import Accounts, TooManyAttempts
from backend.accounts.store import EmailTaken, InvitationInvalid, NotFirstUser, User
from backend.accounts.tokens import csrf_token
from backend.api.deps import Services, ServicesDep
from backend.api.errors import responses
from backend.api.security import Principal, PrincipalDep, accounts_of, authenticated, identify
from backend.api.session_cookie import set_session_cookie
from backend.contract.auth import (
    SESSION_COOKIE,
    AcceptRequest,
    AuthStatus,
    InvitationInfo,
    LoginRequest,
    SetupRequest,
    SignedIn,
    UserOut,
)
from backend.memory.conversations import LOCAL_OWNER

log = logging.getLogger(__name__)
router = APIRouter(prefix="/api/auth", tags=["auth"])
WRONG = "Wrong e-mail or password"


def user_out(user: User) -> UserOut:
    """An account as the API shows it."""
    return UserOut(
        id=user.id, email=user.email, display_name=user.display_name, role=user.role, created_at=user.created_at
    )


def _accounts_on(request: Request) -> Accounts:
    if request.app.state.settings.auth == "off":
        raise HTTPException(404, "Accounts are off (RAG_AUTH=off): there is nothing to set up or sign in to")
    return accounts_of(request)


def start_session(request: Request, response: Response, user: User, token: str) -> SignedIn:
    set_session_cookie(request, response, token)
    return SignedIn(user=user_out(user), csrf_token=csrf_token(token))


async def adopt_local_threads(services: Services, admin: User) -> None:
    """Threads made before accounts existed become the first admin's; documents filed in no collection (from before
    accounts, or the CLI) move into the team collection the first admin owns."""
    if moved := await services.conversations.adopt(LOCAL_OWNER, admin.id):
        log.info("%d thread(s) from before accounts now belong to the first admin %s", moved, admin.id)
    if filed := await services.knowledge.collections.adopt_unfiled(admin.id):
        log.info("%d document(s) filed in no collection moved to the team collection of %s", filed, admin.id)


@router.get("/status", response_model=AuthStatus)
async def status(request: Request, response: Response) -> AuthStatus:
    """How this server signs people in, whether the first admin must still be created, and who is asking (a person
    the trusted proxy header names gets their session here)."""
    if request.app.state.settings.auth == "off":
        return AuthStatus(mode="off", setup_needed=False)
    sso = getattr(request.app.state, "sso", None)
    accounts = accounts_of(request)
    try:
        principal = await identify(request)
    except HTTPException:  # an ended session or a revoked key: simply not signed in
        principal = None
    user = principal.user if principal else None
    if principal and principal.by_proxy and user:
        signed = await accounts.open_session(user)
        start_session(request, response, user, signed.token)
        principal = Principal(user, signed.token)
    csrf = csrf_token(principal.session) if principal and principal.session else None
    setup_needed = await accounts.store.count_users() == 0
    return AuthStatus(
        mode="local",
        setup_needed=setup_needed,
        user=user and user_out(user),
        csrf_token=csrf,
        signup=bool(request.app.state.settings.signup_domains),
        sso=sso.name if sso else None,
    )


@router.post("/setup", response_model=SignedIn, status_code=201, responses=responses(404, 409, 422))
async def setup(body: SetupRequest, request: Request, response: Response, services: ServicesDep) -> SignedIn:
    """Create the first account, an admin, and sign it in; only while no account exists."""
    accounts = _accounts_on(request)
    try:
        admin = await accounts.create_user(
            body.email.strip(), body.display_name.strip(), body.password, "admin", only_if_first=True
        )
    except NotFirstUser:
        log.warning("first-run setup refused: an account exists")
        raise HTTPException(409, "Setup is done: an admin exists. Sign in, or ask an admin for an account") from None
    log.info("first admin %s created", admin.id)
    await adopt_local_threads(services, admin)
    signed = await accounts.sign_in(body.email.strip(), body.password, request.client.host if request.client else "")
    assert signed is not None  # the account was just created with this password
    return start_session(request, response, signed.user, signed.token)


@router.post("/login", response_model=SignedIn, responses=responses(401, 404, 422, 429))
async def login(body: LoginRequest, request: Request, response: Response) -> SignedIn:
    """Sign in with e-mail and password: an HttpOnly session cookie, and the CSRF token for writes."""
    accounts = _accounts_on(request)
    address = request.client.host if request.client else ""
    try:
        signed = await accounts.sign_in(body.email.strip(), body.password, address)
    except TooManyAttempts as exc:
        wait = math.ceil(exc.seconds)
        detail = f"Too many failed sign-ins for this e-mail from your address; try again in {wait} s"
        raise HTTPException(429, detail, headers={"Retry-After": str(wait)}) from None
    if signed is None:
        raise HTTPException(401, WRONG)
    return start_session(request, response, signed.user, signed.token)


INVALID_INVITATION = (
    "This invitation is not valid: it expired, was used or revoked, or the link is incomplete; "
    "ask an admin for a new one"
)


@router.get("/invitations/{token}", response_model=InvitationInfo, responses=responses(404))
async def invitation(token: str, request: Request) -> InvitationInfo:
    """What an invitation link creates, while it can be used (404 otherwise, the same for every reason)."""
    found = await _accounts_on(request).invitation(token)
    if found is None:
        raise HTTPException(404, INVALID_INVITATION)
    return InvitationInfo(email=found.email, role=found.role, expires_at=found.expires_at)


@router.post("/accept", response_model=SignedIn, status_code=201, responses=responses(404, 409, 422))
async def accept(body: AcceptRequest, request: Request, response: Response) -> SignedIn:
    """Create the invited account and sign it in; the invitation is used up."""
    accounts = _accounts_on(request)
    try:
        signed = await accounts.accept(body.token, body.email.strip(), body.display_name.strip(), body.password)
    except InvitationInvalid:
        log.warning("an invitation was refused (unknown, expired, used, revoked, or for another e-mail)")
        raise HTTPException(404, INVALID_INVITATION + " (an invitation for one e-mail works only with it)") from None
    except EmailTaken:
        raise HTTPException(409, "An account with this e-mail exists already: sign in instead") from None
    return start_session(request, response, signed.user, signed.token)


@router.post("/signup", response_model=SignedIn, status_code=201, responses=responses(403, 404, 409, 422, 429))
async def signup(body: SetupRequest, request: Request, response: Response) -> SignedIn:
    """Create your own account, when the admin allows sign-up for your e-mail's domain (RAG_SIGNUP_DOMAINS)."""
    accounts = _accounts_on(request)
    email, address = body.email.strip(), request.client.host if request.client else ""
    if email.rsplit("@", 1)[-1].lower() not in request.app.state.settings.signup_domains:
        log.warning("sign-up refused for %r from %s: domain not in RAG_SIGNUP_DOMAINS", email, address)
        raise HTTPException(403, "Sign-up is not open for this e-mail address: ask an admin for an invitation")
    if wait := accounts.limiter.wait_seconds(address, "sign-up"):
        raise HTTPException(429, f"Too many sign-ups from your address; try again in {math.ceil(wait)} s")
    if await accounts.store.count_users() == 0:
        raise HTTPException(409, "No admin exists yet: the first account is made by the first-run setup")
    accounts.limiter.failed(address, "sign-up")  # every sign-up counts: an address cannot make accounts in bulk
    try:
        user = await accounts.create_user(email, body.display_name.strip(), body.password, "user")
    except EmailTaken:
        raise HTTPException(409, "An account with this e-mail exists already: sign in instead") from None
    log.info("user %s signed up from %s", user.id, address)
    return start_session(request, response, user, (await accounts.open_session(user)).token)


@router.post("/logout", status_code=204, responses=responses(401, 403), dependencies=[Depends(authenticated)])
async def logout(request: Request, response: Response, principal: PrincipalDep) -> None:
    """End this session (its cookie is cleared; API keys are revoked on their own route)."""
    if principal.session:
        await accounts_of(request).sign_out(principal.session)
    response.delete_cookie(SESSION_COOKIE, path="/")
