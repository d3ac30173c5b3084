"""/v1 refusals through the openai SDK: each bad request is a 4xx in OpenAI's error shape (never a 500), the
API key setting, and /api keeping its own {"detail"} shape."""

from collections.abc import Iterator

import httpx
import openai
import pytest

from backend.main import create_app
from backend.tests.conftest import fake_settings
from bench.lib.server import serve_in_thread

ERROR_KEYS = {"message", "type", "param", "code"}


@pytest.fixture(scope="module")
def url(tmp_path_factory) -> Iterator[str]:
    app = create_app(fake_settings(tmp_path_factory.mktemp("openai-errors") / "data"))
    with serve_in_thread(app) as base:
        yield base


@pytest.fixture
def client(url) -> openai.OpenAI:
    return openai.OpenAI(base_url=f"{url}/v1", api_key="unused", max_retries=0, timeout=60)


def user(content: object) -> dict:
    return {"role": "user", "content": content}


IMAGE = [
    {"type": "text", "text": "what is this?"},
    {"type": "image_url", "image_url": {"url": "data:image/png;base64,"}},
]
BAD_REQUESTS = {
    "empty messages": ({"messages": []}, openai.BadRequestError, "messages", "invalid_value"),
    "last from assistant": (
        {"messages": [user("hi"), {"role": "assistant", "content": "hello"}]},
        openai.BadRequestError,
        "messages[1].role",
        "invalid_value",
    ),
    "unknown model": ({"model": "gpt-4o"}, openai.NotFoundError, "model", "model_not_found"),
    "unknown document model": ({"model": "ragline:no-such.pdf"}, openai.NotFoundError, "model", "model_not_found"),
    "n > 1": ({"n": 2}, openai.BadRequestError, "n", "unsupported"),
    "a client tool call required": (
        {"tools": [{"type": "function", "function": {"name": "f", "parameters": {}}}], "tool_choice": "required"},
        openai.BadRequestError,
        "tool_choice",
        "unsupported",
    ),
    "a tool call required with no tools": (
        {"tool_choice": "required"},
        openai.BadRequestError,
        "tool_choice",
        "invalid_value",
    ),
    "a named function with no functions": (
        {"function_call": {"name": "f"}},
        openai.BadRequestError,
        "function_call",
        "invalid_value",
    ),
    "image content": (
        {"messages": [user(IMAGE)]},
        openai.BadRequestError,
        "messages[0].content",
        "unsupported_content",
    ),
    "1 MB message": (
        {"messages": [user("a" * 1_000_000)]},
        openai.BadRequestError,
        "messages[0].content",
        "string_above_max_length",
    ),
    "tool result message": (
        {"messages": [user("hi"), {"role": "tool", "content": "42", "tool_call_id": "x"}, user("and?")]},
        openai.BadRequestError,
        "messages[1].role",
        "unsupported",
    ),
    "blank question": ({"messages": [user("   ")]}, openai.BadRequestError, "messages[0].content", "invalid_value"),
}


@pytest.mark.parametrize("case", list(BAD_REQUESTS), ids=list(BAD_REQUESTS))
@pytest.mark.parametrize("stream", [False, True], ids=["plain", "stream"])
def test_bad_request_is_the_right_sdk_error_with_an_openai_error_body(client, case, stream):
    override, error, param, code = BAD_REQUESTS[case]
    request = {"model": "ragline", "messages": [user("hi")], **override}
    with pytest.raises(error) as caught:
        created = client.chat.completions.create(**request, stream=stream)
        list(created) if stream else None
    body = caught.value.body
    assert set(body) == ERROR_KEYS and body["type"] == "invalid_request_error"
    assert (body["param"], body["code"]) == (param, code) and body["message"]
    assert caught.value.status_code < 500


@pytest.mark.parametrize(
    "body",
    [
        b'{"model": "ragline", "messages": "hi"}',
        b'{"model": 7, "messages": [{"role": "user", "content": "hi"}]}',
        b'{"model": "ragline", "messages": [{"role": "robot", "content": "hi"}]}',
        b'{"model": "ragline", "messages": [',
        b"\xff\xfe",
    ],
    ids=["messages not a list", "model not a string", "unknown role", "truncated JSON", "not UTF-8"],
)
def test_malformed_body_is_a_400_in_openai_shape(url, body):
    refused_in_openai_shape(url, body)


def refused_in_openai_shape(url: str, body: bytes) -> dict:
    """POST the raw body to /v1/chat/completions; it must be a 400 with OpenAI's error body, which is returned."""
    response = httpx.post(f"{url}/v1/chat/completions", content=body, headers={"content-type": "application/json"})
    assert response.status_code == 400, response.text
    error = response.json()["error"]
    assert set(error) == ERROR_KEYS and error["type"] == "invalid_request_error"
    return error


