import pytest

from backend.tests.sse import parse_sse


def assert_clear_4xx(response, status: int, *words: str) -> None:
    assert response.status_code == status, response.text
    detail = response.json()["detail"]
    assert isinstance(detail, str) and detail
    for word in words:
        assert word in detail, detail


@pytest.mark.parametrize("path", ["/api/chat", "/api/chat/stream"])
async def test_chat_when_message_empty_or_blank_then_422(client, path):
    assert_clear_4xx(await client.post(path, json={"message": ""}), 422, "message")
    assert_clear_4xx(await client.post(path, json={"message": "   \n"}), 422, "message is empty")


@pytest.mark.parametrize("path", ["/api/chat", "/api/chat/stream"])
async def test_chat_when_message_too_long_then_413_naming_limit(client, path):
    assert_clear_4xx(await client.post(path, json={"message": "x" * 16001}), 413, "16001", "16000")


async def test_chat_when_message_at_limit_then_accepted(client):
    assert (await client.post("/api/chat", json={"message": "x" * 16000, "mode": "chat"})).status_code == 200


async def test_chat_when_body_not_json_then_422_saying_json(client):
    response = await client.post(
        "/api/chat/stream", content=b'{"message": "hi",', headers={"content-type": "application/json"}
    )
    assert_clear_4xx(response, 422, "JSON")


async def test_chat_when_mode_unknown_then_422_listing_modes(client):
    assert_clear_4xx(await client.post("/api/chat", json={"message": "hi", "mode": "turbo"}), 422, "mode", "'auto'")


async def test_chat_when_fields_missing_or_unknown_then_422(client):
    assert_clear_4xx(await client.post("/api/chat", json={}), 422, "message")
    assert_clear_4xx(await client.post("/api/chat", json={"message": "hi", "stream": True}), 422, "stream")


async def test_chat_when_thread_id_malformed_then_422(client):
    assert_clear_4xx(await client.post("/api/chat", json={"message": "hi", "thread_id": "../etc"}), 422, "thread_id")


@pytest.mark.parametrize("method", ["GET", "PATCH", "DELETE"])
async def test_thread_when_unknown_then_404_json(client, method):
    kwargs = {"json": {"title": "x"}} if method == "PATCH" else {}
    assert_clear_4xx(await client.request(method, "/api/threads/nope", **kwargs), 404, "nope")


async def test_patch_thread_when_title_empty_then_422_and_title_kept(client):
    events = parse_sse((await client.post("/api/chat/stream", json={"message": "Hello"})).text)
    thread_id = events[0][1]["thread_id"]
    assert_clear_4xx(await client.patch(f"/api/threads/{thread_id}", json={"title": ""}), 422, "title")
    assert (await client.get(f"/api/threads/{thread_id}")).json()["title"] == "Hello"
