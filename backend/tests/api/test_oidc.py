"""Single sign-on against a real OpenID provider: oidc-provider-mock (a maintained library built on Authlib) runs as
its own process, and Ragline's Authlib client talks to it over HTTP: discovery, the authorization code with PKCE,
the token endpoint and the ID token's signature from its JWKS."""

import socket
import subprocess
import sys
import time
from collections.abc import AsyncIterator, Iterator
from urllib.parse import parse_qs, quote, urlparse

import httpx
import pytest
from asgi_lifespan import LifespanManager
from fastapi import FastAPI

from backend.contract.auth import SESSION_COOKIE, SSO_LOGIN
from backend.main import create_app
from backend.tests.api.auth_helpers import PASSWORD, client_of, sign_in
from backend.tests.conftest import fake_settings


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def provider() -> Iterator[str]:
    port = free_port()
    proc = subprocess.Popen(
        [sys.executable, "-m", "oidc_provider_mock", "--port", str(port), "--require-nonce", "true"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 30
        while True:
            try:
                if httpx.get(f"{url}/.well-known/openid-configuration", timeout=1).status_code == 200:
                    break
            except httpx.TransportError:
                pass
            assert time.monotonic() < deadline and proc.poll() is None, "the OpenID provider did not start"
            time.sleep(0.1)
        yield url
    finally:
        proc.terminate()
        proc.wait(timeout=10)


def sso_settings(tmp_path, provider):
    return fake_settings(
        tmp_path / "data",
        auth="local",
        oidc_issuer=provider,
        oidc_client_id="ragline",
        oidc_client_secret="not-so-secret",
        oidc_allowed_domains=["Team.org"],
        oidc_name="Team SSO",
        oidc_groups_claim="groups",
    )


@pytest.fixture
async def app(tmp_path, provider) -> AsyncIterator[FastAPI]:
    application = create_app(sso_settings(tmp_path, provider))
    async with LifespanManager(application):
        async with client_of(application) as c:  # an admin exists: SSO is not the first-run setup
            assert (await c.post("/api/auth/setup", json={"email": "ann@team.org", "password": PASSWORD})).is_success
        yield application


async def to_provider(client: httpx.AsyncClient) -> str:
    """Start signing in at Ragline; the provider's authorization URL it redirects to."""
    started = await client.get(SSO_LOGIN)
    assert started.status_code == 302, started.text
    return started.headers["location"]


def authorize(location: str, sub: str, claims: dict | None = None, action: str | None = None) -> str:
    """The person signs in at the provider (its own form, posted); the callback URL it sends the browser to."""
    base = location.split("/oauth2/", 1)[0]
    if claims is not None:
        assert httpx.put(f"{base}/users/{quote(sub)}", json=claims).status_code == 204
    form = {"action": action} if action else {"sub": sub}
    answered = httpx.post(location, data=form)
    assert answered.status_code == 302, answered.text
    return answered.headers["location"]


async def back_at_ragline(client: httpx.AsyncClient, callback: str) -> httpx.Response:
    parts = urlparse(callback)
    return await client.get(f"{parts.path}?{parts.query}")


async def sso_sign_in(app: FastAPI, sub: str, claims: dict) -> tuple[httpx.Response, dict]:
    async with client_of(app) as c:
        done = await back_at_ragline(c, authorize(await to_provider(c), sub, claims))
        status = (await c.get("/api/auth/status")).json()
    return done, status


async def test_status_names_the_provider_and_login_sends_the_browser_there_with_pkce_and_a_nonce(app, provider):
    async with client_of(app) as c:
        assert (await c.get("/api/auth/status")).json()["sso"] == "Team SSO"
        location = await to_provider(c)
    query = parse_qs(urlparse(location).query)
    assert location.startswith(f"{provider}/oauth2/authorize")
    assert query["client_id"] == ["ragline"] and query["response_type"] == ["code"]
    assert query["code_challenge_method"] == ["S256"] and query["nonce"] and query["state"]
    assert "openid" in query["scope"][0].split()


async def test_a_person_of_an_allowed_domain_gets_a_user_account_and_a_session_then_the_same_one_again(app):
    done, status = await sso_sign_in(app, "bo@team.org", {"email": "bo@team.org", "name": "Bo Ek"})
    assert done.status_code == 302 and done.headers["location"] == "/"
    cookie = done.headers["set-cookie"]
    assert f"{SESSION_COOKIE}=" in cookie and "HttpOnly" in cookie
    assert status["user"]["email"] == "bo@team.org" and status["user"]["role"] == "user"
    assert status["user"]["display_name"] == "Bo Ek" and status["csrf_token"]
    _, again = await sso_sign_in(app, "bo@team.org", {"email": "bo@team.org"})
    assert again["user"]["id"] == status["user"]["id"]


async def test_on_a_fresh_install_the_first_person_through_sso_is_the_admin_and_the_next_a_user(tmp_path, provider):
    application = create_app(sso_settings(tmp_path, provider))
    async with LifespanManager(application):
        _, first = await sso_sign_in(application, "cy@team.org", {"email": "cy@team.org"})
        _, second = await sso_sign_in(application, "di@team.org", {"email": "di@team.org"})
        async with client_of(application) as c:
            setup = await c.post("/api/auth/setup", json={"email": "eve@team.org", "password": PASSWORD})
    assert first["user"]["role"] == "admin" and second["user"]["role"] == "user"
    assert setup.status_code == 409  # the first-run setup is over: nobody else can claim the admin role


async def test_an_existing_account_signs_in_by_sso_whatever_its_domain(app):
    async with client_of(app) as c:
        admin = await sign_in(c, "ann@team.org")
        made = await c.post(
            "/api/users", json={"email": "cy@partner.example", "password": PASSWORD}, headers=admin.headers()
        )
        assert made.status_code == 201, made.text
    done, status = await sso_sign_in(app, "cy-sub", {"email": "cy@partner.example"})
    assert done.status_code == 302 and status["user"]["id"] == made.json()["id"]


async def test_another_domain_without_an_account_is_refused_and_nothing_is_made(app, caplog):
    done, status = await sso_sign_in(app, "eve@evil.example", {"email": "eve@evil.example"})
    assert done.status_code == 403 and "ask an admin" in done.json()["detail"]
    assert status["user"] is None and SESSION_COOKIE not in done.headers.get("set-cookie", "")
    assert "not in RAG_OIDC_ALLOWED_DOMAINS" in caplog.text
    async with client_of(app) as c:
        await sign_in(c, "ann@team.org")
        emails = [u["email"] for u in (await c.get("/api/users")).json()]
    assert "eve@evil.example" not in emails


async def test_an_unverified_email_is_refused(app):
    done, status = await sso_sign_in(app, "dan@team.org", {"email": "dan@team.org", "email_verified": False})
    assert done.status_code == 403 and "e-mail" in done.json()["detail"] and status["user"] is None


async def test_a_callback_not_started_in_this_browser_is_a_422(app):
    async with client_of(app) as victim, client_of(app) as attacker:
        callback = authorize(await to_provider(attacker), "bo@team.org", {"email": "bo@team.org"})
        refused = await back_at_ragline(victim, callback)  # no pending sign-in cookie: login CSRF
        assert refused.status_code == 422 and "start signing in again" in refused.json()["detail"]
        assert (await victim.get("/api/auth/status")).json()["user"] is None


async def test_a_used_code_is_refused_by_the_provider_and_a_denial_is_a_401(app):
    async with client_of(app) as c:
        location = await to_provider(c)
        callback = authorize(location, "bo@team.org", {"email": "bo@team.org"})
        cookie = c.cookies.get("ragline_oidc")
        assert (await back_at_ragline(c, callback)).status_code == 302
        c.cookies.set("ragline_oidc", cookie, path="/api/auth/oidc")  # replay the whole return
        replayed = await back_at_ragline(c, callback)
        assert replayed.status_code == 401 and "did not confirm" in replayed.json()["detail"]
    async with client_of(app) as c:
        denied = await back_at_ragline(c, authorize(await to_provider(c), "bo@team.org", action="deny"))
        assert denied.status_code == 401 and "access_denied" in denied.json()["detail"]


async def test_sso_routes_are_404_when_no_provider_is_set(tmp_path):
    application = create_app(fake_settings(tmp_path / "data", auth="local"))
    async with LifespanManager(application), client_of(application) as c:
        assert (await c.get("/api/auth/status")).json()["sso"] is None
        missing = await c.get(SSO_LOGIN)
        assert missing.status_code == 404 and "RAG_OIDC_ISSUER" in missing.json()["detail"]


async def test_the_groups_claim_sets_memberships_of_existing_groups_at_each_sign_in(app):
    async with client_of(app) as c:
        admin = await sign_in(c, "ann@team.org")
        ids = {}
        for name in ("Service", "Finance"):
            made = await c.post("/api/groups", json={"name": name}, headers=admin.headers())
            assert made.status_code == 201, made.text
            ids[name] = made.json()["id"]
        _, status = await sso_sign_in(app, "bo@team.org", {"email": "bo@team.org", "groups": ["service", "Nowhere"]})
        bo = status["user"]["id"]
        members = {g["name"]: g["members"] for g in (await c.get("/api/groups")).json()}
        assert members == {"Finance": [], "Service": [bo]}  # no group is made for "Nowhere"
        await sso_sign_in(app, "bo@team.org", {"email": "bo@team.org", "groups": ["Finance"]})
        members = {g["name"]: g["members"] for g in (await c.get("/api/groups")).json()}
        assert members == {"Finance": [bo], "Service": []}  # the provider moved Bo


def test_a_provider_without_accounts_or_client_id_is_refused_at_start(tmp_path):
    with pytest.raises(ValueError, match="RAG_OIDC_ISSUER needs RAG_AUTH=local and RAG_OIDC_CLIENT_ID"):
        fake_settings(tmp_path / "data", auth="off", oidc_issuer="http://127.0.0.1:9", oidc_client_id="r")
    with pytest.raises(ValueError, match="RAG_OIDC_CLIENT_ID"):
        fake_settings(tmp_path / "data", auth="local", oidc_issuer="http://127.0.0.1:9")
