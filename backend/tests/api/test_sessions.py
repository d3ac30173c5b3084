"""Your sessions: listed with the current one flagged, each can be signed out, another user's is a 404."""

from collections.abc import AsyncIterator
from datetime import UTC, datetime, timedelta

import pytest
from asgi_lifespan import LifespanManager
from fastapi import FastAPI

from backend.contract.auth import SESSION_COOKIE
from backend.main import create_app
from backend.tests.api.auth_helpers import PASSWORD, Person, client_of, sign_in
from backend.tests.api.test_auth import clock_ahead
from backend.tests.conftest import fake_settings


@pytest.fixture
async def app(tmp_path) -> AsyncIterator[FastAPI]:
    application = create_app(fake_settings(tmp_path / "data", auth="local"))
    async with LifespanManager(application):
        yield application


@pytest.fixture
async def admin(app) -> AsyncIterator[Person]:
    async with client_of(app) as c:
        assert (await c.post("/api/auth/setup", json={"email": "ann@team.org", "password": PASSWORD})).is_success
        yield await sign_in(c, "ann@team.org")


async def test_your_sessions_are_listed_with_the_current_one_flagged_and_no_token(app, admin):
    async with client_of(app) as other:
        await sign_in(other, "ann@team.org")
        listed = (await admin.client.get("/api/me/sessions")).json()
    assert len(listed) == 3 and sorted(s["current"] for s in listed) == [False, False, True]  # setup, other, this
    token = admin.client.cookies[SESSION_COOKIE]
    assert all(token not in s["id"] and len(s["id"]) == 16 for s in listed)
    assert set(listed[0]) == {"id", "created_at", "last_seen_at", "expires_at", "current"}


async def test_ending_a_session_signs_its_cookie_out_and_leaves_yours(app, admin):
    async with client_of(app) as other:
        await sign_in(other, "ann@team.org")
        theirs = next(s["id"] for s in (await other.get("/api/me/sessions")).json() if s["current"])
        ended = await admin.client.delete(f"/api/me/sessions/{theirs}", headers=admin.headers())
        assert ended.status_code == 204
        assert (await other.get("/api/me")).status_code == 401
    assert (await admin.client.get("/api/me")).status_code == 200
    left = (await admin.client.get("/api/me/sessions")).json()
    assert theirs not in [s["id"] for s in left] and [s["current"] for s in left].count(True) == 1
    again = await admin.client.delete(f"/api/me/sessions/{theirs}", headers=admin.headers())
    assert again.status_code == 404


async def test_another_users_session_is_a_404_and_stays_signed_in(app, admin):
    made = await admin.client.post(
        "/api/users",
        json={"email": "bo@team.org", "display_name": "Bo", "password": PASSWORD, "role": "user"},
        headers=admin.headers(),
    )
    assert made.status_code == 201, made.text
    async with client_of(app) as c:
        bo = await sign_in(c, "bo@team.org")
        bos = (await bo.client.get("/api/me/sessions")).json()[0]["id"]
        refused = await admin.client.delete(f"/api/me/sessions/{bos}", headers=admin.headers())
        assert refused.status_code == 404 and bos in refused.json()["detail"]
        assert (await admin.client.delete("/api/me/sessions/unknown", headers=admin.headers())).status_code == 404
        assert (await bo.client.get("/api/me")).status_code == 200


async def test_a_request_that_slides_the_session_sends_its_cookie_again_to_live_from_then(app, admin, monkeypatch):
    life = app.state.settings.session_hours * 3600
    token = admin.client.cookies[SESSION_COOKIE]
    clock_ahead(monkeypatch, minutes=0.5)  # within a minute of sign-in the session's row is not written: no cookie
    quiet = await admin.client.get("/api/me")
    assert quiet.status_code == 200 and "set-cookie" not in quiet.headers
    later = datetime.now(UTC) + timedelta(seconds=life - 600)  # ten minutes before the sign-in's cookie would go
    clock_ahead(monkeypatch, minutes=(life - 600) / 60)
    slid = await admin.client.get("/api/auth/status")
    assert slid.json()["csrf_token"] == admin.csrf  # the same session, so the same CSRF token
    cookie = slid.headers["set-cookie"]
    assert cookie.startswith(f"{SESSION_COOKIE}={token};"), cookie
    assert {f"Max-Age={int(life)}", "HttpOnly", "SameSite=lax", "Path=/"} <= {p.strip() for p in cookie.split(";")}
    current = next(s for s in (await admin.client.get("/api/me/sessions")).json() if s["current"])
    expires = datetime.fromisoformat(current["expires_at"])  # the row and the cookie now end together
    assert abs((expires - later - timedelta(seconds=life)).total_seconds()) < 60
    assert (await admin.client.post("/api/keys", json={"name": "k"}, headers=admin.headers())).status_code == 201
    clock_ahead(monkeypatch, minutes=(life - 600) / 60 + 2)  # the next slide: signing out clears the cookie, only
    out = await admin.client.post("/api/auth/logout", headers=admin.headers())
    (cleared,) = out.headers.get_list("set-cookie")
    assert out.status_code == 204 and "Max-Age=0" in cleared
