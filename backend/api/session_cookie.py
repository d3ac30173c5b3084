"""The session cookie: set at sign-in, and sent again by RefreshSessionCookie whenever a request slides its session,
so the browser keeps it RAG_SESSION_HOURS after last use as the session lives (before, that long after sign-in)."""

from fastapi import Request, Response
from starlette.datastructures import MutableHeaders
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from backend.accounts.service import slid_sessions
from backend.contract.auth import SESSION_COOKIE


def set_session_cookie(request: Request, response: Response, token: str) -> None:
    """The HttpOnly, SameSite=Lax session cookie, living RAG_SESSION_HOURS (Secure over https)."""
    response.set_cookie(
        SESSION_COOKIE,
        token,
        max_age=int(request.app.state.settings.session_hours * 3600),
        httponly=True,
        samesite="lax",
        secure=request.url.scheme == "https",
        path="/",
    )


class RefreshSessionCookie:
    """ASGI middleware: a response to a request that slid its session (at most once a minute, as the session's row is
    written) carries the cookie again with a fresh Max-Age, unless the route set or cleared it (sign-in, sign-out)."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        slid: list[str] = []  # filled by Accounts.session_user, in whichever task the route runs
        reset = slid_sessions.set(slid)

        async def send_refreshed(message: Message) -> None:
            if message["type"] == "http.response.start" and slid:
                headers = MutableHeaders(scope=message)
                if not any(c.startswith(f"{SESSION_COOKIE}=") for c in headers.getlist("set-cookie")):
                    cookie = Response()
                    set_session_cookie(Request(scope), cookie, slid[-1])
                    headers.append("set-cookie", cookie.headers["set-cookie"])
            await send(message)

        try:
            await self.app(scope, receive, send_refreshed)
        finally:
            slid_sessions.reset(reset)
