"""kill -9 of a real server while a turn streams from the model: after a restart, one history everywhere, and the
killed run shows as `interrupted` with the text it had streamed (beside the history, not in it)."""

import signal
import threading
import time

import httpx
import openai
import pytest
from httpx_sse import connect_sse

from bench.lib.faults import KILL_POINTS, POEM, stream_and_kill
from bench.lib.faults import history_views_sync as history
from bench.lib.server import serve_in_process
from bench.lib.sse import parse_sse


@pytest.mark.parametrize("point", list(KILL_POINTS))
def test_kill_9_while_the_model_streams_then_page_export_and_memory_agree_after_restart(tmp_path, point):
    env = {"RAG_LLM_BACKEND": "fake", "RAG_DATA_DIR": str(tmp_path / "data"), "RAG_FAKE_TOKENS_PER_SECOND": "20"}
    thread_id = "survivor"
    with serve_in_process(env) as (url, proc):
        first = httpx.post(f"{url}/api/chat", json={"message": "Hello", "thread_id": thread_id}, timeout=30).json()
        body = {"message": POEM, "thread_id": thread_id, "mode": "chat"}
        finished = stream_and_kill(url, body, KILL_POINTS[point], proc)
    with serve_in_process(env) as (url, _):
        views = history(url, thread_id)
        assert views["page"] == views["export"] == views["memory"], views
        assert views["page"][0] == ("Hello", first["answer"])
        assert len(views["page"]) == 2 if finished.done else len(views["page"]) in (1, 2)
        if point in ("before the first token", "mid-answer"):
            assert len(views["page"]) == 1  # the model was still writing: nothing of the turn was stored
            last = httpx.get(f"{url}/api/threads/{thread_id}").json()["messages"][-2:]
            assert [m["status"] for m in last] == [None, "interrupted"] and last[0]["content"] == POEM
            assert finished.text.startswith(last[1]["content"])  # what was logged before the kill; no more
            if point == "mid-answer":
                assert last[1]["content"].strip(), last  # some of what streamed was logged (batches of 50 ms)
            run = httpx.get(f"{url}/api/runs/{finished.run_id}").json()
            assert run["status"] == "interrupted" and run["thread_id"] == thread_id
            replay = parse_sse(httpx.get(f"{url}/api/runs/{finished.run_id}/stream", timeout=30))
            assert replay[-1] == (
                "stopped",
                {"run_id": finished.run_id, "status": "interrupted", "answer": last[1]["content"]},
            )
            # re-attaching with the last event it received, the client is told the run ended: its token events
            # went out before they were written (batches of 50 ms), so the last ones died unwritten, and the
            # `stopped` event must be numbered above them, not after the last one written
            stream = f"{url}/api/runs/{finished.run_id}/stream"
            reattached = parse_sse(httpx.get(stream, headers={"Last-Event-ID": str(finished.last_id)}, timeout=30))
            assert reattached == [replay[-1]], (finished.last_id, run["last_event_id"])
            assert httpx.get(f"{url}/api/threads/{thread_id}").json()["active_run"] is None
        again = httpx.post(f"{url}/api/chat", json={"message": "Hi again", "thread_id": thread_id}, timeout=30)
        assert again.status_code == 200
        after = history(url, thread_id)
        assert after["page"] == after["export"] == after["memory"]
        assert after["page"][-1][0] == "Hi again" and len(after["page"]) == len(views["page"]) + 1


