"""Collections through the API (RAG_AUTH=local, fake model, real SQLite and Chroma): uploads go to a collection the
uploader may write; a document in another user's personal collection never shows in their search, chat sources,
@mentions, document list or /v1 models, even as the best match; a withdrawn source reloads as not available."""

import io
import re
from collections.abc import AsyncIterator

import pytest
from asgi_lifespan import LifespanManager
from fastapi import FastAPI

from backend.api.collections import DocumentNames
from backend.contract.types import NAME_NOT_AVAILABLE, SOURCE_NOT_AVAILABLE
from backend.llm import fake
from backend.llm.lease import ModelLease
from backend.main import create_app
from backend.runs.log import RunLog
from backend.tests.api.auth_helpers import PASSWORD, Person, client_of, sign_in
from backend.tests.conftest import fake_settings
from bench.lib.sse import parse_sse

SECRET = b"# Salaries\n\nThe salary of the chief lighthouse keeper is 91,000 crowns a year, paid in March."
PUBLIC = b"# Boats\n\nBoat trips to the lighthouse rock leave the harbour on Saturdays in summer."
QUESTION = "What is the salary of the chief lighthouse keeper?"


@pytest.fixture
async def app(tmp_path) -> AsyncIterator[FastAPI]:
    application = create_app(fake_settings(tmp_path / "data", auth="local"))
    async with LifespanManager(application):
        yield application


async def upload(person: Person, name: str, data: bytes, collection: str | None = None):
    form = {"collection": collection} if collection is not None else None
    return await person.client.post(
        "/api/documents", files=[("files", (name, io.BytesIO(data)))], data=form, headers=person.headers()
    )


async def _people(app: FastAPI, ann_client, bob_client) -> tuple[Person, Person]:
    """Ann, the first admin, and Bob, a user."""
    await ann_client.post("/api/auth/setup", json={"email": "ann@team.org", "password": PASSWORD})
    ann = await sign_in(ann_client, "ann@team.org")
    made = await ann_client.post(
        "/api/users", json={"email": "bob@team.org", "password": PASSWORD}, headers=ann.headers()
    )
    assert made.status_code == 201
    return ann, await sign_in(bob_client, "bob@team.org")


async def _bob_has_a_secret(app: FastAPI, ann: Person, bob: Person) -> str:
    """Bob's salaries note in his personal collection, Ann's boats note in hers; both indexed. Bob's note's id."""
    secret = await upload(bob, "salaries.md", SECRET)
    assert secret.status_code == 202, secret.text
    assert (await upload(ann, "boats.md", PUBLIC)).status_code == 202
    await app.state.services.knowledge.drain()
    return secret.json()["documents"][0]["id"]


async def test_best_match_in_bobs_collection_never_reaches_ann(app):
    async with client_of(app) as ann_client, client_of(app) as bob_client:
        ann, bob = await _people(app, ann_client, bob_client)
        secret_id = await _bob_has_a_secret(app, ann, bob)
        found = (await bob_client.post("/api/search", json={"query": QUESTION}, headers=bob.headers())).json()
        found = found["results"]
        assert found[0]["doc_id"] == secret_id  # the best match, for the one who may read it

        searched = await ann_client.post("/api/search", json={"query": QUESTION}, headers=ann.headers())
        assert searched.status_code == 200 and secret_id not in searched.text and "salaries" not in searched.text
        named = await ann_client.post(
            "/api/search", json={"query": QUESTION, "documents": ["salaries.md"]}, headers=ann.headers()
        )
        missing = await ann_client.post(
            "/api/search", json={"query": QUESTION, "documents": ["nothing.md"]}, headers=ann.headers()
        )
        assert named.status_code == missing.status_code == 422
        assert named.json()["detail"] == missing.json()["detail"].replace("nothing.md", "salaries.md")

        listed = (await ann_client.get("/api/documents")).json()
        assert [d["name"] for d in listed] == ["boats.md"]
        models = (await ann_client.get("/v1/models")).json()["data"]
        assert [m["id"] for m in models] == ["ragline", "ragline-chat", "ragline:boats.md"]
        model = await ann_client.post(
            "/v1/chat/completions",
            json={"model": "ragline:salaries.md", "messages": [{"role": "user", "content": QUESTION}]},
            headers=ann.headers(),
        )
        assert model.status_code == 404 and "91,000" not in model.text

        for message in (QUESTION, f"@salaries {QUESTION}", f"@salaries.md {QUESTION}"):
            answer = await ann_client.post("/api/chat", json={"message": message, "mode": "rag"}, headers=ann.headers())
            assert answer.status_code == 200, answer.text
            assert "91,000" not in answer.text and secret_id not in answer.text, message
            assert all(s["document"] != "salaries.md" for s in answer.json()["sources"]), message
        bobs = await bob_client.post("/api/chat", json={"message": f"@salaries {QUESTION}"}, headers=bob.headers())
        assert "91,000" in bobs.text  # the fake model repeats what it read: Bob's turn did read it


async def test_another_users_document_routes_are_404s_like_missing_ones(app):
    async with client_of(app) as ann_client, client_of(app) as bob_client:
        ann, bob = await _people(app, ann_client, bob_client)
        secret_id = await _bob_has_a_secret(app, ann, bob)
        ann_key = (await ann_client.post("/api/keys", json={"name": "k"}, headers=ann.headers())).json()["key"]
        checked = 0
        for auth in (ann.headers(), {"Authorization": f"Bearer {ann_key}"}):
            for method, path in (("GET", ""), ("GET", "/text"), ("GET", "/file"), ("DELETE", "")):
                theirs = await ann_client.request(method, f"/api/documents/{secret_id}{path}", headers=auth)
                missing = await ann_client.request(method, f"/api/documents/no-such-doc{path}", headers=auth)
                assert theirs.status_code == missing.status_code == 404, (method, path, theirs.text)
                assert theirs.json() == missing.json() | {
                    "detail": missing.json()["detail"].replace("no-such-doc", secret_id)
                }
                assert "salaries" not in theirs.text and "91,000" not in theirs.text
                checked += 1
        assert checked == 8
        still = await bob_client.get(f"/api/documents/{secret_id}/text")
        assert still.status_code == 200 and "91,000" in still.text


