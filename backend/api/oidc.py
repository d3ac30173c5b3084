"""GET /api/auth/oidc/login and /api/auth/oidc/callback: single sign-on with an OpenID Connect provider."""

from fastapi import APIRouter, HTTPException, Request
from fastapi.responses import RedirectResponse

from backend.accounts.oidc import PENDING_SECONDS, Pending, SsoProvider, SsoRefused
from backend.api.auth import start_session
from backend.api.errors import responses
from backend.api.security import accounts_of

router = APIRouter(prefix="/api/auth/oidc", tags=["auth"])
PENDING_COOKIE = "ragline_oidc"
COOKIE_PATH = "/api/auth/oidc"


def _provider(request: Request) -> SsoProvider:
    provider = getattr(request.app.state, "sso", None)
    if provider is None:
        raise HTTPException(404, "Single sign-on is not set up here (RAG_OIDC_ISSUER); sign in with a password")
    return provider


@router.get("/login", status_code=302, response_class=RedirectResponse, responses=responses(404, 502))
async def sso_login(request: Request) -> RedirectResponse:
    """Send the browser to the provider to sign in; it comes back to the callback."""
    provider = _provider(request)
    redirect_uri = provider.redirect_url or str(request.url_for("sso_callback"))
    try:
        url, pending = await provider.start(redirect_uri)
    except SsoRefused as exc:
        raise HTTPException(exc.status, exc.message) from None
    response = RedirectResponse(url, status_code=302)
    response.set_cookie(
        PENDING_COOKIE,
        pending.dumps(),
        max_age=PENDING_SECONDS,
        httponly=True,
        samesite="lax",  # sent on the provider's top-level redirect back
        secure=request.url.scheme == "https",
        path=COOKIE_PATH,
    )
    return response


@router.get("/callback", status_code=302, response_class=RedirectResponse, responses=responses(401, 403, 404, 422, 502))
async def sso_callback(request: Request) -> RedirectResponse:
    """Where the provider returns the browser: check its answer, start a session, go to the app."""
    provider = _provider(request)
    accounts = accounts_of(request)
    try:
        user = await provider.finish(
            Pending.loads(request.cookies.get(PENDING_COOKIE)), dict(request.query_params), accounts
        )
    except SsoRefused as exc:
        raise HTTPException(exc.status, exc.message) from None
    signed = await accounts.open_session(user)
    response = RedirectResponse("/", status_code=302)
    start_session(request, response, signed.user, signed.token)
    response.delete_cookie(PENDING_COOKIE, path=COOKIE_PATH)
    return response