def test_a_graceful_shutdown_ends_open_streams_cleanly_and_the_run_is_interrupted_for_whoever_re_attaches(tmp_path):
    """SIGTERM while a turn streams to its asker and to a follower: both responses end whole (sse-starlette cut them
    mid-body, and uvicorn logged "ASGI callable returned without completing response" for each); after the
    restart, re-attaching with the last event seen gives the run's `stopped` event (interrupted)."""
    env = {"RAG_LLM_BACKEND": "fake", "RAG_DATA_DIR": str(tmp_path / "data"), "RAG_FAKE_TOKENS_PER_SECOND": "5"}
    seen: dict[str, list] = {"asker": [], "follower": []}
    failed: dict[str, str] = {}

    def read(name: str, method: str, url: str, **kwargs) -> None:
        try:
            with httpx.Client(timeout=30) as client, connect_sse(client, method, url, **kwargs) as sse:
                for event in sse.iter_sse():
                    seen[name].append((int(event.id), event.event))
        except httpx.HTTPError as exc:
            failed[name] = repr(exc)

    with serve_in_process(env) as (url, proc):
        body = {"message": POEM, "thread_id": "poem", "mode": "chat"}
        asker = threading.Thread(target=read, args=("asker", "POST", f"{url}/api/chat/stream"), kwargs={"json": body})
        asker.start()
        while not any(name == "token" for _, name in seen["asker"]):
            time.sleep(0.02)
        run_id = httpx.get(f"{url}/api/threads/poem").json()["active_run"]["run_id"]
        follower = threading.Thread(target=read, args=("follower", "GET", f"{url}/api/runs/{run_id}/stream"))
        follower.start()
        while not seen["follower"]:
            time.sleep(0.02)
        proc.send_signal(signal.SIGTERM)
        asker.join(30)
        follower.join(30)
        proc.wait(30)
        log = proc.log_path.read_text()

    assert failed == {}  # a response cut mid-body: RemoteProtocolError (incomplete chunked read)
    assert "ASGI callable returned without completing response" not in log, log
    for name, events in seen.items():
        assert events and events[-1][1] in ("status", "token"), (name, events[-3:])  # no last event: not over
    with serve_in_process(env) as (url, _):
        last_id = seen["asker"][-1][0]
        replay = parse_sse(httpx.get(f"{url}/api/runs/{run_id}/stream", headers={"Last-Event-ID": str(last_id)}))
        assert [name for name, _ in replay] == ["stopped"] and replay[0][1]["status"] == "interrupted"


def test_a_graceful_shutdown_ends_an_openai_stream_with_an_error_the_sdk_raises_and_the_thread_keeps_the_question(
    tmp_path,
):
    """SIGTERM while /v1/chat/completions streams to the openai SDK: the stream ends whole with an error line, which
    the SDK raises as an APIError saying the server stops (it was cut mid-body: APIConnectionError, and uvicorn
    logged "ASGI callable returned without completing response"); after the restart the thread shows the question
    and the partial answer, interrupted, as for a run stream."""
    env = {"RAG_LLM_BACKEND": "fake", "RAG_DATA_DIR": str(tmp_path / "data"), "RAG_FAKE_TOKENS_PER_SECOND": "5"}
    chunks: list = []
    raised: list[Exception] = []

    def read(url: str) -> None:
        client = openai.OpenAI(base_url=f"{url}/v1", api_key="unused", max_retries=0, timeout=30)
        messages = [{"role": "user", "content": POEM}]
        extra = {"X-Ragline-Thread-Id": "v1-poem"}
        try:
            for chunk in client.chat.completions.create(
                model="ragline-chat", messages=messages, stream=True, extra_headers=extra
            ):
                chunks.append(chunk)
        except Exception as exc:  # noqa: BLE001 - what the SDK raised is the result under test
            raised.append(exc)

    with serve_in_process(env) as (url, proc):
        reader = threading.Thread(target=read, args=(url,))
        reader.start()
        while not any(chunk.choices and chunk.choices[0].delta.content for chunk in chunks):
            time.sleep(0.02)
        proc.send_signal(signal.SIGTERM)
        reader.join(30)
        proc.wait(30)
        log = proc.log_path.read_text()

    assert len(raised) == 1 and type(raised[0]) is openai.APIError, raised  # not APIConnectionError
    assert raised[0].code == "server_stopping" and "server is stopping" in raised[0].message
    assert "ASGI callable returned without completing response" not in log, log
    streamed = "".join(chunk.choices[0].delta.content or "" for chunk in chunks if chunk.choices)
    with serve_in_process(env) as (url, _):
        last = httpx.get(f"{url}/api/threads/v1-poem").json()["messages"][-2:]
    assert [m["status"] for m in last] == [None, "interrupted"] and last[0]["content"] == POEM
    assert streamed.startswith(last[1]["content"])