async def test_uploads_only_into_collections_one_may_write(app):
    async with client_of(app) as ann_client, client_of(app) as bob_client:
        ann, bob = await _people(app, ann_client, bob_client)
        bob_personal = (await bob_client.get("/api/collections")).json()[0]
        assert bob_personal["kind"] == "personal" and bob_personal["can_write"]

        into_bobs = await upload(ann, "planted.md", PUBLIC, bob_personal["id"])
        nowhere = await upload(ann, "planted.md", PUBLIC, "no-such-collection")
        assert into_bobs.status_code == nowhere.status_code == 404
        assert into_bobs.json()["detail"] == nowhere.json()["detail"].replace("no-such-collection", bob_personal["id"])

        made = await ann_client.post("/api/collections", json={"name": "Handbook"}, headers=ann.headers())
        open_one = await ann_client.post(
            "/api/collections", json={"name": "Wiki", "users_write": True}, headers=ann.headers()
        )
        assert made.status_code == open_one.status_code == 201
        again = await ann_client.post("/api/collections", json={"name": "handbook"}, headers=ann.headers())
        blank = await ann_client.post("/api/collections", json={"name": "  "}, headers=ann.headers())
        by_user = await bob_client.post("/api/collections", json={"name": "Mine"}, headers=bob.headers())
        assert (again.status_code, blank.status_code, by_user.status_code) == (409, 422, 403)

        seen = {c["name"]: c["can_write"] for c in (await bob_client.get("/api/collections")).json()}
        assert seen == {"Personal": True, "Handbook": False, "Wiki": True}
        refused = await upload(bob, "notes.md", PUBLIC, made.json()["id"])
        assert refused.status_code == 403 and "Handbook" in refused.json()["detail"]
        into_wiki = await upload(bob, "notes.md", PUBLIC, open_one.json()["id"])
        assert into_wiki.status_code == 202
        doc = into_wiki.json()["documents"][0]
        assert doc["collection"] == open_one.json()["id"]
        into_handbook = await upload(ann, "rules.md", PUBLIC, made.json()["id"])
        await app.state.services.knowledge.drain()
        rules_id = into_handbook.json()["documents"][0]["id"]
        assert (await bob_client.get(f"/api/documents/{rules_id}")).status_code == 200  # a team document: read
        assert (await bob_client.delete(f"/api/documents/{rules_id}", headers=bob.headers())).status_code == 403
        assert (await bob_client.delete(f"/api/documents/{doc['id']}", headers=bob.headers())).status_code == 204
        assert (await ann_client.delete(f"/api/documents/{rules_id}", headers=ann.headers())).status_code == 204


async def test_a_citation_whose_document_is_gone_reloads_as_not_available(app):
    async with client_of(app) as ann_client, client_of(app) as bob_client:
        ann, bob = await _people(app, ann_client, bob_client)
        handbook = (await ann_client.post("/api/collections", json={"name": "Handbook"}, headers=ann.headers())).json()
        doc = (await upload(ann, "salaries.md", SECRET, handbook["id"])).json()["documents"][0]
        await app.state.services.knowledge.drain()
        asked = await bob_client.post("/api/chat", json={"message": f"@salaries {QUESTION}"}, headers=bob.headers())
        thread_id = asked.json()["thread_id"]
        assert asked.json()["sources"][0]["doc_id"] == doc["id"]
        assert (await ann_client.delete(f"/api/documents/{doc['id']}", headers=ann.headers())).status_code == 204

        detail = (await bob_client.get(f"/api/threads/{thread_id}")).json()["messages"][1]["sources"]
        export = (await bob_client.get(f"/api/threads/{thread_id}/export")).json()["turns"][0]["sources"]
        markdown = (await bob_client.get(f"/api/threads/{thread_id}/export?format=markdown")).text
        [turn] = await app.state.services.conversations.turns(thread_id)
        replay = parse_sse(await bob_client.get(f"/api/runs/{turn['run_id']}/stream", headers=bob.headers()))
        replayed = next(d["sources"] for n, d in replay if n == "sources")
        for sources in (detail, export, replayed):
            assert sources and all(s["available"] is False and s["snippet"] == "" for s in sources)
            assert all(s["document"] == SOURCE_NOT_AVAILABLE and "doc_id" not in s for s in sources)
        assert SOURCE_NOT_AVAILABLE in markdown
        memory = (await bob_client.get(f"/api/threads/{thread_id}/memory")).json()
        assert memory["ledger"] and all(e["document"] == SOURCE_NOT_AVAILABLE for e in memory["ledger"])


async def test_deleting_a_user_removes_their_personal_documents_not_the_teams(app):
    async with client_of(app) as ann_client, client_of(app) as bob_client:
        ann, bob = await _people(app, ann_client, bob_client)
        secret_id = await _bob_has_a_secret(app, ann, bob)
        wiki = await ann_client.post(
            "/api/collections", json={"name": "Wiki", "users_write": True}, headers=ann.headers()
        )
        shared = (await upload(bob, "boats.md", PUBLIC, wiki.json()["id"])).json()["documents"][0]["id"]
        await app.state.services.knowledge.drain()
        gone = await ann_client.delete(f"/api/users/{bob.user['id']}", headers=ann.headers())
        assert gone.status_code == 204
        index = app.state.services.knowledge.index
        assert index.document(secret_id) is None and index.document(shared) is not None
        found = (await ann_client.post("/api/search", json={"query": QUESTION}, headers=ann.headers())).json()
        assert all(r["doc_id"] != secret_id for r in found["results"])


