import asyncio
import io
import threading

import httpx
import pytest
from asgi_lifespan import LifespanManager

from backend.main import create_app
from backend.tests.conftest import SAMPLE_DOCS, fake_settings
from backend.tests.rag.bombs import docx_bomb, pdf_stream_bomb

NOTE = b"# Bike shed\n\nThe bike shed code is 4711. It is behind building C."


async def upload(client, *files: tuple[str, bytes]):
    return await client.post("/api/documents", files=[("files", (n, io.BytesIO(d))) for n, d in files])


async def wait_ready(client, doc_id: str) -> dict:
    for _ in range(200):
        body = (await client.get(f"/api/documents/{doc_id}")).json()
        if body["status"] in ("ready", "failed"):
            return body
        await asyncio.sleep(0.05)
    raise AssertionError(f"document {doc_id} never finished: {body}")


async def test_list_documents_has_sample_corpus_with_fields(client):
    docs = (await client.get("/api/documents")).json()
    assert {d["name"] for d in docs} == {p.name for p in SAMPLE_DOCS.iterdir()}
    row = next(d for d in docs if d["name"].endswith(".pdf"))
    assert row["type"] == "pdf" and row["pages"] >= 2 and row["chunks"] > 0 and row["size"] > 0
    assert row["status"] == "ready" and row["ingested_at"]


async def test_upload_then_progress_then_ask_about_it(client):
    response = await upload(client, ("bike-shed.md", NOTE))
    assert response.status_code == 202
    doc = response.json()["documents"][0]
    assert doc["name"] == "bike-shed.md" and doc["status"] in ("queued", "processing", "ready")
    done = await wait_ready(client, doc["id"])
    assert done["status"] == "ready" and done["progress"] == 1 and done["chunks"] == 1
    answer = (await client.post("/api/chat", json={"message": "@bike-shed what is the code?"})).json()
    assert "4711" in answer["answer"] and answer["sources"][0]["document"] == "bike-shed.md"


async def test_upload_several_files_accepts_good_and_reports_bad(client):
    response = await upload(client, ("a.md", b"Alpha text."), ("b.exe", b"MZ"))
    assert response.status_code == 202
    body = response.json()
    assert [d["name"] for d in body["documents"]] == ["a.md"]
    assert body["rejected"][0]["name"] == "b.exe" and body["rejected"][0]["status"] == 415


@pytest.mark.parametrize(
    ("name", "data", "status", "words"),
    [
        ("virus.exe", b"MZ...", 415, "not supported"),
        ("broken.pdf", b"%PDF-1.4 garbage", 422, "PDF"),
        ("empty.md", b"   \n\n", 422, "no text"),
        ("../../etc/passwd.md", b"x", 422, "not allowed"),
        ("dir/name.md", b"x", 422, "not allowed"),
        ("report\u202egnp.md", b"x", 422, "invisible control characters"),  # shows as "reportdm.png"
        ("rub\x7fout.md", b"x", 422, "invisible control characters"),
        ("two\u2028lines.md", b"x", 422, "line breaks"),  # listed on two lines (a probe)
        ("two\u2029paragraphs.md", b"x", 422, "line breaks"),
    ],
)
async def test_bad_upload_gets_clear_4xx_and_stores_nothing(client, name, data, status, words):
    before = (await client.get("/api/documents")).json()
    response = await upload(client, (name, data))
    assert response.status_code == status, response.text
    assert words.lower() in response.json()["detail"].lower()
    assert (await client.get("/api/documents")).json() == before


async def test_oversized_upload_is_413_naming_the_limit(tmp_path):
    app = create_app(fake_settings(tmp_path, max_upload_mb=0.001))
    async with (
        LifespanManager(app),
        httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://t") as c,
    ):
        response = await upload(c, ("big.md", b"word " * 1000))
        assert response.status_code == 413 and "0.001 MB" in response.json()["detail"]
        assert (await c.get("/api/documents")).json() == []


async def test_expansion_bombs_are_413_naming_the_setting_and_stored_documents_stay(tmp_path):
    app = create_app(fake_settings(tmp_path, upload_expanded_mb=50, upload_pdf_stream_mb=8))
    async with (
        LifespanManager(app),
        httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://t", timeout=60) as c,
    ):
        kept = (await upload(c, ("bike-shed.md", NOTE))).json()["documents"][0]
        await wait_ready(c, kept["id"])
        before = (await c.get("/api/documents")).json()
        docx = await upload(c, ("report.docx", docx_bomb(100)))
        assert docx.status_code == 413 and "RAG_UPLOAD_EXPANDED_MB" in docx.json()["detail"]
        pdf = await upload(c, ("scan.pdf", pdf_stream_bomb(20)))
        assert pdf.status_code == 413 and "RAG_UPLOAD_PDF_STREAM_MB" in pdf.json()["detail"]
        assert (await c.get("/api/documents")).json() == before
        hits = (await c.post("/api/search", json={"query": "bike shed", "documents": ["bike-shed.md"]})).json()
        assert hits["results"], "the document stored before the bombs is still searchable"


