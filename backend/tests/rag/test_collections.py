"""Collections on real SQLite and real Chroma: the read and write rule, the readable set, and search filtered by it
before fusion (a document the reader may not read never ranks, even as the best match)."""

import asyncio
import sqlite3
from collections.abc import AsyncIterator

import pytest

from backend.rag.collections import CollectionRecord, NameTaken, Reader, RegistryCollections, may_read, may_write
from backend.rag.index import KnowledgeIndex
from backend.rag.knowledge import KnowledgeBase
from backend.rag.search import SearchConfig
from backend.store.sqlite import SqliteDatabase
from backend.tests.conftest import fake_settings
from backend.tests.rag.conftest import open_kb

SECRET = b"# Salaries\n\nThe salary of the chief lighthouse keeper is 91,000 crowns a year, paid in March."
PUBLIC = b"# Boats\n\nBoat trips to the lighthouse rock leave the harbour on Saturdays in summer."
QUESTION = "What is the salary of the chief lighthouse keeper?"


@pytest.fixture
async def kb(tmp_path, engine) -> AsyncIterator[KnowledgeBase]:
    with open_kb(fake_settings(tmp_path, **engine)) as kb:
        kb.retriever.config = SearchConfig(neighbor_window=0, token_budget=10_000, max_distance=2.0)
        await kb.collections.setup()
        yield kb


async def _two_people(kb: KnowledgeBase) -> tuple[Reader, Reader, str, str]:
    """Ann (user) with a team document readable by all; Bob with the secret in his personal collection."""
    ann, bob = Reader("ann"), Reader("bob")
    team = await kb.collections.create("Handbook", "team", "admin")
    kb.ingestor.ingest("boats.md", PUBLIC, collection=team.id)
    bob_personal = await kb.collections.personal("bob")
    secret = kb.ingestor.ingest("salaries.md", SECRET, collection=bob_personal.id).record.id
    return ann, bob, team.id, secret


def _record(kind: str, owner: str, users_write: bool = False, groups: tuple = ()) -> CollectionRecord:
    return CollectionRecord("c", "c", kind, owner, users_write, "", groups)  # type: ignore[arg-type]


def test_rule_personal_is_its_owners_only_team_is_read_by_all_and_written_by_admins_or_when_marked():
    ann, admin = Reader("ann"), Reader("root", is_admin=True)
    assert may_read(ann, _record("personal", "ann")) and may_write(ann, _record("personal", "ann"))
    assert not may_read(admin, _record("personal", "ann")) and not may_write(admin, _record("personal", "ann"))
    assert may_read(ann, _record("team", "root")) and not may_write(ann, _record("team", "root"))
    assert may_write(admin, _record("team", "root")) and may_write(ann, _record("team", "root", users_write=True))


def test_rule_a_group_collection_is_its_groups_and_the_admins():
    board = _record("group", "root", groups=(("readers", "read"), ("editors", "write")))
    outsider, reader, editor = (
        Reader("o"),
        Reader("r", groups=frozenset({"readers"})),
        Reader("e", False, frozenset({"editors"})),
    )
    assert not may_read(outsider, board) and not may_write(outsider, board)
    assert may_read(reader, board) and not may_write(reader, board)
    assert may_read(editor, board) and may_write(editor, board)
    assert may_read(Reader("root", is_admin=True), board) and may_write(Reader("root", is_admin=True), board)


async def test_group_members_read_a_group_collections_documents_and_nobody_else(kb):
    board = await kb.collections.create("Board", "group", "root")
    minutes = kb.ingestor.ingest("minutes.md", SECRET, collection=board.id).record.id
    member, outsider = Reader("m", groups=frozenset({"g1"})), Reader("o", groups=frozenset({"g2"}))
    assert minutes not in await kb.collections.readable_documents(member)
    await kb.collections.share(board.id, "g1", "read")
    assert minutes in await kb.collections.readable_documents(member)
    assert minutes not in await kb.collections.readable_documents(outsider)
    assert [c.name for c in await kb.collections.visible(member)] == ["Board"]
    await kb.collections.share(board.id, "g1", None)
    assert minutes not in await kb.collections.readable_documents(member)


async def test_best_match_in_another_users_collection_never_reaches_search_probe_or_names(kb):
    ann, bob, _, secret = await _two_people(kb)
    everyone = kb.retriever.run(QUESTION, 3).sources
    assert everyone[0]["doc_id"] == secret  # unfiltered, Bob's document is the best match

    ann_readable = await kb.collections.readable_documents(ann)
    assert secret not in ann_readable and len(ann_readable) == 1
    for fusion in ("hybrid", "bm25", "vector"):
        kb.retriever.config = SearchConfig(neighbor_window=0, token_budget=10_000, max_distance=2.0, fusion=fusion)
        sources = kb.retriever.scoped(ann_readable).run(QUESTION, 5).sources
        assert all(s["doc_id"] != secret and "91,000" not in s["text"] for s in sources), fusion
        assert not kb.retriever.scoped(ann_readable).run(QUESTION, 5, ["salaries.md"]).sources, fusion
    ann_view = kb.retriever.scoped(ann_readable)
    assert await ann_view.document_names() == ["boats.md"]
    assert await ann_view.nearest_distance(QUESTION) > await kb.retriever.nearest_distance(QUESTION)
    assert await kb.retriever.scoped(frozenset()).nearest_distance(QUESTION) is None
    assert not kb.retriever.scoped(frozenset()).run(QUESTION, 5).sources
    bob_sources = kb.retriever.scoped(await kb.collections.readable_documents(bob)).run(QUESTION, 3).sources
    assert bob_sources[0]["doc_id"] == secret


