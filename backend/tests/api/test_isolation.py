"""Isolation matrix (RAG_AUTH=local): every thread, run and key route × every object of another user is a 404 that
is word for word the 404 of an object that does not exist, whether asked with a session or an API key; and the
owner's objects are untouched afterwards."""

import asyncio
import json
from collections.abc import AsyncIterator

import httpx
import pytest
from asgi_lifespan import LifespanManager
from fastapi import FastAPI

from backend.cli import create_admin
from backend.main import create_app
from backend.tests.api.auth_helpers import PASSWORD, Person, chat, client_of, sign_in
from backend.tests.api.test_runs import until_logged
from backend.tests.conftest import fake_settings
from bench.lib.sse import parse_sse

SECRET_QUESTION = "Write a poem about the sea"  # Ann's words: they must never reach Bob
MISSING = "no-such-object-0000"


def openai_404(thread_id: str) -> dict:
    """/v1's answer to a thread that does not exist for the asker."""
    message = f"The thread {thread_id!r} does not exist"
    return {"error": {"message": message, "type": "invalid_request_error", "param": "thread_id", "code": "not_found"}}


def thread_requests(thread_id: str) -> list[tuple[str, str, dict]]:
    """(method, url, request kwargs) of every route that names a thread."""
    return [
        ("GET", f"/api/threads/{thread_id}", {}),
        ("GET", f"/api/threads/{thread_id}/export", {}),
        ("GET", f"/api/threads/{thread_id}/export?format=markdown", {}),
        ("GET", f"/api/threads/{thread_id}/memory", {}),
        ("PATCH", f"/api/threads/{thread_id}", {"json": {"title": "mine now"}}),
        ("DELETE", f"/api/threads/{thread_id}", {}),
        ("POST", "/api/chat/stream", {"json": {"message": "Hello", "mode": "chat", "thread_id": thread_id}}),
        ("POST", "/api/chat", {"json": {"message": "Hello", "mode": "chat", "thread_id": thread_id}}),
        (
            "POST",
            "/v1/chat/completions",
            {
                "json": {"model": "ragline-chat", "messages": [{"role": "user", "content": "Hello"}]},
                "headers": {"X-Ragline-Thread-Id": thread_id},
            },
        ),
    ]


def run_requests(run_id: str) -> list[tuple[str, str, dict]]:
    """Every route that names a run."""
    return [
        ("GET", f"/api/runs/{run_id}", {}),
        ("GET", f"/api/runs/{run_id}/stream", {}),
        ("POST", f"/api/runs/{run_id}/cancel", {}),
    ]


def key_requests(key_id: str) -> list[tuple[str, str, dict]]:
    return [("DELETE", f"/api/keys/{key_id}", {})]


def session_requests(session_id: str) -> list[tuple[str, str, dict]]:
    return [("DELETE", f"/api/me/sessions/{session_id}", {})]


@pytest.fixture
async def app(tmp_path) -> AsyncIterator[FastAPI]:
    settings = fake_settings(tmp_path / "data", auth="local", fake_tokens_per_second=4.0)
    application = create_app(settings)
    async with LifespanManager(application):
        yield application


async def _people(app: FastAPI, ann_client, bob_client) -> tuple[Person, Person]:
    await ann_client.post("/api/auth/setup", json={"email": "ann@team.org", "password": PASSWORD})
    ann = await sign_in(ann_client, "ann@team.org")
    made = await ann_client.post(
        "/api/users", json={"email": "bob@team.org", "password": PASSWORD}, headers=ann.headers()
    )
    assert made.status_code == 201
    return ann, await sign_in(bob_client, "bob@team.org")


async def _ask(client, method: str, url: str, kwargs: dict, auth: dict[str, str]):
    headers = {**kwargs.get("headers", {}), **auth}
    return await client.request(method, url, **{**kwargs, "headers": headers})


