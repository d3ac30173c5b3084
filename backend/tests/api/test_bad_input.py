import pytest

from bench.lib.sse import parse_sse


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
    events = parse_sse(await client.post("/api/chat/stream", json={"message": "Hello"}))
    thread_id = events[0][1]["thread_id"]
    assert_clear_4xx(await client.patch(f"/api/threads/{thread_id}", json={"title": ""}), 422, "title")
    assert (await client.get(f"/api/threads/{thread_id}")).json()["title"] == "Hello"


@pytest.mark.parametrize("thread_id", [".", "..", "a/b", "x" * 129])
async def test_chat_when_thread_id_cannot_round_trip_in_a_url_then_422_and_no_thread(client, thread_id):
    assert_clear_4xx(await client.post("/api/chat", json={"message": "hi", "thread_id": thread_id}), 422, "thread_id")
    assert (await client.get("/api/threads")).json() == []


async def test_chat_when_thread_id_has_a_letter_beyond_ascii_then_422_saying_ascii(client):
    """A probe sent "é", a letter, and was told to use letters."""
    assert_clear_4xx(await client.post("/api/chat", json={"message": "hi", "thread_id": "é"}), 422, "ASCII letters")


async def test_reattach_with_an_event_number_of_19_digits_then_422_saying_the_limit(client):
    """A probe sent a number, 0 or more, and was told it must be a number, 0 or more."""
    started = parse_sse(await client.post("/api/chat/stream", json={"message": "hi", "mode": "chat"}))
    run_id = started[0][1]["run_id"]
    response = await client.get(f"/api/runs/{run_id}/stream", headers={"Last-Event-ID": "9" * 19})
    assert_clear_4xx(response, 422, "at most 18 digits", "9" * 19)


async def test_chat_when_thread_id_has_dots_but_is_not_a_dot_segment_then_accepted(client):
    assert (await client.post("/api/chat", json={"message": "hi", "thread_id": "...v1.2"})).status_code == 200


@pytest.mark.parametrize("title", ["   ", "\t\n"])
async def test_patch_thread_when_title_blank_then_422_and_title_kept(client, title):
    await client.post("/api/chat", json={"message": "Hello", "thread_id": "t"})
    assert_clear_4xx(await client.patch("/api/threads/t", json={"title": title}), 422, "title")
    assert (await client.get("/api/threads/t")).json()["title"] == "Hello"


async def test_chat_when_body_is_not_utf8_then_422(client):
    response = await client.post(
        "/api/chat", content='{"message": "caf\u00e9"}'.encode("latin-1"), headers={"content-type": "application/json"}
    )
    assert_clear_4xx(response, 422, "UTF-8")


async def test_chat_when_use_memory_is_not_a_boolean_then_422(client):
    assert_clear_4xx(await client.post("/api/chat", json={"message": "hi", "use_memory": 0}), 422, "use_memory")


async def test_wrong_method_gets_405_naming_every_method_the_path_accepts(client):
    response = await client.put("/api/documents")
    assert response.status_code == 405 and set(response.headers["allow"].split(", ")) >= {"GET", "POST"}
    assert "GET" in response.json()["detail"] and "POST" in response.json()["detail"]


async def test_every_4xx_in_the_schema_is_the_one_error_body_of_its_api(client):
    schema = (await client.get("/openapi.json")).json()
    assert "HTTPValidationError" not in schema["components"]["schemas"]
    for path, operations in schema["paths"].items():
        body = "/OpenAIError" if path.startswith("/v1/") else "/ErrorBody"
        for method, op in operations.items():
            for code, response in op["responses"].items():
                if code.startswith("4"):
                    ref = response["content"]["application/json"]["schema"]["$ref"]
                    assert ref.endswith(body), (method, path, code)
    threads = schema["paths"]["/api/threads/{thread_id}"]
    assert {"404"} <= set(threads["get"]["responses"]) and {"404", "409"} <= set(threads["delete"]["responses"])


