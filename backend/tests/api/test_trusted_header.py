"""Behind an authenticating proxy: RAG_TRUSTED_HEADER names the person, believed only from RAG_TRUSTED_PROXIES;
writes still need the session's CSRF token, which GET /api/auth/status hands out."""

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import httpx
import pytest
from asgi_lifespan import LifespanManager
from fastapi import FastAPI

from backend.contract.auth import CSRF_HEADER, SESSION_COOKIE
from backend.main import create_app
from backend.tests.conftest import fake_settings

HEADER = "X-Forwarded-Email"


@pytest.fixture
async def app(tmp_path) -> AsyncIterator[FastAPI]:
    settings = fake_settings(
        tmp_path / "data", auth="local", trusted_header=HEADER, trusted_proxies=["10.0.0.0/24", "::1"]
    )
    application = create_app(settings)
    async with LifespanManager(application):
        yield application


@asynccontextmanager
async def from_address(app: FastAPI, address: str, email: str | None) -> AsyncIterator[httpx.AsyncClient]:
    """A client whose requests arrive from `address`, with the proxy's header naming `email`."""
    transport = httpx.ASGITransport(app=app, client=(address, 4321))
    headers = {HEADER: email} if email else {}
    async with httpx.AsyncClient(transport=transport, base_url="http://test", headers=headers) as c:
        yield c


async def test_the_proxy_names_people_the_first_becomes_admin_and_writes_need_the_sessions_csrf(app):
    async with from_address(app, "10.0.0.7", "ann@team.org") as ann:
        assert (await ann.get("/api/threads")).status_code == 200  # a read needs nothing more
        refused = await ann.post("/api/keys", json={"name": "laptop"})
        assert refused.status_code == 403 and "GET /api/auth/status" in refused.json()["detail"]
        status = await ann.get("/api/auth/status")
        body = status.json()
        assert body["user"]["email"] == "ann@team.org" and body["user"]["role"] == "admin"
        assert f"{SESSION_COOKIE}=" in status.headers["set-cookie"] and body["csrf_token"]
        assert (await ann.post("/api/keys", json={"name": "laptop"})).status_code == 403  # still no token
        made = await ann.post("/api/keys", json={"name": "laptop"}, headers={CSRF_HEADER: body["csrf_token"]})
        assert made.status_code == 201, made.text
    async with from_address(app, "10.0.0.8", "bo@team.org") as bo:
        status = (await bo.get("/api/auth/status")).json()
        assert status["user"]["role"] == "user"
        assert (await bo.get("/api/keys")).json() == []  # Ann's key is hers


async def test_the_header_from_any_other_address_is_ignored_and_logged(app, caplog):
    async with from_address(app, "10.0.1.7", "ann@team.org") as spoofer:
        assert (await spoofer.get("/api/threads")).status_code == 401
        assert (await spoofer.get("/api/auth/status")).json()["user"] is None
    assert "not one of RAG_TRUSTED_PROXIES" in caplog.text


async def test_the_proxy_decides_when_its_header_and_an_old_session_disagree(app):
    async with from_address(app, "10.0.0.7", "ann@team.org") as ann:
        await ann.get("/api/auth/status")
        session = ann.cookies.get(SESSION_COOKIE)
    async with from_address(app, "::1", "bo@team.org") as bo:
        bo.cookies.set(SESSION_COOKIE, session)  # Ann's session cookie left in a shared browser
        assert (await bo.get("/api/auth/status")).json()["user"]["email"] == "bo@team.org"


async def test_a_header_that_is_not_an_email_is_a_401(app):
    async with from_address(app, "10.0.0.7", "ann; drop table") as c:
        refused = await c.get("/api/threads")
        assert refused.status_code == 401 and "no valid e-mail" in refused.json()["detail"]


def test_a_header_without_proxies_or_with_a_bad_address_is_refused_at_start(tmp_path):
    with pytest.raises(ValueError, match="RAG_TRUSTED_HEADER needs RAG_AUTH=local and RAG_TRUSTED_PROXIES"):
        fake_settings(tmp_path / "d", auth="local", trusted_header=HEADER)
    with pytest.raises(ValueError, match="not an address or a network"):
        fake_settings(tmp_path / "d", auth="local", trusted_header=HEADER, trusted_proxies=["proxy.lan"])
