"""A whole installation moved SQLite -> Postgres -> SQLite with `cli export` / `cli import`: thread pages, exports,
memory, documents, originals and search results are the same before and after, and the threads go on."""

import sqlite3
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


async def one_document(folder: Path) -> Settings:
    """A SQLite installation holding Été.md."""
    settings = fake_settings(folder / "data", database_url=None)
    (folder / "docs").mkdir(parents=True)
    (folder / "docs" / "Été.md").write_text("# Summer\n\nThe office closes for two weeks in August.\n")
    app = create_app(settings)
    async with LifespanManager(app):
        await ingest_paths(app.state.services.knowledge, [folder / "docs"])
    return settings


async def test_an_export_holding_names_an_older_version_kept_apart_is_refused_before_anything_is_imported(
    tmp_path: Path, postgres_url: str
) -> None:
    """Before 62b8af6, SQLite told "Été.md" and "été.md" apart (its NOCASE folds ASCII letters only): an export of
    such an installation failed on Postgres' unique index halfway, with a traceback and the tables before it filled
    (a second import was then refused: not empty). Now it is refused up front, naming both; once one is deleted
    in the source, its new export goes in."""
    sqlite = await one_document(tmp_path / "a")
    with sqlite3.connect(sqlite.knowledge_path) as conn:  # the twin an older version let in
        columns = [r[1] for r in conn.execute("PRAGMA table_info(documents)")]
        copied = ", ".join("'twin'" if c == "id" else "'été.md'" if c == "name" else c for c in columns)
        conn.execute(f"INSERT INTO documents ({', '.join(columns)}) SELECT {copied} FROM documents")
    await export_installation(sqlite, tmp_path / "twins")

    postgres = fake_settings(tmp_path / "b" / "data", database_url=postgres_url)
    with pytest.raises(TransferError, match="nothing was imported") as refused:
        await import_installation(postgres, tmp_path / "twins")
    assert "documents 'Été.md' and 'été.md'" in str(refused.value)

    with sqlite3.connect(sqlite.knowledge_path) as conn:
        conn.execute("DELETE FROM documents WHERE id = 'twin'")
    await export_installation(sqlite, tmp_path / "fixed")
    moved = await import_installation(postgres, tmp_path / "fixed")  # the target was left empty
    assert moved["documents"] == 1


async def test_a_row_the_target_refuses_is_named_with_what_was_imported_before_it(tmp_path: Path) -> None:
    """An export edited by hand (here a chunk repeated): the refusal names the table and the target's reason, and
    says what the target now holds, not a traceback."""
    await export_installation(await one_document(tmp_path / "a"), tmp_path / "export")
    chunks = tmp_path / "export" / "chunks.jsonl"
    chunks.write_text(chunks.read_text() * 2)

    with pytest.raises(TransferError, match="refused a row of chunks") as refused:
        await import_installation(fake_settings(tmp_path / "b" / "data", database_url=None), tmp_path / "export")
    assert "UNIQUE constraint failed" in str(refused.value) and "documents" in str(refused.value)
    assert "empty the target before importing again" in str(refused.value)