@pytest.mark.parametrize(
    ("path", "body", "word"),
    [
        ("/api/search", '{"query": "x", "documents": ["\\ud800"]}', "surrogate"),
        ("/api/search", '{"query": "leave \\udc00"}', "surrogate"),
        ("/api/chat", '{"message": "hi \\ud800", "mode": "chat"}', "surrogate"),
        ("/api/chat/stream", '{"message": "\\u0000", "mode": "chat"}', "NUL"),
        ("/api/chat", '{"message": "hi\\u0000there", "mode": "chat"}', "NUL"),
    ],
)
async def test_json_string_with_an_unstorable_character_then_422_saying_which_and_nothing_stored(
    client, path, body, word
):
    response = await client.post(path, content=body.encode(), headers={"content-type": "application/json"})
    assert_clear_4xx(response, 422, word)
    assert (await client.get("/api/threads")).json() == []


async def test_json_string_with_a_paired_surrogate_escape_is_the_character_it_spells(client):
    body = '{"message": "Thanks \\ud83d\\ude00", "mode": "chat"}'
    response = await client.post("/api/chat", content=body.encode(), headers={"content-type": "application/json"})
    assert response.status_code == 200, response.text
    thread = (await client.get(f"/api/threads/{response.json()['thread_id']}")).json()
    assert thread["messages"][0]["content"] == "Thanks \U0001f600"


async def test_chat_when_message_is_only_control_characters_then_422_empty(client):
    assert_clear_4xx(await client.post("/api/chat", json={"message": "\u0001\u0007 "}), 422, "message is empty")


@pytest.mark.parametrize("title", ["Sea\u0007", "two\nlines", "tab\there"])
async def test_patch_thread_when_title_has_a_control_character_then_422_and_title_kept(client, title):
    events = parse_sse(await client.post("/api/chat/stream", json={"message": "Hello"}))
    thread_id = events[0][1]["thread_id"]
    refused = await client.patch(f"/api/threads/{thread_id}", json={"title": title})
    assert_clear_4xx(refused, 422, "title", "one line of text without control characters")
    assert (await client.get(f"/api/threads/{thread_id}")).json()["title"] == "Hello"


@pytest.mark.parametrize("content_type", [None, "text/plain", "application/x-www-form-urlencoded"])
@pytest.mark.parametrize("path", ["/api/chat", "/api/search"])
async def test_json_sent_without_its_content_type_is_told_to_send_it(client, path, content_type):
    """curl -d sends a form: a valid JSON body was refused as "Input should be a valid dictionary" (tester)."""
    headers = {"content-type": content_type} if content_type else {}
    response = await client.post(path, content=b'{"message": "hi", "query": "hi"}', headers=headers)
    assert_clear_4xx(response, 422, "Content-Type: application/json")


@pytest.mark.parametrize("title", ["\u200b\u200b", "\u2800", "\ufeff\u2060", " \u3164 "])
async def test_patch_thread_when_title_is_only_invisible_characters_then_422_and_title_kept(client, title):
    """A title of zero-width spaces or the blank Braille pattern was an invisible row in the sidebar (tester)."""
    await client.post("/api/chat", json={"message": "Hello", "thread_id": "t"})
    assert_clear_4xx(await client.patch("/api/threads/t", json={"title": title}), 422, "title", "invisible")
    assert (await client.get("/api/threads/t")).json()["title"] == "Hello"
    assert (await client.patch("/api/threads/t", json={"title": "\u200bFerry"})).status_code == 200


async def test_search_with_many_unknown_documents_names_a_few_once(client):
    """2,000 unknown names came back whole and repeated, 204 KB (tester)."""
    body = {"query": "leave", "documents": ["x" * 100] * 1000 + [f"doc{i}" for i in range(1000)]}
    response = await client.post("/api/search", json=body)
    assert_clear_4xx(response, 422, "unknown documents", "and 996 more")
    assert len(response.json()["detail"]) < 1000