async def test_a_group_collection_is_read_by_its_groups_only_and_written_when_shared_for_writing(app):
    async with client_of(app) as ann_client, client_of(app) as bob_client, client_of(app) as cy_client:
        ann, bob = await _people(app, ann_client, bob_client)
        made = await ann_client.post(
            "/api/users", json={"email": "cy@team.org", "password": PASSWORD}, headers=ann.headers()
        )
        cy = await sign_in(cy_client, "cy@team.org")
        group = (await ann_client.post("/api/groups", json={"name": "Board"}, headers=ann.headers())).json()
        board = await ann_client.post(
            "/api/collections", json={"name": "Minutes", "kind": "group"}, headers=ann.headers()
        )
        assert made.status_code == 201 and board.status_code == 201, board.text
        board_id, share = board.json()["id"], f"/api/collections/{board.json()['id']}/groups/{group['id']}"
        member = f"/api/groups/{group['id']}/members/{bob.user['id']}"
        assert (await ann_client.put(member, headers=ann.headers())).status_code == 204
        assert (await ann_client.put(share, json={"access": "read"}, headers=ann.headers())).status_code == 204
        doc_id = (await upload(ann, "minutes.md", SECRET, board_id)).json()["documents"][0]["id"]
        await app.state.services.knowledge.drain()

        assert [g["members"] for g in (await ann_client.get("/api/groups")).json()] == [[bob.user["id"]]]
        assert (await bob_client.get(f"/api/documents/{doc_id}")).status_code == 200
        assert (await cy_client.get(f"/api/documents/{doc_id}")).status_code == 404
        assert "minutes" not in (await cy_client.get("/api/documents")).text
        assert board_id not in (await cy_client.get("/api/collections")).text
        found = (await cy_client.post("/api/search", json={"query": QUESTION}, headers=cy.headers())).json()
        assert found["results"] == []
        assert (await upload(bob, "notes.md", PUBLIC, board_id)).status_code == 403
        assert (await upload(cy, "notes.md", PUBLIC, board_id)).status_code == 404

        assert (await ann_client.put(share, json={"access": "write"}, headers=ann.headers())).status_code == 204
        assert (await upload(bob, "notes.md", PUBLIC, board_id)).status_code == 202
        assert (await ann_client.delete(member, headers=ann.headers())).status_code == 204
        assert (await bob_client.get(f"/api/documents/{doc_id}")).status_code == 404

        team = (await ann_client.post("/api/collections", json={"name": "All"}, headers=ann.headers())).json()
        bad = [
            await ann_client.put(
                f"/api/collections/{team['id']}/groups/{group['id']}", json={"access": "read"}, headers=ann.headers()
            ),
            await ann_client.put(
                f"/api/collections/{board_id}/groups/nope", json={"access": "read"}, headers=ann.headers()
            ),
            await ann_client.put(share, json={"access": "admin"}, headers=ann.headers()),
            await ann_client.put(f"/api/groups/{group['id']}/members/nobody", headers=ann.headers()),
            await ann_client.post("/api/groups", json={"name": "board"}, headers=ann.headers()),
            await bob_client.post("/api/groups", json={"name": "Mine"}, headers=bob.headers()),
            await bob_client.put(share, json={"access": "write"}, headers=bob.headers()),
        ]
        assert [r.status_code for r in bad] == [422, 404, 422, 404, 409, 403, 403]


def faq_app(tmp_path, sources: str) -> FastAPI:
    """An app with accounts whose FAQ answers the keeper's salary, citing these documents ("a.md, b.md")."""
    faq = tmp_path / "faq.yaml"
    faq.write_text(
        '- id: keeper-salary\n  questions: ["What does the chief lighthouse keeper earn?"]\n'
        f"  answer: The chief lighthouse keeper earns 91,000 crowns a year.\n  sources: [{sources}]\n"
    )
    return create_app(fake_settings(tmp_path / "data", auth="local", faq_path=faq))


async def test_an_faq_entry_citing_a_document_the_asker_may_not_read_is_not_used_for_them(tmp_path):
    application = faq_app(tmp_path, "salaries.md")
    async with LifespanManager(application), client_of(application) as ann_client, client_of(application) as bob_c:
        ann, bob = await _people(application, ann_client, bob_c)
        await _bob_has_a_secret(application, ann, bob)
        body = {"message": "What does the chief lighthouse keeper earn?"}
        bobs = (await bob_c.post("/api/chat", json=body, headers=bob.headers())).json()
        assert bobs["triage"]["route"] == "faq" and "91,000" in bobs["answer"]
        anns = (await ann_client.post("/api/chat", json=body, headers=ann.headers())).json()
        assert anns["triage"]["route"] != "faq" and "91,000" not in str(anns)


async def test_health_counts_only_what_the_asker_may_read_and_nothing_for_strangers(app):
    async with client_of(app) as ann_client, client_of(app) as bob_client, client_of(app) as stranger:
        ann, bob = await _people(app, ann_client, bob_client)
        await _bob_has_a_secret(app, ann, bob)
        counts = {}
        for who, client in (("ann", ann_client), ("bob", bob_client), ("stranger", stranger)):
            body = (await client.get("/api/health")).json()
            counts[who] = (body["documents"], body["chunks"] > 0)
    assert counts == {"ann": (1, True), "bob": (1, True), "stranger": (0, False)}


async def _bob_reads_the_minutes(app: FastAPI, ann: Person, bob: Person) -> str:
    """minutes.md in the Board group's collection, shared with Bob through the group, and boats.md in the team's
    collection; both indexed. The path of Bob's membership of the group (DELETE it to take his access away)."""
    group = (await ann.client.post("/api/groups", json={"name": "Board"}, headers=ann.headers())).json()
    kind = {"name": "Minutes", "kind": "group"}
    board = (await ann.client.post("/api/collections", json=kind, headers=ann.headers())).json()
    team = (await ann.client.post("/api/collections", json={"name": "All"}, headers=ann.headers())).json()
    member = f"/api/groups/{group['id']}/members/{bob.user['id']}"
    assert (await ann.client.put(member, headers=ann.headers())).status_code == 204
    share = f"/api/collections/{board['id']}/groups/{group['id']}"
    assert (await ann.client.put(share, json={"access": "read"}, headers=ann.headers())).status_code == 204
    assert (await upload(ann, "minutes.md", SECRET, board["id"])).status_code == 202
    assert (await upload(ann, "boats.md", PUBLIC, team["id"])).status_code == 202
    await app.state.services.knowledge.drain()
    return member