async def test_visible_collections_and_names_unique_per_collection_only(kb):
    ann, bob, team_id, _ = await _two_people(kb)
    ann_personal = await kb.collections.personal("ann")
    assert await kb.collections.personal("ann") == ann_personal  # made once
    same_name = kb.ingestor.ingest("salaries.md", b"# Mine\n\nAnn's own salaries note.", collection=ann_personal.id)
    assert same_name.outcome == "added"  # not Bob's document replaced
    assert [c.id for c in await kb.collections.visible(ann)] == [ann_personal.id, team_id]
    assert team_id in {c.id for c in await kb.collections.visible(bob)}
    with pytest.raises(NameTaken):
        await kb.collections.create("handbook", "group", "admin")


async def test_unfiled_documents_move_to_the_first_admins_team_collection(kb):
    kb.ingestor.ingest("boats.md", PUBLIC)  # RAG_AUTH=off or the CLI: in no collection
    assert await kb.collections.readable_documents(Reader("ann")) == frozenset()
    assert await kb.collections.adopt_unfiled("root") == 1
    assert await kb.collections.adopt_unfiled("root") == 0
    team = [c for c in await kb.collections.visible(Reader("ann")) if c.kind == "team"]
    assert [(c.name, c.owner, c.users_write) for c in team] == [("team", "root", False)]
    assert len(await kb.collections.readable_documents(Reader("ann"))) == 1


async def test_with_a_group_collection_named_team_unfiled_documents_go_to_a_team_collection_of_another_name(kb):
    """A probe named a group collection "Team", ingested with the CLI and restarted: start-up failed (the team
    collection could not be made under its name, and then was not found). Into the group's, only its members would
    read what was meant for everyone."""
    group = await kb.collections.create("Team", "group", "admin")
    kb.ingestor.ingest("boats.md", PUBLIC)
    assert await kb.collections.adopt_unfiled("root") == 1
    team = [c for c in await kb.collections.visible(Reader("ann")) if c.kind == "team"]
    assert [c.name for c in team] == ["team 2"]
    assert len(await kb.collections.readable_documents(Reader("ann"))) == 1
    assert not [d for d in kb.index.documents() if d.collection == group.id]


async def test_an_unfiled_document_named_as_a_team_one_but_for_case_beyond_ascii_stays_unfiled(kb):
    """SQLite's lower() folds ASCII only: été.md ingested by the CLI joined Été.md in the team collection at the next
    start, two documents of one name there (review)."""
    kb.ingestor.ingest("Été.md", PUBLIC)
    assert await kb.collections.adopt_unfiled("root") == 1
    kb.ingestor.ingest("été.md", SECRET)  # the CLI files into no collection
    assert await kb.collections.adopt_unfiled("root") == 0
    assert sorted((d.name, bool(d.collection)) for d in kb.index.documents()) == [("Été.md", True), ("été.md", False)]


def test_registry_from_before_collections_is_upgraded_in_place(tmp_path):
    path = tmp_path / "knowledge.sqlite"
    with sqlite3.connect(path) as old:
        old.execute(
            "CREATE TABLE documents (id TEXT PRIMARY KEY, name TEXT NOT NULL UNIQUE COLLATE NOCASE, type TEXT NOT "
            "NULL, size INTEGER NOT NULL DEFAULT 0, pages INTEGER, chunks INTEGER NOT NULL DEFAULT 0, sha256 TEXT "
            "NOT NULL DEFAULT '', version INTEGER NOT NULL DEFAULT 0, status TEXT NOT NULL, progress REAL NOT NULL "
            "DEFAULT 0, error TEXT, ingested_at TEXT)"
        )
        old.execute(
            "INSERT INTO documents (id, name, type, status, version) VALUES ('d1', 'a.md', 'markdown', 'ready', 1)"
        )
    db = SqliteDatabase(path)
    index = KnowledgeIndex(db)
    record = index.document("d1")
    assert record is not None and record.collection == "" and record.flagged == 0
    collections = RegistryCollections(index)
    asyncio.run(collections.setup())
    c1 = asyncio.run(collections.create("Board", "team", "u1")).id
    assert index.upsert_pending("d2", "a.md", "markdown", 1, collection=c1)  # same name, another collection
    assert index.by_name("A.MD", c1).id == "d2" and index.by_name("a.md").id == "d1"
    # a new version registered for d2 as it was in no collection, after d2 moved to c1: refused, nothing changed
    # (that collection's a.md is d1), and as b.md there (d2 is c1's: its id is taken)
    assert not index.upsert_pending("d2", "a.md", "markdown", 9)
    assert not index.upsert_pending("d2", "b.md", "markdown", 9)
    assert not index.upsert_pending("d3", "b.md", "markdown", 1, collection="removed")  # no such collection
    assert index.document("d2").collection == c1 and index.document("d2").size == 1 and index.document("d3") is None
    db.close()