@pytest.mark.parametrize(
    ("field", "value"),
    [("stream", '"yes"'), ("stream_options", '{"include_usage": "on"}'), ("n", '"1"'), ("logprobs", "1")],
    ids=["stream yes", "include_usage on", "n as text", "logprobs 1"],
)
def test_a_flag_or_count_of_the_wrong_type_is_a_400_naming_it_not_taken_for_true(url, field, value):
    """OpenAI refuses "stream": "yes"; lax parsing read it as true and streamed to a client expecting JSON."""
    body = f'{{"model": "ragline", "{field}": {value}, "messages": [{{"role": "user", "content": "hi"}}]}}'
    error = refused_in_openai_shape(url, body.encode())
    assert error["param"].startswith(field) and "valid" in error["message"]


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("max_tokens", '"lots"'),
        ("max_tokens", '"10"'),
        ("temperature", '"hot"'),
        ("temperature", '"0.5"'),
        ("temperature", "true"),
        ("temperature", "7"),
        ("top_p", "[1]"),
        ("stop", "5"),
        ("stop", '["a", "b", "c", "d", "e"]'),
    ],
    ids=[
        "max_tokens lots",
        "max_tokens as text",
        "temperature hot",
        "temperature as text",
        "temperature true",
        "temperature 7",
        "top_p list",
        "stop number",
        "five stops",
    ],
)
def test_a_sampling_parameter_of_the_wrong_type_or_range_is_a_400_though_it_is_then_ignored(url, field, value):
    """A tester's "max_tokens": "lots" and "temperature": "hot" were accepted silently; so were "10", "0.5", true and
    five stop strings (review)."""
    body = f'{{"model": "ragline", "{field}": {value}, "messages": [{{"role": "user", "content": "hi"}}]}}'
    error = refused_in_openai_shape(url, body.encode())
    assert error["param"] == field, error  # not "temperature.float": the types pydantic tried are not parameters
    assert f"{field}: " in error["message"] and f"{field}." not in error["message"], error


def test_a_content_of_the_wrong_type_names_the_message_content_once(url):
    """A content of 42 was "messages[0].content.str", with one problem per type it may take (tester)."""
    body = b'{"model": "ragline", "messages": [{"role": "user", "content": 42}]}'
    error = refused_in_openai_shape(url, body)
    assert error["param"] == "messages[0].content", error
    assert error["message"].count("messages.0.content") == 1 and "list[" not in error["message"], error


def test_a_list_too_long_for_a_field_of_several_types_is_told_its_length_not_that_it_is_not_a_string(url):
    """Keeping one problem per field kept "stop: Input should be a valid string" for five stops (review)."""
    body = b'{"model": "ragline", "stop": ["a", "b", "c", "d", "e"], "messages": [{"role": "user", "content": "hi"}]}'
    error = refused_in_openai_shape(url, body)
    assert error["param"] == "stop" and "at most 4 items" in error["message"], error
    assert "valid string" not in error["message"], error


def test_a_temperature_that_is_not_a_number_is_refused_as_such(url):
    """Python's JSON reader takes NaN; it was refused as "greater than or equal to 0" (tester)."""
    body = b'{"model": "ragline", "temperature": NaN, "messages": [{"role": "user", "content": "hi"}]}'
    error = refused_in_openai_shape(url, body)
    assert error["param"] == "temperature" and "finite number" in error["message"], error


def test_a_json_syntax_error_names_no_parameter(url):
    """Its location is a character position: param was "[21]" (tester)."""
    error = refused_in_openai_shape(url, b'{"model": "ragline", ')
    assert error["param"] is None and "not valid JSON" in error["message"], error


@pytest.mark.parametrize("content_type", [None, "text/plain", "application/x-www-form-urlencoded"])
def test_json_sent_without_its_content_type_is_told_to_send_it(url, content_type):
    """A valid JSON body sent as text or as a form was refused as "Input should be a valid dictionary" (tester)."""
    body = b'{"model": "ragline", "messages": [{"role": "user", "content": "hi"}]}'
    headers = {"content-type": content_type} if content_type else {}
    response = httpx.post(f"{url}/v1/chat/completions", content=body, headers=headers)
    assert response.status_code == 400, response.text
    assert "Content-Type: application/json" in response.json()["error"]["message"], response.text


@pytest.mark.parametrize(
    "body",
    [
        b'{"model": "ragline", "messages": [{"role": "user", "content": "hi \\ud800"}]}',
        b'{"model": "ragline", "messages": [{"role": "user", "content": [{"type": "text", "text": "hi \\udc00"}]}]}',
        b'{"model": "ragline", "messages": [{"role": "user", "content": "a\\ud800"}, '
        b'{"role": "assistant", "content": "b"}, {"role": "user", "content": "hi"}]}',
        b'{"model": "ragline", "stream": true, "messages": [{"role": "user", "content": "hi \\ud800"}]}',
        b'{"model": "ragline", "messages": [{"role": "user", "content": "hi \\u0000"}]}',
    ],
    ids=["lone surrogate", "in a text part", "in an earlier message", "streamed", "NUL"],
)
def test_unstorable_character_is_a_400_in_openai_shape_not_a_500_or_a_dropped_stream(url, body):
    error = refused_in_openai_shape(url, body)
    assert "surrogate" in error["message"] or "NUL" in error["message"]