async def test_a_reloaded_faq_answer_no_longer_names_a_document_its_reader_lost(tmp_path):
    application = faq_app(tmp_path, "minutes.md, boats.md")
    async with LifespanManager(application), client_of(application) as ann_client, client_of(application) as bob_c:
        ann, bob = await _people(application, ann_client, bob_c)
        member = await _bob_reads_the_minutes(application, ann, bob)
        body = {"message": "What does the chief lighthouse keeper earn?"}
        asked = (await bob_c.post("/api/chat", json=body, headers=bob.headers())).json()
        assert asked["triage"]["faq"]["sources"] == ["minutes.md", "boats.md"]
        thread = f"/api/threads/{asked['thread_id']}"
        before = (await bob_c.get(thread, headers=bob.headers())).json()["messages"][1]["triage"]["faq"]
        assert before["sources"] == ["minutes.md", "boats.md"]

        assert (await ann_client.delete(member, headers=ann.headers())).status_code == 204
        detail = (await bob_c.get(thread, headers=bob.headers())).json()
        export = (await bob_c.get(f"{thread}/export", headers=bob.headers())).json()
        run = f"/api/runs/{export['turns'][0]['run_id']}/stream"
        replay = parse_sse(await bob_c.get(run, headers=bob.headers()))
        replayed = next(d["triage"] for n, d in replay if n == "done")
        for triage in (detail["messages"][1]["triage"], export["turns"][0]["triage"], replayed):
            assert triage["route"] == "faq" and triage["faq"]["sources"] == ["boats.md"]
        assert "minutes.md" not in str(detail) + str(export) + str(replay)
        assert "91,000" in detail["messages"][1]["content"]  # the answer the reader was given stays


async def test_past_steps_route_reasons_and_scope_no_longer_name_a_document_its_reader_lost(app):
    async with client_of(app) as ann_client, client_of(app) as bob_client:
        ann, bob = await _people(app, ann_client, bob_client)
        member = await _bob_reads_the_minutes(app, ann, bob)
        assert (await upload(ann, "salaries.md", SECRET)).status_code == 202  # Ann's own, never Bob's to read
        await app.state.services.knowledge.drain()
        asked = f"@minutes.md {QUESTION}"
        first = (await bob_client.post("/api/chat", json={"message": asked}, headers=bob.headers())).json()
        thread = f"/api/threads/{first['thread_id']}"
        body = {"message": "And when is it paid?", "thread_id": first["thread_id"]}
        carried = (await bob_client.post("/api/chat", json=body, headers=bob.headers())).json()
        assert carried["route_reason"] == "follow-up; keeping the scope minutes.md"
        assert carried["scope"] == {"documents": ["minutes.md"], "source": "carried"}
        assert (await bob_client.get(thread)).json()["scope"] == ["minutes.md"]
        assert (await bob_client.get(f"{thread}/memory")).json()["scope"] == ["minutes.md"]
        body = {"message": "@salaries.md What does the keeper earn?", "thread_id": first["thread_id"]}
        guessed = (await bob_client.post("/api/chat", json=body, headers=bob.headers())).json()
        assert "@salaries.md" in guessed["route_reason"]  # matched nothing Bob may read: as if it did not exist

        assert (await ann_client.delete(member, headers=ann.headers())).status_code == 204
        detail = (await bob_client.get(thread)).json()
        export = (await bob_client.get(f"{thread}/export")).json()
        markdown = (await bob_client.get(f"{thread}/export?format=markdown")).text
        replay = parse_sse(await bob_client.get(f"/api/runs/{export['turns'][1]['run_id']}/stream"))
        memory = (await bob_client.get(f"{thread}/memory")).json()
        routes = [t["route_reason"] for t in export["turns"]] + [d["route_reason"] for n, d in replay if n == "done"]
        lost = f"follow-up; keeping the scope {NAME_NOT_AVAILABLE}"
        assert routes == [f"mentions {NAME_NOT_AVAILABLE}", lost, guessed["route_reason"], lost]
        routed = [s for m in detail["messages"][1:4:2] for s in m["steps"] if s.startswith("router:")]
        assert len(routed) == 2 and all(NAME_NOT_AVAILABLE in s for s in routed)
        assert memory["scope"] == [] and detail["scope"] == []
        scopes = [t["scope"] for t in export["turns"]] + [m["scope"] for m in detail["messages"][1::2]]
        scopes += [d["scope"] for n, d in replay if n == "done"]
        assert scopes == [None] * 7  # the mention and the carried scope named only minutes.md
        assert detail["messages"][0]["content"] == export["turns"][0]["question"] == asked  # the reader's own words
        for seen in (str(detail), str(export), markdown, str(replay), str(memory)):
            assert "minutes.md" not in seen.replace(asked, "").replace(detail["title"], "")  # the title is its words

        body = {"message": "And when is that paid?", "thread_id": first["thread_id"]}
        later = (await bob_client.post("/api/chat", json=body, headers=bob.headers())).json()
        assert "scope" not in later["route_reason"] and "minutes" not in str(later) and "91,000" not in str(later)


async def test_a_lost_document_the_answer_did_not_cite_is_not_named_either(app, monkeypatch):
    reply = fake.ScriptedChatModel.reply

    def citing_the_boats_only(model: fake.ScriptedChatModel, messages: list) -> str:
        said = reply(model, messages)  # "According to the documents: <a sentence of each passage> [S#]. …"
        kept = [q for q in re.findall(r"[^.:]*\[S\d+\]\.", said) if "Boat" in q]
        return f"According to the documents: {' '.join(kept)}" if kept else said

    monkeypatch.setattr(fake.ScriptedChatModel, "reply", citing_the_boats_only)
    async with client_of(app) as ann_client, client_of(app) as bob_client:
        ann, bob = await _people(app, ann_client, bob_client)
        member = await _bob_reads_the_minutes(app, ann, bob)
        body = {"message": "@minutes.md @boats.md Do boat trips leave the harbour on Saturdays in summer?"}
        asked = (await bob_client.post("/api/chat", json=body, headers=bob.headers())).json()
        assert asked["route_reason"] == "mentions minutes.md, boats.md"
        [turn] = await app.state.services.conversations.turns(asked["thread_id"])
        assert [s["document"] for s in turn["sources"]] == ["boats.md"]  # minutes.md was searched, not cited

        assert (await ann_client.delete(member, headers=ann.headers())).status_code == 204
        export = (await bob_client.get(f"/api/threads/{asked['thread_id']}/export")).json()
        assert export["turns"][0]["route_reason"] == f"mentions {NAME_NOT_AVAILABLE}, boats.md"


def test_a_withheld_name_leaves_names_that_contain_it_and_reads_names_as_text():
    names = DocumentNames(
        readable=frozenset({"data.md", "Budget (final).md", "board a.md", "x.md"}),
        hidden=frozenset({"a.md", "Budget (draft).md", "x.md.bak"}),
    )
    said = "Searching data.md, a.md, Budget (draft).md and Budget (final).md…"
    assert names.text(said) == (f"Searching data.md, {NAME_NOT_AVAILABLE}, {NAME_NOT_AVAILABLE} and Budget (final).md…")
    assert names.text("mentions a.md.") == f"mentions {NAME_NOT_AVAILABLE}."
    assert names.text("a.mdx and xa.md") == "a.mdx and xa.md"
    assert names.text("Searching board a.md…") == "Searching board a.md…"  # a readable name holding a hidden one
    assert names.text("mentions x.md.bak and x.md") == f"mentions {NAME_NOT_AVAILABLE} and x.md"