async def test_reupload_unchanged_is_no_op_and_changed_replaces(client):
    doc = (await upload(client, ("bike-shed.md", NOTE))).json()["documents"][0]
    await wait_ready(client, doc["id"])
    same = (await upload(client, ("bike-shed.md", NOTE))).json()["documents"][0]
    assert same["id"] == doc["id"] and same["status"] == "ready"
    changed = (await upload(client, ("bike-shed.md", b"# Bike shed\n\nThe code changed to 9000."))).json()
    await wait_ready(client, doc["id"])
    hits = (await client.post("/api/search", json={"query": "bike shed code", "documents": ["bike-shed.md"]})).json()
    assert changed["documents"][0]["id"] == doc["id"]
    assert [("9000" in r["snippet"], "4711" in r["snippet"]) for r in hits["results"]] == [(True, False)]


async def test_delete_document_removes_it_from_list_and_search(client):
    doc = (await upload(client, ("bike-shed.md", NOTE))).json()["documents"][0]
    await wait_ready(client, doc["id"])
    assert (await client.delete(f"/api/documents/{doc['id']}")).status_code == 204
    assert doc["id"] not in [d["id"] for d in (await client.get("/api/documents")).json()]
    results = (await client.post("/api/search", json={"query": "bike shed code 4711"})).json()["results"]
    assert all(r["document"] != "bike-shed.md" for r in results)
    assert (await client.get(f"/api/documents/{doc['id']}")).status_code == 404
    assert (await client.delete(f"/api/documents/{doc['id']}")).status_code == 404


async def test_search_api_returns_sources_and_timings_and_respects_filter(client):
    body = (await client.post("/api/search", json={"query": "Zephyr-9 error code E7", "k": 3})).json()
    assert 1 <= len(body["results"]) <= 3
    assert body["results"][0]["document"].startswith("zephyr-9")
    assert {"vector", "bm25", "expand", "rerank", "total"} <= set(body["timings"])
    scoped = await client.post("/api/search", json={"query": "passwords", "documents": ["employee-handbook.md"]})
    assert {r["document"] for r in scoped.json()["results"]} == {"employee-handbook.md"}


async def test_search_api_bad_input(client):
    assert (await client.post("/api/search", json={"query": ""})).status_code == 422
    assert (await client.post("/api/search", json={"query": "x", "k": 0})).status_code == 422
    unknown = await client.post("/api/search", json={"query": "x", "documents": ["nope.md"]})
    assert unknown.status_code == 422 and "nope.md" in unknown.json()["detail"]


async def test_chat_with_unknown_mention_says_so_without_searching_everything(client):
    from bench.lib.sse import parse_sse

    events = parse_sse(await client.post("/api/chat/stream", json={"message": "@nosuchdoc what is it?"}))
    router_end = next(d for n, d in events if n == "status" and d["node"] == "router" and d["phase"] == "end")
    assert router_end["label"] == 'No document matches "@nosuchdoc"'
    assert "retriever" not in [d.get("node") for n, d in events if n == "status"]
    assert "sources" not in [n for n, _ in events]
    assert 'No document matches "@nosuchdoc"' in events[-1][1]["answer"]
    assert "".join(d["text"] for n, d in events if n == "token") == events[-1][1]["answer"]


async def test_restart_keeps_index(settings):
    app = create_app(settings)
    async with (
        LifespanManager(app),
        httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://t") as c,
    ):
        doc = (await upload(c, ("bike-shed.md", NOTE))).json()["documents"][0]
        await wait_ready(c, doc["id"])
    again = create_app(settings)
    async with (
        LifespanManager(again),
        httpx.AsyncClient(transport=httpx.ASGITransport(app=again), base_url="http://t") as c,
    ):
        assert [d["name"] for d in (await c.get("/api/documents")).json()] == ["bike-shed.md"]
        results = (await c.post("/api/search", json={"query": "bike shed code"})).json()["results"]
        assert results[0]["document"] == "bike-shed.md" and "4711" in results[0]["snippet"]