async def test_another_users_threads_runs_and_keys_are_404s_like_missing_ones(app):
    async with client_of(app) as ann_client, client_of(app) as bob_client:
        ann, bob = await _people(app, ann_client, bob_client)
        services = app.state.services
        done = parse_sse(await chat(ann, SECRET_QUESTION))  # a finished thread and run (streamed at 4 tokens/s)
        thread_id, run_id = done[0][1]["thread_id"], done[0][1]["run_id"]
        await services.conversations.claim("ann-live", ann.user["id"])
        live = await services.runner.start(SECRET_QUESTION, "chat", "ann-live")  # still answering
        key_id = (await ann_client.post("/api/keys", json={"name": "k"}, headers=ann.headers())).json()["id"]
        session_id = next(s["id"] for s in (await ann_client.get("/api/me/sessions")).json() if s["current"])
        bob_key = (await bob_client.post("/api/keys", json={"name": "k"}, headers=bob.headers())).json()["key"]
        credentials = {"session": bob.headers(), "key": {"Authorization": f"Bearer {bob_key}"}}

        matrix = [
            *((r, tid) for tid in (thread_id, "ann-live") for r in thread_requests(tid)),
            *((r, rid) for rid in (run_id, live.run_id) for r in run_requests(rid)),
            *((r, key_id) for r in key_requests(key_id)),
            *((r, session_id) for r in session_requests(session_id)),
        ]
        checked = 0
        for via, auth in credentials.items():
            for (method, url, kwargs), object_id in matrix:
                theirs = await _ask(bob_client, method, url, kwargs, auth)
                if method == "POST" and "/chat" in url:  # an unused thread id starts a thread: compare with the read
                    missing = await _ask(bob_client, "GET", f"/api/threads/{MISSING}", {}, auth)
                    if url.startswith("/v1/"):
                        missing = httpx.Response(404, json=openai_404(MISSING))
                else:
                    missing = await _ask(bob_client, method, url.replace(object_id, MISSING), kwargs, auth)
                label = (via, method, url)
                assert theirs.status_code == 404, (label, theirs.status_code, theirs.text)
                assert missing.status_code == 404, (label, missing.status_code, missing.text)
                assert theirs.json() == json.loads(missing.text.replace(MISSING, object_id)), label
                assert SECRET_QUESTION not in theirs.text and "Write a poem" not in theirs.text, label
                checked += 1
            listed = await bob_client.get("/api/threads", headers=auth)
            assert listed.status_code == 200 and listed.json() == [], via
        assert checked == 2 * len(matrix) == 2 * (2 * 9 + 2 * 3 + 1 + 1)  # session and key × 26 requests

        # Ann's objects are as they were: the live run still answering, the thread whole, the key live
        assert not live.finished and not live.stop_requested
        detail = (await ann_client.get(f"/api/threads/{thread_id}")).json()
        assert detail["title"] == SECRET_QUESTION and len(detail["messages"]) == 2
        assert [k["revoked_at"] for k in (await ann_client.get("/api/keys")).json()] == [None]
        assert session_id in [s["id"] for s in (await ann_client.get("/api/me/sessions")).json()]
        assert (await ann_client.get(f"/api/runs/{live.run_id}")).status_code == 200
        stopped = await ann_client.post(f"/api/runs/{live.run_id}/cancel", headers=ann.headers())
        assert stopped.status_code == 200 and stopped.json()["status"] == "stopped"
        await asyncio.sleep(0)


async def test_a_deleted_threads_runs_go_with_it_and_not_to_whoever_takes_its_id_next(app):
    """A probe found a deleted thread's runs still readable (question, and answer by replay) for the run log's
    24 hours, and, once another user started a thread of the same id, theirs: a run is its thread owner's."""
    async with client_of(app) as ann_client, client_of(app) as bob_client:
        ann, bob = await _people(app, ann_client, bob_client)
        done = parse_sse(await chat(ann, SECRET_QUESTION, "shared-id"))
        run_id = done[0][1]["run_id"]
        await until_logged(app, run_id)
        assert (await ann_client.delete("/api/threads/shared-id", headers=ann.headers())).status_code == 204
        assert (await ann_client.get(f"/api/runs/{run_id}", headers=ann.headers())).status_code == 404

        assert parse_sse(await chat(bob, "Hello", "shared-id"))[-1][0] == "done"  # Bob's thread now
        for method, url, kwargs in run_requests(run_id):
            theirs = await _ask(bob_client, method, url, kwargs, bob.headers())
            assert theirs.status_code == 404 and "Write a poem" not in theirs.text, (url, theirs.text)
        assert await app.state.services.runner.runlog.events(run_id) == []


@pytest.mark.parametrize("admin_from", ["setup", "cli"])
async def test_threads_from_before_accounts_belong_to_the_first_admin_only(tmp_path, monkeypatch, admin_from):
    data = tmp_path / "data"
    before = create_app(fake_settings(data))  # RAG_AUTH=off: the one local person
    async with LifespanManager(before), client_of(before) as c:
        old = parse_sse(await c.post("/api/chat/stream", json={"message": SECRET_QUESTION, "mode": "chat"}))
        thread_id = old[0][1]["thread_id"]
        await before.state.services.knowledge.ingest_now("boats.md", b"Boat trips leave on Saturdays.")
    if admin_from == "cli":  # the admin exists before the server starts with accounts: setup will be refused
        await asyncio.to_thread(create_admin, fake_settings(data), "ann@team.org", "Ann", PASSWORD)
    after = create_app(fake_settings(data, auth="local"))
    async with LifespanManager(after), client_of(after) as ann_client, client_of(after) as bob_client:
        ann, bob = await _people(after, ann_client, bob_client)
        assert [t["thread_id"] for t in (await ann_client.get("/api/threads")).json()] == [thread_id]
        assert (await bob_client.get("/api/threads")).json() == []
        assert (await bob_client.get(f"/api/threads/{thread_id}")).status_code == 404
        assert (await ann_client.get(f"/api/threads/{thread_id}")).status_code == 200
        # documents from before accounts: in the team collection the first admin owns, read by all, written by admins
        for client, can_write in ((ann_client, True), (bob_client, False)):
            assert [d["name"] for d in (await client.get("/api/documents")).json()] == ["boats.md"]
            team = [c for c in (await client.get("/api/collections")).json() if c["kind"] == "team"]
            assert [(c["name"], c["can_write"]) for c in team] == [("team", can_write)]