async def test_a_follow_up_prompt_no_longer_shows_the_model_a_passage_its_asker_lost(app, monkeypatch):
    shown: list[str] = []  # each prompt's <knowledge_base> blocks, earlier turns' replayed ones included
    reply = fake.ScriptedChatModel.reply

    def recording(model: fake.ScriptedChatModel, messages: list) -> str:
        shown.append(
            "\n".join(re.findall(r"<knowledge_base>(.*?)</knowledge_base>", "\n".join(m.text for m in messages), re.S))
        )
        return reply(model, messages)

    monkeypatch.setattr(fake.ScriptedChatModel, "reply", recording)
    afresh: list[str] = []  # the turns whose model calls may reuse nothing cached (see test_lease.py)
    monkeypatch.setattr(ModelLease, "start_afresh", lambda lease: afresh.append(lease.thread_id))
    epochs: list[int] = []  # each turn's cache epoch: what every replica's cache of the thread is checked against
    begin = ModelLease.begin
    monkeypatch.setattr(
        ModelLease, "begin", lambda lease, epoch, cut=False: (epochs.append(epoch), begin(lease, epoch, cut))[1]
    )
    async with client_of(app) as ann_client, client_of(app) as bob_client:
        ann, bob = await _people(app, ann_client, bob_client)
        member = await _bob_reads_the_minutes(app, ann, bob)
        [board] = [c for c in (await ann_client.get("/api/collections")).json() if c["name"] == "Minutes"]
        budget = b"# Budget\n\nThe lighthouse budget for next year is 2.4 million crowns."
        assert (await upload(ann, "budget.md", budget, board["id"])).status_code == 202
        await app.state.services.knowledge.drain()
        thread: dict = {}
        for question in (QUESTION, "What is the lighthouse budget for next year?", "When do the boat trips leave?"):
            asked = await bob_client.post("/api/chat", json={"message": question, **thread}, headers=bob.headers())
            thread = {"thread_id": asked.json()["thread_id"]}
        assert "paid in March" in shown[-1] and "2.4 million" in shown[-1]  # the first two turns, replayed
        assert afresh == []

        assert (await ann_client.delete(member, headers=ann.headers())).status_code == 204
        body = {"message": "Are boat trips in summer only?", "use_memory": False, **thread}
        assert (await bob_client.post("/api/chat", json=body, headers=bob.headers())).status_code == 200
        assert afresh == []  # a turn without memory shows no earlier turn: it leaves the window to the next one
        shown.clear()
        body = {"message": "And are the boat trips in winter too?", **thread}
        assert (await bob_client.post("/api/chat", json=body, headers=bob.headers())).status_code == 200
        assert shown and not [b for b in shown if "paid in March" in b or "2.4 million" in b or "minutes.md" in b]
        assert afresh == [thread["thread_id"]]
        assert epochs == [0, 0, 0, 0, 1]  # the cut moved the thread's cache to a new epoch

        body = {"message": "Do the boat trips need a booking?", **thread}
        assert (await bob_client.post("/api/chat", json=body, headers=bob.headers())).status_code == 200
        assert epochs[-1] == 1 and afresh == [thread["thread_id"]]  # kept, and nothing more to cut


async def test_a_new_threads_first_run_is_listed_for_its_owner_only(app):
    async with client_of(app) as ann_client, client_of(app) as bob_client:
        ann, bob = await _people(app, ann_client, bob_client)
        conversations = app.state.services.conversations
        runlog = RunLog(app.state.services.runner.runlog.db, "another-replica")  # its runs, as a shared database has
        hello = (await bob_client.post("/api/chat", json={"message": "Hello"}, headers=bob.headers())).json()
        assert await conversations.claim("bobs-first", bob.user["id"])  # as POST /api/chat/stream does on a new thread
        await runlog.start("run-1", "bobs-first", "What do lighthouse keepers earn?", "2026-11-26T10:00:00.000+00:00")
        await runlog.start("run-2", "bobs-first", "And in winter?", "2026-11-26T10:00:01.000+00:00")  # queued behind
        await runlog.start("run-3", hello["thread_id"], "And you?", "2026-11-26T10:00:02.000+00:00")  # a stored one's
        bobs = (await bob_client.get("/api/threads")).json()
        assert [(t["thread_id"], t["title"]) for t in bobs] == [
            (hello["thread_id"], "Hello"),  # updated after the new thread's first run began: newest first
            ("bobs-first", "What do lighthouse keepers earn?"),
        ]
        assert (await ann_client.get("/api/threads")).json() == []


async def _names(person: Person) -> list[str]:
    """The documents the person's document list shows."""
    return sorted(d["name"] for d in (await person.client.get("/api/documents", headers=person.headers())).json())