async def test_a_source_span_opens_the_passage_in_the_document_text_and_the_pdf_page(client):
    """Show me where: a search hit's start/end index the stored text; a PDF hit lies on its page's span."""
    docs = {d["name"]: d for d in (await client.get("/api/documents")).json()}
    for name, query in [("employee-handbook.md", "carry over unused leave"), ("travel-policy.pdf", "hotel")]:
        body = {"query": query, "documents": [name]}
        hit = (await client.post("/api/search", json=body)).json()["results"][0]
        assert hit["doc_id"] == docs[name]["id"]
        text = (await client.get(f"/api/documents/{hit['doc_id']}/text")).json()
        passage = text["text"][hit["start"] : hit["end"]]
        assert " ".join(hit["snippet"].rstrip("…").split()[:6]) in " ".join(passage.split())
        if name.endswith(".pdf"):
            span = next(p for p in text["pages"] if p["page"] == hit["page"])
            assert hit["start"] < span["end"] and hit["end"] > span["start"]  # the passage (with neighbours) is on it
            original = await client.get(f"/api/documents/{hit['doc_id']}/file")
            assert original.content.startswith(b"%PDF") and original.headers["content-type"] == "application/pdf"
        else:
            assert text["pages"] is None
    md = await client.get(f"/api/documents/{docs['employee-handbook.md']['id']}/file")
    assert md.headers["content-disposition"].startswith("attachment") and b"leave" in md.content.lower()


async def test_a_deleted_document_has_no_text_or_file(client):
    doc = (await upload(client, ("bike-shed.md", NOTE))).json()["documents"][0]
    await wait_ready(client, doc["id"])
    assert (await client.get(f"/api/documents/{doc['id']}/text")).json()["text"].startswith("Bike shed")
    assert (await client.delete(f"/api/documents/{doc['id']}")).status_code == 204
    for part in ("text", "file"):
        gone = await client.get(f"/api/documents/{doc['id']}/{part}")
        assert gone.status_code == 404 and "does not exist" in gone.json()["detail"]


async def test_an_upload_says_whether_each_file_is_new_a_new_version_or_the_same_again(client):
    first = (await upload(client, ("rates.md", b"# Rates\n\nMileage is 0.42 euros per km.\n"))).json()
    assert [d["outcome"] for d in first["documents"]] == ["new"]
    await wait_ready(client, first["documents"][0]["id"])
    same = (await upload(client, ("rates.md", b"# Rates\n\nMileage is 0.42 euros per km.\n"))).json()
    changed = (await upload(client, ("RATES.md", b"# Rates\n\nMileage is 0.38 euros per km.\n"))).json()
    assert [d["outcome"] for d in same["documents"]] == ["unchanged"]
    assert [d["outcome"] for d in changed["documents"]] == ["replaced"]  # names are matched without case
    assert changed["documents"][0]["id"] == first["documents"][0]["id"]


async def test_a_file_name_with_quotes_as_a_browser_escapes_them_is_stored_as_the_user_wrote_it(client):
    body = (await upload(client, ("Rapport %22Q3%22.md", b"# Q3\n\nRevenue grew.\n"))).json()
    assert body["documents"][0]["name"] == 'Rapport "Q3".md'  # a tester's upload was listed as Rapport %22Q3%22.md


async def test_two_uploads_of_one_new_name_at_once_say_new_then_replaced_and_the_last_is_searched(app, client):
    # both said "new" (each read the name before either registered it), and the vector store kept the first copy's
    # vectors while the keyword index held the second's
    shed = b"# Shed\n\nThe bike shed code is 4711. It is behind building C.\n"
    garage = b"# Shed\n\nThe bike shed moved to the parking garage, level -1, in March.\n"
    replies = await asyncio.gather(upload(client, ("shed.md", shed)), upload(client, ("shed.md", garage)))
    accepted = [r.json()["documents"][0] for r in replies]
    assert sorted(d["outcome"] for d in accepted) == ["new", "replaced"] and len({d["id"] for d in accepted}) == 1
    last = garage if accepted[1]["outcome"] == "replaced" else shed
    await app.state.services.knowledge.drain()
    doc_id = accepted[0]["id"]
    assert (await wait_ready(client, doc_id))["status"] == "ready"
    vectors = app.state.services.knowledge.collection.get(where={"document_id": doc_id})["documents"]
    text = (await client.get(f"/api/documents/{doc_id}/text")).json()["text"]
    assert vectors == [text] and text in last.decode()


