"""The model pool against two real wire-format doubles: least-busy routing, failover before the first token only,
and health checks that bring a server back."""

import asyncio
from collections.abc import Iterator
from pathlib import Path

import pytest
from ollama import ResponseError
from openai import DefaultAsyncHttpxClient as HTTP  # the connections open_models gives an app

from backend.llm.factory import model_pool
from backend.llm.pool import ModelPool, ModelServer, PooledChatModel, short_error, unreachable
from backend.settings import Settings
from backend.tests.ollama_double import OllamaDouble, Reply, ServedDouble, serve_ollama, word_pieces
from backend.tests.openai_double import Completion, OpenAIDouble, serve_openai

pytestmark = pytest.mark.usefixtures("no_model_env")
ANSWER = "Refunds take thirty days."


def ollama_pool(tmp_path: Path, *doubles: OllamaDouble) -> ModelPool:
    urls = ",".join(d.base_url for d in doubles)
    return model_pool(Settings(llm_backend="ollama", ollama_base_url=urls, data_dir=tmp_path, _env_file=None), HTTP())


def openai_pool(tmp_path: Path, *doubles: OpenAIDouble) -> ModelPool:
    urls = ",".join(d.url for d in doubles)
    settings = Settings(
        llm_backend="openai", openai_base_url=urls, openai_chat_model="double-chat", data_dir=tmp_path, _env_file=None
    )
    return model_pool(settings, HTTP())


@pytest.fixture
def two_ollamas() -> Iterator[tuple[OllamaDouble, OllamaDouble]]:
    with serve_ollama() as a, serve_ollama() as b:
        yield a, b


@pytest.fixture
def two_openais() -> Iterator[tuple[OpenAIDouble, OpenAIDouble]]:
    with serve_openai() as a, serve_openai() as b:
        yield a, b


def chats(double: ServedDouble) -> int:
    """How many chat requests a double received."""
    path = "/v1/chat/completions" if isinstance(double, OpenAIDouble) else "/api/chat"
    return len(double.requests_to(path))  # type: ignore[attr-defined]


async def test_two_concurrent_streams_land_on_different_servers(two_ollamas, tmp_path):
    a, b = two_ollamas
    pool = ollama_pool(tmp_path, a, b)
    model = PooledChatModel(pool=pool)

    first, second = model.astream("one"), model.astream("two")
    await anext(first)  # the first stream is in flight on one server...
    assert [s.in_flight for s in pool.servers] == [1, 0]
    await anext(second)  # ...so the second goes to the other, whatever the turn order says
    assert [s.in_flight for s in pool.servers] == [1, 1]
    rest = [chunk async for chunk in first] + [chunk async for chunk in second]

    assert rest and (chats(a), chats(b)) == (1, 1)
    assert [s.in_flight for s in pool.servers] == [0, 0]


async def test_least_busy_wins_over_the_turn_order(two_ollamas, tmp_path):
    a, b = two_ollamas
    pool = ollama_pool(tmp_path, a, b)
    model = PooledChatModel(pool=pool)

    held = model.astream("held")
    await anext(held)  # server a busy
    for _ in range(3):  # each of these would be b's or a's turn: all go to the idle b
        await model.ainvoke("quick")
    await held.aclose()

    assert (chats(a), chats(b)) == (1, 3)


async def test_equally_busy_servers_take_turns(two_openais, tmp_path):
    a, b = two_openais
    model = PooledChatModel(pool=openai_pool(tmp_path, a, b))

    for _ in range(4):
        assert (await model.ainvoke("hi")).text == "Hello from the OpenAI double."

    assert (chats(a), chats(b)) == (2, 2)


@pytest.mark.parametrize("streamed", [True, False], ids=["astream", "ainvoke"])
@pytest.mark.parametrize("backend", ["ollama", "openai"])
async def test_a_stopped_server_is_failed_over_and_marked_down_with_its_error(tmp_path, backend, streamed):
    serve = serve_ollama if backend == "ollama" else serve_openai
    with serve() as a, serve() as b:
        pool = ollama_pool(tmp_path, a, b) if backend == "ollama" else openai_pool(tmp_path, a, b)
        a.stop()
        b.script(ANSWER)  # type: ignore[arg-type]
        model = PooledChatModel(pool=pool)

        if streamed:
            text = "".join([chunk.text async for chunk in model.astream("refunds?")])
        else:
            text = (await model.ainvoke("refunds?")).text

    assert text == ANSWER and chats(b) == 1
    down, up = pool.status()
    assert down["url"] == (a.url if backend == "openai" else a.base_url)
    assert down["healthy"] is False and down["last_error"] and down["in_flight"] == 0
    assert up == {"url": up["url"], "healthy": True, "in_flight": 0, "last_error": None}


async def test_a_server_down_is_tried_last_and_the_error_of_the_last_one_propagates_when_all_are_down(tmp_path):
    with serve_ollama() as a, serve_ollama() as b:
        pool = ollama_pool(tmp_path, a, b)
    model = PooledChatModel(pool=pool)  # both stopped

    with pytest.raises(Exception) as raised:
        await model.ainvoke("anyone?")

    assert unreachable(raised.value)
    assert [s["healthy"] for s in pool.status()] == [False, False]


