"""Joining a team's Ragline: an admin's invitation link (one account, optionally for one e-mail, expiring,
revocable) or sign-up for the e-mail domains the admin lists."""

from collections.abc import AsyncIterator

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
    application = create_app(fake_settings(tmp_path / "data", auth="local", signup_domains=["@Team.org"]))
    async with LifespanManager(application):
        yield application


@pytest.fixture
async def admin(app) -> AsyncIterator[Person]:
    async with client_of(app) as c:
        assert (await c.post("/api/auth/setup", json={"email": "ann@team.org", "password": PASSWORD})).is_success
        yield await sign_in(c, "ann@team.org")


async def invite(admin: Person, **body) -> dict:
    made = await admin.client.post("/api/invitations", json=body, headers=admin.headers())
    assert made.status_code == 201, made.text
    return made.json()


async def test_an_invitation_makes_one_account_with_its_role_and_is_then_used(app, admin):
    sent = await invite(admin, role="admin")
    assert sent["link"] == f"/sign-in?invite={sent['token']}" and sent["status"] == "open"
    async with client_of(app) as c:
        assert (await c.get(f"/api/auth/invitations/{sent['token']}")).json()["role"] == "admin"
        joined = await c.post(
            "/api/auth/accept", json={"token": sent["token"], "email": "cy@partner.example", "password": PASSWORD}
        )
        assert joined.status_code == 201, joined.text
        assert joined.json()["user"]["role"] == "admin" and f"{SESSION_COOKIE}=" in joined.headers["set-cookie"]
        again = await c.post(
            "/api/auth/accept", json={"token": sent["token"], "email": "dee@partner.example", "password": PASSWORD}
        )
        assert again.status_code == 404 and "ask an admin for a new one" in again.json()["detail"]
        assert (await c.get(f"/api/auth/invitations/{sent['token']}")).status_code == 404
    listed = (await admin.client.get("/api/invitations")).json()
    assert [i["status"] for i in listed] == ["used"] and "token" not in listed[0]


async def test_an_invitation_for_one_email_takes_it_whatever_its_unicode_case_or_composition(app, admin):
    sent = await invite(admin, email="Örjan@team.org")
    async with client_of(app) as c:
        body = {"token": sent["token"], "email": "o\u0308rjan@team.org", "password": PASSWORD}
        joined = await c.post("/api/auth/accept", json=body)
        assert joined.status_code == 201, joined.text
        assert joined.json()["user"]["email"] == "örjan@team.org"  # composed, the case as typed
        assert (await sign_in(c, "ÖRJAN@TEAM.ORG")).user["id"] == joined.json()["user"]["id"]
    again = await admin.client.post("/api/invitations", json={"email": "ÖRJAN@team.org"}, headers=admin.headers())
    assert again.status_code == 409, again.text


async def test_an_invitation_for_one_email_works_only_with_it_and_stays_usable_after_a_wrong_try(app, admin):
    sent = await invite(admin, email="bo@team.org")
    async with client_of(app) as c:
        wrong = await c.post(
            "/api/auth/accept", json={"token": sent["token"], "email": "eve@x.org", "password": PASSWORD}
        )
        assert wrong.status_code == 404
        right = await c.post(
            "/api/auth/accept", json={"token": sent["token"], "email": "BO@team.org", "password": PASSWORD}
        )
        assert right.status_code == 201 and right.json()["user"]["role"] == "user"


async def test_an_invitation_for_an_email_that_has_an_account_is_a_409_and_makes_nothing(app, admin):
    taken = await admin.client.post("/api/invitations", json={"email": "ANN@team.org"}, headers=admin.headers())
    assert taken.status_code == 409 and "already has an account" in taken.json()["detail"]
    assert (await admin.client.get("/api/invitations")).json() == []


async def test_revoked_expired_and_made_up_invitations_all_get_the_same_404(app, admin, monkeypatch):
    revoked = await invite(admin)
    assert (await admin.client.delete(f"/api/invitations/{revoked['id']}", headers=admin.headers())).status_code == 204
    assert (await admin.client.delete(f"/api/invitations/{revoked['id']}", headers=admin.headers())).status_code == 404
    expired = await invite(admin, expires_days=0.01)  # about 15 minutes, the shortest
    clock_ahead(monkeypatch, minutes=15)
    async with client_of(app) as c:
        details = set()
        for token in (revoked["token"], expired["token"], "made-up"):
            answer = await c.get(f"/api/auth/invitations/{token}")
            assert answer.status_code == 404
            details.add(answer.json()["detail"])
        assert len(details) == 1
    statuses = {i["id"]: i["status"] for i in (await admin.client.get("/api/invitations")).json()}
    assert statuses == {revoked["id"]: "revoked", expired["id"]: "expired"}


async def test_only_admins_invite_and_bad_requests_are_422(app, admin):
    await admin.client.post("/api/users", json={"email": "bo@team.org", "password": PASSWORD}, headers=admin.headers())
    async with client_of(app) as c:
        bo = await sign_in(c, "bo@team.org")
        assert (await c.post("/api/invitations", json={}, headers=bo.headers())).status_code == 403
        assert (await c.get("/api/invitations")).status_code == 403
    for body in ({"role": "owner"}, {"expires_days": 31}, {"email": "not-an-email"}, {"extra": 1}):
        assert (await admin.client.post("/api/invitations", json=body, headers=admin.headers())).status_code == 422


async def test_signup_for_a_listed_domain_and_refused_for_others_with_nothing_made(app, admin):
    async with client_of(app) as c:
        assert (await c.get("/api/auth/status")).json()["signup"] is True
        made = await c.post("/api/auth/signup", json={"email": "dee@TEAM.org", "password": PASSWORD})
        assert made.status_code == 201 and made.json()["user"]["role"] == "user"
        taken = await c.post("/api/auth/signup", json={"email": "dee@team.org", "password": PASSWORD})
        assert taken.status_code == 409
        other = await c.post("/api/auth/signup", json={"email": "eve@evil.example", "password": PASSWORD})
        assert other.status_code == 403 and "invitation" in other.json()["detail"]
    emails = {u["email"].lower() for u in (await admin.client.get("/api/users")).json()}
    assert emails == {"ann@team.org", "dee@team.org"}


async def test_signup_before_the_first_admin_exists_is_refused(app):
    async with client_of(app) as c:
        early = await c.post("/api/auth/signup", json={"email": "dee@team.org", "password": PASSWORD})
        assert early.status_code == 409 and "first-run setup" in early.json()["detail"]
        assert (await c.get("/api/auth/status")).json()["setup_needed"] is True


async def test_signup_from_one_address_is_rate_limited(app, admin):
    async with client_of(app) as c:
        answers = [
            (await c.post("/api/auth/signup", json={"email": f"u{n}@team.org", "password": PASSWORD})).status_code
            for n in range(7)
        ]
    assert answers[:5] == [201] * 5 and answers[5:] == [429, 429]