async def test_an_admin_renames_a_collection_and_deletes_it_only_once_it_holds_nothing(app):
    async with client_of(app) as ann_client, client_of(app) as bob_client:
        ann, bob = await _people(app, ann_client, bob_client)
        await _bob_reads_the_minutes(app, ann, bob)
        listed = {c["name"]: c for c in (await ann_client.get("/api/collections", headers=ann.headers())).json()}
        board, team, personal = listed["Minutes"], listed["All"], listed["Personal"]
        path = f"/api/collections/{board['id']}"

        renamed = await ann_client.patch(path, json={"name": " Board minutes "}, headers=ann.headers())
        assert renamed.status_code == 200 and renamed.json()["name"] == "Board minutes"
        assert renamed.json()["groups"] == board["groups"] and renamed.json()["kind"] == "group"
        bobs = (await bob_client.get("/api/collections", headers=bob.headers())).json()
        assert "Board minutes" in [c["name"] for c in bobs]  # the group still reads it, under its new name
        taken = await ann_client.patch(path, json={"name": "all"}, headers=ann.headers())
        assert taken.status_code == 409 and "exists already" in taken.json()["detail"]
        writable = await ann_client.patch(path, json={"users_write": True}, headers=ann.headers())
        assert writable.status_code == 422 and "team collections" in writable.json()["detail"]
        opened = await ann_client.patch(
            f"/api/collections/{team['id']}", json={"users_write": True}, headers=ann.headers()
        )
        assert opened.status_code == 200 and opened.json()["users_write"] and opened.json()["name"] == "All"
        for bad in ({"name": ""}, {"name": "a\nb"}, {"colour": "red"}):
            assert (await ann_client.patch(path, json=bad, headers=ann.headers())).status_code == 422, bad
        assert (await bob_client.patch(path, json={"name": "Mine"}, headers=bob.headers())).status_code == 403
        assert (await bob_client.delete(path, headers=bob.headers())).status_code == 403
        for other in (
            f"/api/collections/{personal['id']}",
            "/api/collections/no-such",
        ):  # nobody renames a personal one
            assert (await ann_client.patch(other, json={"name": "X"}, headers=ann.headers())).status_code == 404
            assert (await ann_client.delete(other, headers=ann.headers())).status_code == 404

        full = await ann_client.delete(path, headers=ann.headers())
        assert full.status_code == 409 and "still holds 1 document:" in full.json()["detail"]
        assert await _names(bob) == ["boats.md", "minutes.md"]  # nothing stored was lost
        [minutes] = [d for d in (await ann_client.get("/api/documents")).json() if d["name"] == "minutes.md"]
        move = await ann_client.patch(
            f"/api/documents/{minutes['id']}", json={"collection_id": team["id"]}, headers=ann.headers()
        )
        assert move.status_code == 200 and move.json()["collection"] == team["id"]
        assert (await ann_client.delete(path, headers=ann.headers())).status_code == 204
        names = [c["name"] for c in (await ann_client.get("/api/collections", headers=ann.headers())).json()]
        assert names == ["Personal", "All"]
        assert await _names(bob) == ["boats.md", "minutes.md"]  # in the team collection now: everyone reads it


async def test_a_moved_document_is_read_by_its_new_collections_readers_only(app):
    async with client_of(app) as ann_client, client_of(app) as bob_client:
        ann, bob = await _people(app, ann_client, bob_client)
        await _bob_reads_the_minutes(app, ann, bob)
        collections = {c["name"]: c for c in (await ann_client.get("/api/collections", headers=ann.headers())).json()}
        docs = {d["name"]: d for d in (await ann_client.get("/api/documents")).json()}
        minutes = f"/api/documents/{docs['minutes.md']['id']}"
        asked = await bob_client.post("/api/chat", json={"message": QUESTION, "mode": "rag"}, headers=bob.headers())
        assert "91,000" in asked.text  # Bob reads the minutes through the Board group

        to_personal = {"collection_id": collections["Personal"]["id"]}
        refused = await bob_client.patch(minutes, json=to_personal, headers=bob.headers())
        assert refused.status_code == 403 and "read-only" in refused.json()["detail"]  # he only reads it
        bobs_personal = (await bob_client.get("/api/collections", headers=bob.headers())).json()[0]["id"]
        into_bobs = await ann_client.patch(minutes, json={"collection_id": bobs_personal}, headers=ann.headers())
        assert into_bobs.status_code == 404  # Ann may not even see Bob's personal collection
        moved = await ann_client.patch(minutes, json=to_personal, headers=ann.headers())
        assert moved.status_code == 200 and moved.json()["collection"] == to_personal["collection_id"]

        assert await _names(bob) == ["boats.md"]
        again = await bob_client.post("/api/chat", json={"message": QUESTION, "mode": "rag"}, headers=bob.headers())
        assert "91,000" not in again.text and "minutes.md" not in again.text
        thread = (await bob_client.get(f"/api/threads/{asked.json()['thread_id']}", headers=bob.headers())).json()
        assert "minutes.md" not in str(thread["messages"][1]["sources"])  # his earlier answer's citation is withheld

        assert (await upload(ann, "minutes.md", PUBLIC, collections["All"]["id"])).status_code == 202
        await app.state.services.knowledge.drain()
        clash = await ann_client.patch(minutes, json={"collection_id": collections["All"]["id"]}, headers=ann.headers())
        assert clash.status_code == 409 and "already holds a document named 'minutes.md'" in clash.json()["detail"]
        for bad in ({}, {"collection_id": ""}, {"collection_id": "x", "name": "y"}):
            assert (await ann_client.patch(minutes, json=bad, headers=ann.headers())).status_code == 422, bad
        assert (
            await ann_client.patch("/api/documents/no-such", json=to_personal, headers=ann.headers())
        ).status_code == 404


async def test_without_accounts_a_document_has_no_collection_to_move_to(tmp_path):
    application = create_app(fake_settings(tmp_path / "data"))
    async with LifespanManager(application), client_of(application) as client:
        accepted = await client.post("/api/documents", files=[("files", ("boats.md", io.BytesIO(PUBLIC)))])
        doc_id = accepted.json()["documents"][0]["id"]
        moved = await client.patch(f"/api/documents/{doc_id}", json={"collection_id": "team"})
        assert moved.status_code == 422 and "RAG_AUTH=local" in moved.json()["detail"]


async def test_a_deleted_group_takes_its_members_access_with_it_and_a_renamed_one_keeps_it(app):
    async with client_of(app) as ann_client, client_of(app) as bob_client:
        ann, bob = await _people(app, ann_client, bob_client)
        await _bob_reads_the_minutes(app, ann, bob)
        [board] = (await ann_client.get("/api/groups", headers=ann.headers())).json()
        other = (await ann_client.post("/api/groups", json={"name": "Crew"}, headers=ann.headers())).json()
        path = f"/api/groups/{board['id']}"

        renamed = await ann_client.patch(path, json={"name": "Directors"}, headers=ann.headers())
        assert renamed.status_code == 200 and renamed.json() == board | {"name": "Directors"}
        assert await _names(bob) == ["boats.md", "minutes.md"]
        taken = await ann_client.patch(f"/api/groups/{other['id']}", json={"name": "directors"}, headers=ann.headers())
        assert taken.status_code == 409 and "exists already" in taken.json()["detail"]
        assert (await ann_client.patch(path, json={"name": " "}, headers=ann.headers())).status_code == 422
        assert (await bob_client.patch(path, json={"name": "Mine"}, headers=bob.headers())).status_code == 403
        assert (await bob_client.delete(path, headers=bob.headers())).status_code == 403
        for method in ("PATCH", "DELETE"):
            missing = await ann_client.request(method, "/api/groups/no-such", json={"name": "X"}, headers=ann.headers())
            assert missing.status_code == 404 and "GET /api/groups" in missing.json()["detail"]

        assert (await ann_client.delete(path, headers=ann.headers())).status_code == 204
        assert await _names(bob) == ["boats.md"]
        assert [g["name"] for g in (await ann_client.get("/api/groups", headers=ann.headers())).json()] == ["Crew"]
        minutes = [
            c
            for c in (await ann_client.get("/api/collections", headers=ann.headers())).json()
            if c["name"] == "Minutes"
        ]
        assert minutes[0]["groups"] == []  # its share went with the group; the collection and its document stay
        assert "minutes.md" in await _names(ann)


