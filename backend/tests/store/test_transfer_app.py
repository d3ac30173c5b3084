"""A whole installation moved SQLite -> Postgres -> SQLite with `cli export` / `cli import`: thread pages, exports,
memory, documents, originals and search results are the same before and after, and the threads go on."""

from pathlib import Path

import httpx
import pytest
from asgi_lifespan import LifespanManager

from backend.main import create_app
from backend.rag.knowledge import ingest_paths
from backend.settings import Settings
from backend.store.transfer import TransferError, export_installation, import_installation
from backend.tests.conftest import fake_settings
from bench.lib import SAMPLE_DOCS

QUESTIONS = {"t1": ["How long is the Zephyr-9 warranty?", "And how often does it need servicing?"], "t2": ["Hello"]}
SEARCHES = ["warranty period", "password length", "visitor badges"]


async def snapshot(settings: Settings, ask: bool = False) -> dict:
    """What a user sees: threads, each thread's page, export and memory, documents, originals and searches."""
    app = create_app(settings)
    async with LifespanManager(app):
        if ask:
            await ingest_paths(app.state.services.knowledge, [SAMPLE_DOCS])
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url="http://t", timeout=60) as c:
            if ask:
                for thread, questions in QUESTIONS.items():
                    for q in questions:
                        assert (await c.post("/api/chat", json={"message": q, "thread_id": thread})).status_code == 200
            seen: dict = {"threads": (await c.get("/api/threads")).json()}
            for thread in QUESTIONS:
                seen[thread] = [(await c.get(f"/api/threads/{thread}{part}")).json() for part in ("", "/memory")]
                seen[thread].append((await c.get(f"/api/threads/{thread}/export", params={"format": "md"})).text)
            docs = (await c.get("/api/documents")).json()
            seen["documents"] = sorted((d["name"], d["chunks"], d["status"]) for d in docs)
            seen["files"] = {d["name"]: (await c.get(f"/api/documents/{d['id']}/file")).content for d in docs}
            seen["search"] = [
                [
                    (s["document"], s["chunk"], s["snippet"])
                    for s in (await c.post("/api/search", json={"query": q})).json()["results"]
                ]
                for q in SEARCHES
            ]
    return seen


async def test_an_installation_moves_to_postgres_and_back_unchanged(tmp_path: Path, postgres_url: str) -> None:
    sqlite = fake_settings(tmp_path / "a" / "data", database_url=None)
    before = await snapshot(sqlite, ask=True)
    assert len(before["t1"][0]["messages"]) == 4 and before["documents"] and all(before["search"])

    await export_installation(sqlite, tmp_path / "export")
    postgres = fake_settings(tmp_path / "b" / "data", database_url=postgres_url)
    moved = await import_installation(postgres, tmp_path / "export")
    assert moved["threads"] == 2 and moved["checkpoints"] > 0 and moved["vectors"] > 0 and moved["files"] > 0
    assert await snapshot(postgres) == before

    with pytest.raises(TransferError, match="already holds"):  # never into an installation that has data
        await import_installation(postgres, tmp_path / "export")

    await export_installation(postgres, tmp_path / "back")
    again = fake_settings(tmp_path / "c" / "data", database_url=None)
    await import_installation(again, tmp_path / "back")
    assert await snapshot(again) == before

    app = create_app(again)  # the moved threads go on: the follow-up sees the earlier turns
    async with LifespanManager(app):
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url="http://t", timeout=60) as c:
            reply = await c.post("/api/chat", json={"message": "Thanks!", "thread_id": "t1"})
            assert reply.status_code == 200
            memory = (await c.get("/api/threads/t1/memory")).json()
    assert [e["question"] for e in memory["qa_index"]] == [*QUESTIONS["t1"], "Thanks!"]