def test_invalid_thread_id_header_is_a_400_naming_it(client):
    with pytest.raises(openai.BadRequestError) as caught:
        client.chat.completions.create(
            model="ragline", messages=[user("hi")], extra_headers={"X-Ragline-Thread-Id": "../etc"}
        )
    assert "thread" in caught.value.body["param"].lower()
    assert (
        caught.value.body["message"]
        == "X-Ragline-Thread-Id: use 1 to 128 ASCII letters, digits and _ . : - (not '.' or '..')"
    )


def test_unknown_v1_route_and_wrong_method_are_openai_errors_while_api_keeps_detail(url):
    missing = httpx.get(f"{url}/v1/embeddings")
    assert missing.status_code == 404 and set(missing.json()["error"]) == ERROR_KEYS
    wrong = httpx.delete(f"{url}/v1/models")
    assert wrong.status_code == 405 and wrong.json()["error"]["code"] == "method_not_allowed"
    assert wrong.headers["allow"] == "GET"
    api = httpx.post(f"{url}/api/chat", json={"message": ""})
    assert api.status_code == 422 and set(api.json()) == {"detail"}


@pytest.fixture(scope="module")
def keyed_url(tmp_path_factory) -> Iterator[str]:
    settings = fake_settings(tmp_path_factory.mktemp("openai-keys") / "data", api_keys=" key-one , key-two ")
    with serve_in_thread(create_app(settings)) as base:
        yield base


@pytest.mark.parametrize("key", ["key-one", "key-two"])
def test_api_key_from_the_list_is_accepted(keyed_url, key):
    client = openai.OpenAI(base_url=f"{keyed_url}/v1", api_key=key, max_retries=0)
    assert client.models.list().data[0].id == "ragline"
    answer = client.chat.completions.create(model="ragline-chat", messages=[user("hi")])
    assert answer.choices[0].message.content


@pytest.mark.parametrize("key", ["wrong", "key-one-and-more", ""])
def test_wrong_or_missing_api_key_is_authentication_error(keyed_url, key):
    client = openai.OpenAI(base_url=f"{keyed_url}/v1", api_key=key or "placeholder", max_retries=0)
    headers = {"Authorization": ""} if not key else None
    with pytest.raises(openai.AuthenticationError) as caught:
        client.chat.completions.create(model="ragline-chat", messages=[user("hi")], extra_headers=headers)
    assert caught.value.status_code == 401 and caught.value.body["code"] == "invalid_api_key"
    assert set(caught.value.body) == ERROR_KEYS
    with pytest.raises(openai.AuthenticationError):
        client.models.list(extra_headers=headers)


def test_api_keys_guard_only_v1(keyed_url):
    assert httpx.get(f"{keyed_url}/api/health").status_code == 200
    assert httpx.get(f"{keyed_url}/v1/models").status_code == 401


def test_sampling_parameters_of_the_right_types_are_accepted_and_ignored(url):
    body = {
        "model": "ragline",
        "messages": [{"role": "user", "content": "hi"}],
        **{"temperature": 0.2, "top_p": 1, "max_tokens": 50, "max_completion_tokens": 50, "seed": 7},
        **{"presence_penalty": -0.5, "frequency_penalty": 1, "stop": ["\n\nUser:", "###"]},
    }
    response = httpx.post(f"{url}/v1/chat/completions", json=body, timeout=60)
    assert response.status_code == 200, response.text
    assert response.json()["choices"][0]["message"]["content"]


@pytest.mark.parametrize(
    "body",
    [
        b'{"model": "ragline", ',
        b'{"model": "ragline", "messages": [{"role": "user", "content": "a\\u0000"}]}',
        b"\xff\xfe",
        b'{"model": "ragline", "messages": "hi"}',
    ],
    ids=["truncated JSON", "NUL", "not UTF-8", "messages not a list"],
)
def test_a_malformed_body_without_a_key_is_a_401_first_and_with_the_key_a_400(keyed_url, body):
    """Truncated JSON and a NUL were 400s about the body for a request with no key (tester): the body is parsed, and
    the NUL guard reads it, before the key is checked. OpenAI answers 401 first."""
    headers = {"content-type": "application/json"}
    anonymous = httpx.post(f"{keyed_url}/v1/chat/completions", content=body, headers=headers)
    assert anonymous.status_code == 401, anonymous.text
    assert anonymous.json()["error"]["code"] == "invalid_api_key" and anonymous.headers["www-authenticate"] == "Bearer"
    keyed = httpx.post(
        f"{keyed_url}/v1/chat/completions", content=body, headers={**headers, "Authorization": "Bearer key-two"}
    )
    assert keyed.status_code == 400 and set(keyed.json()["error"]) == ERROR_KEYS, keyed.text