async def test_a_collection_removed_while_an_upload_into_it_is_parsed_gets_no_document_nobody_could_read(
    app, monkeypatch
):
    """The upload checked the collection, then parsed its file; the admin removed the (still empty) collection
    meanwhile. Filing the document there would leave it in no collection anyone reads, not even an admin."""
    async with client_of(app) as ann_client, client_of(app) as bob_client:
        ann, _ = await _people(app, ann_client, bob_client)
        doomed = (await ann_client.post("/api/collections", json={"name": "Doomed"}, headers=ann.headers())).json()
        collections, ingestor = app.state.services.knowledge.collections, app.state.services.knowledge.ingestor
        prepare = ingestor.prepare

        def removed_meanwhile(name: str, data: bytes):
            assert collections._delete(doomed["id"]) is None  # the admin's DELETE, done while the file is parsed
            return prepare(name, data)

        monkeypatch.setattr(ingestor, "prepare", removed_meanwhile)
        refused = await upload(ann, "boats.md", PUBLIC, doomed["id"])
        assert refused.status_code == 409 and "collection was removed" in refused.json()["detail"], refused.text
        await app.state.services.knowledge.drain()
        assert app.state.services.knowledge.index.documents() == []
        monkeypatch.setattr(ingestor, "prepare", prepare)
        assert (await upload(ann, "boats.md", PUBLIC)).status_code == 202  # into her own collection, as usual


async def test_a_move_into_a_collection_removed_meanwhile_changes_nothing(app, monkeypatch):
    async with client_of(app) as ann_client, client_of(app) as bob_client:
        ann, bob = await _people(app, ann_client, bob_client)
        await _bob_reads_the_minutes(app, ann, bob)
        empty = (await ann_client.post("/api/collections", json={"name": "Empty"}, headers=ann.headers())).json()
        collections = app.state.services.knowledge.collections
        move, deleted = collections.move, []

        async def removed_meanwhile(doc_id: str, source: str, target: str) -> bool:
            deleted.append((await ann_client.delete(f"/api/collections/{target}", headers=ann.headers())).status_code)
            return await move(doc_id, source, target)  # after the route checked the target

        monkeypatch.setattr(collections, "move", removed_meanwhile)
        docs = {d["name"]: d for d in (await ann_client.get("/api/documents")).json()}
        moved = await ann_client.patch(
            f"/api/documents/{docs['minutes.md']['id']}", json={"collection_id": empty["id"]}, headers=ann.headers()
        )
        assert deleted == [204] and moved.status_code == 409 and "changed meanwhile" in moved.json()["detail"]
        after = {d["name"]: d for d in (await ann_client.get("/api/documents")).json()}
        assert after["minutes.md"]["collection"] == docs["minutes.md"]["collection"]
        assert await _names(bob) == ["boats.md", "minutes.md"]


async def test_a_user_moves_their_own_document_only_into_a_collection_they_may_write(app):
    async with client_of(app) as ann_client, client_of(app) as bob_client:
        ann, bob = await _people(app, ann_client, bob_client)
        await _bob_reads_the_minutes(app, ann, bob)
        secret_id = await _bob_has_a_secret(app, ann, bob)
        theirs = {c["name"]: c for c in (await bob_client.get("/api/collections", headers=bob.headers())).json()}
        path, into_all = f"/api/documents/{secret_id}", {"collection_id": theirs["All"]["id"]}

        read_only = await bob_client.patch(path, json=into_all, headers=bob.headers())
        assert read_only.status_code == 403 and "not add documents" in read_only.json()["detail"]
        anns = (await ann_client.get("/api/collections", headers=ann.headers())).json()[0]["id"]  # her personal one
        hidden = await bob_client.patch(path, json={"collection_id": anns}, headers=bob.headers())
        missing = await bob_client.patch(path, json={"collection_id": "no-such"}, headers=bob.headers())
        assert hidden.status_code == missing.status_code == 404  # as if it did not exist
        assert hidden.json()["detail"] == missing.json()["detail"].replace("no-such", anns)
        assert "salaries.md" not in await _names(ann)

        opened = await ann_client.patch(
            f"/api/collections/{theirs['All']['id']}", json={"users_write": True}, headers=ann.headers()
        )
        assert opened.status_code == 200
        moved = await bob_client.patch(path, json=into_all, headers=bob.headers())
        assert moved.status_code == 200 and moved.json()["collection"] == theirs["All"]["id"]
        assert "salaries.md" in await _names(ann)  # the team collection: everyone reads it now