async def test_an_error_after_the_first_token_is_not_retried_and_no_text_is_duplicated(two_openais, tmp_path):
    a, b = two_openais
    a.script(Completion(text=ANSWER, hang_up_after=2))
    b.script("Text that must not be sent.")
    model = PooledChatModel(pool=openai_pool(tmp_path, a, b))

    received: list[str] = []
    with pytest.raises(Exception) as raised:
        async for chunk in model.astream("refunds?"):
            received.append(chunk.text)

    assert "".join(received) == "".join(word_pieces(ANSWER)[:2])  # what came before the hang-up, once
    assert chats(b) == 0
    assert f"model server: {a.url}" in raised.value.__notes__  # the error says which server broke off


async def test_a_model_error_before_the_first_token_is_not_failed_over(two_ollamas, tmp_path):
    a, b = two_ollamas
    a.script(Reply(status=500, error="llama runner process has terminated"))
    model = PooledChatModel(pool=ollama_pool(tmp_path, a, b))

    with pytest.raises(ResponseError, match="llama runner process has terminated"):
        await model.ainvoke("hi")

    assert chats(b) == 0  # the server was reached: its answer stands


async def test_a_health_check_brings_a_server_back_up_and_finds_one_gone(two_ollamas, tmp_path):
    a, b = two_ollamas
    pool = ollama_pool(tmp_path, a, b)
    model = PooledChatModel(pool=pool)
    a.stop()
    await model.ainvoke("hi")  # fails over to b; a is down
    assert [s["healthy"] for s in pool.status()] == [False, True]

    a.restart()
    b.stop()
    await pool.check()

    assert [(s["healthy"], bool(s["last_error"])) for s in pool.status()] == [(True, False), (False, True)]
    assert a.paths[-1] == "/api/version"
    await model.ainvoke("hi")  # on a, the only healthy one; b is not even tried
    assert chats(a) == 1 and chats(b) == 1


async def test_background_checks_run_while_the_pool_is_open(two_openais, tmp_path):
    a, b = two_openais
    pool = openai_pool(tmp_path, a, b)
    pool.down(pool.servers[0], ConnectionError("refused"))
    came_back, up = asyncio.Event(), pool.up

    def noted_up(server: ModelServer) -> None:
        up(server)
        if server is pool.servers[0]:
            came_back.set()

    pool.up = noted_up  # type: ignore[method-assign]
    async with pool.checking(every=0.01):
        await asyncio.wait_for(came_back.wait(), 30)  # a bound against hanging, not a timing claim

    models = a.requests_to("/v1/models")
    assert models and models[0].headers["authorization"] == "Bearer unset"
    assert pool.servers[0].last_error is None


async def test_a_pool_of_one_checks_nothing_in_the_background(ollama, tmp_path):
    pool = ollama_pool(tmp_path, ollama)

    async with pool.checking(every=0.01):
        assert not [task for task in asyncio.all_tasks() if task.get_name() == "model-health"]
        await PooledChatModel(pool=pool).ainvoke("hi")

    assert ollama.paths == ["/api/chat"]


def test_in_a_pool_a_connection_is_waited_for_briefly_a_lone_server_as_long_as_the_llm_timeout(tmp_path):
    def pool(backend: str, urls: str) -> ModelPool:
        return model_pool(
            Settings(
                llm_backend=backend,
                ollama_base_url=urls,
                openai_base_url=urls,
                openai_chat_model="m",
                llm_timeout_seconds=900,
                data_dir=tmp_path,
                _env_file=None,
            ),
            HTTP(),
        )

    lone = pool("ollama", "http://a:1").servers[0].model
    assert lone.client_kwargs == {"timeout": 900}  # type: ignore[attr-defined]
    for server in pool("ollama", "http://a:1,http://b:2").servers:
        timeout = server.model.client_kwargs["timeout"]  # type: ignore[attr-defined]
        assert (timeout.connect, timeout.read) == (10, 900)
    assert pool("openai", "http://a:1").servers[0].model.request_timeout == 900  # type: ignore[attr-defined]
    for server in pool("openai", "http://a:1,http://b:2").servers:
        timeout = server.model.request_timeout  # type: ignore[attr-defined]
        assert (timeout.connect, timeout.read) == (10, 900)


async def test_a_health_check_answered_with_an_error_status_marks_the_server_down_saying_so(tmp_path):
    with serve_ollama() as a, serve_ollama() as b:
        pool = ollama_pool(tmp_path, a, b)
        pool.servers[0].health_url = a.base_url + "/api/no-such-route"
        await pool.check()

    assert pool.status()[0]["last_error"] == "health check: HTTP 404 from GET /api/no-such-route"
    assert [s["healthy"] for s in pool.status()] == [False, True]


def test_an_error_shown_in_health_carries_no_password():
    error = ConnectionError("cannot reach http://team:s3cret@gpu-a:11434/api/chat")
    assert short_error(error) == "ConnectionError: cannot reach http://gpu-a:11434/api/chat"
