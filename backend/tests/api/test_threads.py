import httpx
from asgi_lifespan import LifespanManager

from backend.main import create_app
from bench.lib.sse import parse_sse


async def turn(client, message: str, thread_id: str | None = None) -> str:
    events = parse_sse(await client.post("/api/chat/stream", json={"message": message, "thread_id": thread_id}))
    assert events[-1][0] == "done"
    return events[0][1]["thread_id"]


async def test_threads_listed_newest_first_with_titles(client):
    first = await turn(client, "What is the notice period?")
    second = await turn(client, "Hello there")
    await turn(client, "And for contractors?", first)
    listed = (await client.get("/api/threads")).json()
    assert [t["thread_id"] for t in listed] == [first, second]
    assert listed[0]["title"] == "What is the notice period?" and listed[0]["updated_at"]


async def test_thread_detail_has_original_questions_answers_and_sources(client):
    thread_id = await turn(client, "@employee-handbook how many days of annual leave?")
    detail = (await client.get(f"/api/threads/{thread_id}")).json()
    roles = [m["role"] for m in detail["messages"]]
    assert roles == ["user", "assistant"]
    assert detail["messages"][0]["content"] == "@employee-handbook how many days of annual leave?"
    assert detail["messages"][1]["sources"][0]["document"] == "employee-handbook.md"
    assert "28 days" in detail["messages"][1]["content"]
    assert detail["messages"][1]["latency_ms"] > 0 and detail["messages"][0]["latency_ms"] is None


async def test_rename_then_delete_thread_removes_checkpoints(client, app):
    thread_id = await turn(client, "Hello")
    renamed = await client.patch(f"/api/threads/{thread_id}", json={"title": "Greetings"})
    assert renamed.status_code == 200 and renamed.json()["title"] == "Greetings"
    assert (await client.get("/api/threads")).json()[0]["title"] == "Greetings"
    checkpointer = app.state.services.checkpointer
    config = {"configurable": {"thread_id": thread_id}}
    assert await checkpointer.aget_tuple(config) is not None
    assert (await client.delete(f"/api/threads/{thread_id}")).status_code == 204
    assert await checkpointer.aget_tuple(config) is None
    assert (await client.get(f"/api/threads/{thread_id}")).status_code == 404
    assert (await client.get("/api/threads")).json() == []


async def test_a_renamed_thread_keeps_its_place_in_the_list(client):
    older = await turn(client, "Hello")
    newer = await turn(client, "Thanks!")
    before = (await client.get("/api/threads")).json()
    assert [t["thread_id"] for t in before] == [newer, older]
    assert (await client.patch(f"/api/threads/{older}", json={"title": "Greetings"})).status_code == 200
    after = (await client.get("/api/threads")).json()
    assert [(t["thread_id"], t["title"]) for t in after] == [(newer, "Thanks!"), (older, "Greetings")]
    assert after[1]["updated_at"] == before[1]["updated_at"]  # as the sidebar shows it until a reload


async def test_thread_survives_app_restart_and_continues(settings):
    first_app = create_app(settings)
    async with (
        LifespanManager(first_app),
        httpx.AsyncClient(transport=httpx.ASGITransport(app=first_app), base_url="http://t") as c,
    ):
        thread_id = await turn(c, "Hello")
    second_app = create_app(settings)
    async with (
        LifespanManager(second_app),
        httpx.AsyncClient(transport=httpx.ASGITransport(app=second_app), base_url="http://t") as c,
    ):
        assert [t["thread_id"] for t in (await c.get("/api/threads")).json()] == [thread_id]
        await turn(c, "Thanks!", thread_id)
        messages = (await c.get(f"/api/threads/{thread_id}")).json()["messages"]
    assert [m["content"] for m in messages if m["role"] == "user"] == ["Hello", "Thanks!"]


async def test_turn_rows_record_details_and_export_as_json_and_markdown(client):
    thread_id = await turn(client, "@employee-handbook how many days of annual leave?")
    await turn(client, "Thanks!", thread_id)
    exported = (await client.get(f"/api/threads/{thread_id}/export")).json()
    first, second = exported["turns"]
    assert (first["turn"], second["turn"]) == (1, 2)
    assert first["question"] == "@employee-handbook how many days of annual leave?"
    assert first["intent"] == "rag" and first["rewritten_query"] == "how many days of annual leave?"
    assert first["sources"][0]["document"] == "employee-handbook.md"
    assert first["provider"] == "fake" and first["model"] == "scripted-fake" and first["latency_ms"] > 0
    assert any(step.startswith("retriever:") for step in first["steps"])
    markdown = await client.get(f"/api/threads/{thread_id}/export", params={"format": "markdown"})
    assert markdown.headers["content-type"].startswith("text/markdown")
    assert (
        "## Turn 2" in markdown.text and "**You:** Thanks!" in markdown.text and "employee-handbook.md" in markdown.text
    )
    assert (await client.get(f"/api/threads/{thread_id}/export", params={"format": "pdf"})).status_code == 422


async def test_an_unknown_thread_id_of_thousands_of_characters_is_not_repeated_whole(client):
    response = await client.get(f"/api/threads/{'x' * 3000}")
    assert response.status_code == 404
    assert len(response.json()["detail"]) < 200 and f"'{'x' * 80}…'" in response.json()["detail"]