async def test_names_that_differ_in_case_beyond_ascii_or_in_composition_are_one_document_and_mentionable(client):
    """A tester uploaded Été.txt then été.txt, and Résumé.md composed (Windows) then decomposed (macOS): each pair
    was two documents ("new" twice), and @Été.txt matched "several documents"."""
    first = (await upload(client, ("Été.md", b"# Summer\n\nThe summer office closes at 3 pm.\n"))).json()
    second = (await upload(client, ("été.md", b"# Summer\n\nThe summer office closes at 4 pm.\n"))).json()
    assert [d["outcome"] for d in second["documents"]] == ["replaced"], second
    assert second["documents"][0]["id"] == first["documents"][0]["id"]
    composed = (await upload(client, ("R\u00e9sum\u00e9.md", b"# CV\n\nFluent in Basque.\n"))).json()
    decomposed = (await upload(client, ("Re\u0301sume\u0301.md", b"# CV\n\nFluent in Basque and Welsh.\n"))).json()
    assert [d["outcome"] for d in decomposed["documents"]] == ["replaced"], decomposed
    assert decomposed["documents"][0]["name"] == "R\u00e9sum\u00e9.md"  # stored composed
    for doc in (first, composed):
        await wait_ready(client, doc["documents"][0]["id"])
    names = [d["name"] for d in (await client.get("/api/documents")).json()]
    assert names.count("Été.md") == 1 and "été.md" not in names and names.count("R\u00e9sum\u00e9.md") == 1
    for mention in ("@été.md", "@Re\u0301sume\u0301.md"):
        done = (await client.post("/api/chat", json={"message": f"{mention} what does it say?"})).json()
        assert "several documents" not in str(done) and "No document matches" not in str(done), done
        assert done["scope"], done


def held_embedding(app, monkeypatch) -> tuple[threading.Event, threading.Event]:
    """Hold an upload's embedding until `release` is set; `started` is set once it is held there."""
    ingestor = app.state.services.knowledge.ingestor
    release, started = threading.Event(), threading.Event()
    add_vectors = ingestor._add_vectors

    def held(*args, **kwargs):
        started.set()
        release.wait(30)
        return add_vectors(*args, **kwargs)

    monkeypatch.setattr(ingestor, "_add_vectors", held)
    return release, started


async def test_a_document_not_ingested_yet_has_its_text_and_file_later_not_upload_it_again(app, client, monkeypatch):
    """While a new upload was embedded, /text and /file said "ingested by an older version; upload it again"."""
    release, started = held_embedding(app, monkeypatch)
    doc = (await upload(client, ("bike-shed.md", NOTE))).json()["documents"][0]
    try:
        assert await asyncio.to_thread(started.wait, 30)
        for part in ("text", "file"):
            early = await client.get(f"/api/documents/{doc['id']}/{part}")
            assert early.status_code == 409 and "not ingested yet" in early.json()["detail"], early.text
            assert "upload it again" not in early.json()["detail"]
    finally:
        release.set()
    await wait_ready(client, doc["id"])
    assert (await client.get(f"/api/documents/{doc['id']}/text")).json()["text"].startswith("Bike shed")


async def test_a_mention_or_search_of_a_document_not_ingested_yet_says_so_not_that_none_matches(
    app, client, monkeypatch
):
    # the list and the @ autocomplete offered bike-shed.md while it was embedded, and asking about it answered 'No
    # document matches "@bike-shed.md". Check the name'; /api/search called it an unknown document
    release, started = held_embedding(app, monkeypatch)
    doc = (await upload(client, ("bike-shed.md", NOTE))).json()["documents"][0]
    try:
        assert await asyncio.to_thread(started.wait, 30)
        for mention in ("@bike-shed.md", "@bike-shed"):
            answer = (await client.post("/api/chat", json={"message": f"{mention} what is the code?"})).json()
            assert "bike-shed.md is not ingested yet" in answer["answer"], answer
            assert "No document matches" not in answer["answer"] and "Check the name" not in answer["answer"]
        searched = await client.post("/api/search", json={"query": "code", "documents": ["bike-shed.md"]})
        assert searched.status_code == 422 and "not ingested yet" in searched.json()["detail"], searched.text
    finally:
        release.set()
    await wait_ready(client, doc["id"])
    answer = (await client.post("/api/chat", json={"message": "@bike-shed what is the code?"})).json()
    assert "4711" in answer["answer"]


@pytest.mark.parametrize("path", ["/api/documents/{}", "/api/documents/{}/text", "/api/runs/{}"])
async def test_a_404_repeats_a_long_id_cut_short(client, path):
    """A 5,000-character id came back whole in the 404 (tester)."""
    response = await client.get(path.format("x" * 5000))
    assert response.status_code == 404 and "does not exist" in response.json()["detail"]
    assert len(response.json()["detail"]) < 300 and "x" * 80 + "…" in response.json()["detail"]