async def test_collection_names_and_moves_are_matched_without_case_beyond_ascii_and_typos_are_refused(app):
    """A tester made ÉQUIPE and équipe side by side (SQLite's unique index folds ASCII letters only), and a create
    with "user_write" (for users_write) or "members" was a 201 that ignored them."""
    async with client_of(app) as ann_client:
        await ann_client.post("/api/auth/setup", json={"email": "ann@team.org", "password": PASSWORD})
        ann = await sign_in(ann_client, "ann@team.org")
        made = await ann_client.post("/api/collections", json={"name": "ÉQUIPE"}, headers=ann.headers())
        assert made.status_code == 201, made.text
        twin = await ann_client.post("/api/collections", json={"name": "équipe"}, headers=ann.headers())
        assert twin.status_code == 409 and "exists already" in twin.json()["detail"]
        other = await ann_client.post("/api/collections", json={"name": "Öffentlich"}, headers=ann.headers())
        renamed = await ann_client.patch(
            f"/api/collections/{other.json()['id']}", json={"name": "équipe"}, headers=ann.headers()
        )
        assert renamed.status_code == 409 and "exists already" in renamed.json()["detail"]
        for typo, field in (
            ({"name": "Typo", "user_write": True}, "user_write"),
            ({"name": "Typo", "users_write": "false"}, "users_write"),
        ):
            refused = await ann_client.post("/api/collections", json=typo, headers=ann.headers())
            assert refused.status_code == 422 and field in refused.json()["detail"], refused.text
        group = await ann_client.post("/api/groups", json={"name": "G", "members": ["x"]}, headers=ann.headers())
        assert group.status_code == 422 and "members" in group.json()["detail"], group.text
        assert (await ann_client.post("/api/groups", json={"name": "ÉQUIPE"}, headers=ann.headers())).status_code == 201
        twin_group = await ann_client.post("/api/groups", json={"name": "équipe"}, headers=ann.headers())
        assert twin_group.status_code == 409, twin_group.text
        other_group = await ann_client.post("/api/groups", json={"name": "Öffentlich"}, headers=ann.headers())
        renamed_group = await ann_client.patch(
            f"/api/groups/{other_group.json()['id']}", json={"name": "équipe"}, headers=ann.headers()
        )
        assert renamed_group.status_code == 409, renamed_group.text

        team = made.json()["id"]
        assert (await upload(ann, "Été.md", PUBLIC, team)).status_code == 202
        assert (await upload(ann, "été.md", SECRET, other.json()["id"])).status_code == 202
        await app.state.services.knowledge.drain()
        docs = {(d["name"], d["collection"]): d for d in (await ann_client.get("/api/documents")).json()}
        moving = docs[("été.md", other.json()["id"])]["id"]
        clash = await ann_client.patch(f"/api/documents/{moving}", json={"collection_id": team}, headers=ann.headers())
        assert clash.status_code == 409 and "already holds a document named" in clash.json()["detail"], clash.text
        names = [c["name"] for c in (await ann_client.get("/api/collections", headers=ann.headers())).json()]
        assert sorted(names) == ["Personal", "ÉQUIPE", "Öffentlich"]  # nothing stored was lost


async def test_refusals_found_by_a_probe_of_accounts_say_what_to_fix(app):
    """users_write on a new group collection was dropped (201, false), a team collection could be named "Personal"
    (listed beside each user's own, read by all), a member was told only admins "manage accounts" on a collection
    route, a display name of zero-width spaces or one reversing the text was taken, an e-mail address was refused
    with a regular expression, and a key of 1e-300 days was made dead."""
    async with client_of(app) as ann_client, client_of(app) as bob_client:
        ann, bob = await _people(app, ann_client, bob_client)
        made = await ann_client.post(
            "/api/collections", json={"name": "G3", "kind": "group", "users_write": True}, headers=ann.headers()
        )
        assert made.status_code == 422 and "users_write is for team collections" in made.json()["detail"]
        for name in ("Personal", " personal "):
            made = await ann_client.post("/api/collections", json={"name": name}, headers=ann.headers())
            assert made.status_code == 422 and "each user's own collection" in made.json()["detail"], made.text
        team = await ann_client.post("/api/collections", json={"name": "Handbooks"}, headers=ann.headers())
        renamed = await ann_client.patch(
            f"/api/collections/{team.json()['id']}", json={"name": "PERSONAL"}, headers=ann.headers()
        )
        assert renamed.status_code == 422 and "each user's own collection" in renamed.json()["detail"]
        assert [c["name"] for c in (await bob_client.get("/api/collections")).json()] == ["Personal", "Handbooks"]

        refused = await bob_client.post("/api/collections", json={"name": "mine"}, headers=bob.headers())
        assert refused.status_code == 403 and refused.json()["detail"].startswith(
            "Only an admin may manage collections"
        )
        refused = await bob_client.post("/api/groups", json={"name": "mine"}, headers=bob.headers())
        assert refused.status_code == 403 and refused.json()["detail"] == "Only an admin may manage groups"

        for display_name in ("\u200b\u200b", "\u2800", "\u202eevil"):
            body = {"email": "carl@team.org", "password": PASSWORD, "display_name": display_name}
            made = await ann_client.post("/api/users", json=body, headers=ann.headers())
            assert made.status_code == 422, (display_name, made.text)
            assert "reorder the text, not only invisible characters" in made.json()["detail"]
        body = {"email": "carl@team.org", "password": PASSWORD, "display_name": "  "}
        assert (await ann_client.post("/api/users", json=body, headers=ann.headers())).status_code == 201  # none

        made = await ann_client.post("/api/users", json={"email": "a@b", "password": PASSWORD}, headers=ann.headers())
        assert made.json()["detail"] == "email: not an e-mail address (name@domain.tld, no spaces)"
        for path, body in (
            ("/api/keys", {"name": "k", "expires_days": 1e-300}),
            ("/api/invitations", {"expires_days": 1e-9}),
        ):
            made = await ann_client.post(path, json=body, headers=ann.headers())
            assert (
                made.status_code == 422 and "expires_days" in made.json()["detail"] and "0.01" in made.json()["detail"]
            )


async def test_a_mention_of_a_name_two_readable_collections_hold_searches_both_not_a_dead_end(app):
    # Bob's personal salaries.md and the team's Salaries.md: "@salaries.md" answered '"@salaries.md" matches several
    # documents: salaries.md, Salaries.md. Check the name, or type @ to pick from the document list', and picking
    # from the list wrote the same mention again, so neither could ever be aimed at
    async with client_of(app) as ann_client, client_of(app) as bob_client:
        ann, bob = await _people(app, ann_client, bob_client)
        await _bob_has_a_secret(app, ann, bob)
        team = await ann_client.post("/api/collections", json={"name": "Pay"}, headers=ann.headers())
        table = b"# Pay table\n\nThe salary of a harbour pilot is 64,000 crowns a year."
        assert (await upload(ann, "Salaries.md", table, team.json()["id"])).status_code == 202
        await app.state.services.knowledge.drain()
        for message in (f"@salaries.md {QUESTION}", "@Salaries what does a harbour pilot earn?"):
            answer = await bob_client.post("/api/chat", json={"message": message}, headers=bob.headers())
            assert answer.status_code == 200 and "matches several" not in answer.text, message
            assert {s["document"] for s in answer.json()["sources"]} <= {"salaries.md", "Salaries.md"}, message
            assert answer.json()["sources"], message
