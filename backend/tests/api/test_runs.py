"""Runs live on the server: numbered events, replay and follow, re-attach after a disconnect, Stop, bad input."""

import asyncio
import re
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import httpx
import pytest
from asgi_lifespan import LifespanManager
from httpx_sse import EventSource, aconnect_sse

from backend.contract.events import SourcesEvent, StatusEvent, StoppedEvent, TokenEvent
from backend.main import create_app
from backend.rag.knowledge import ingest_paths
from backend.runs.live import LiveRun
from backend.tests.conftest import fake_settings
from bench.lib import SAMPLE_DOCS
from bench.lib.faults import history_views
from bench.lib.server import serve_in_thread

POEM = "Write a poem about the sea"  # chat mode: the fake model streams 16 words
Numbered = list[tuple[int, str, dict]]


def numbered(response: httpx.Response) -> Numbered:
    """(id, event, data) of a finished SSE response, pings skipped."""
    return [(int(s.id), s.event, s.json()) for s in EventSource(response).iter_sse() if s.data]


async def read_until(url: str, method: str, path: str, stop_after_tokens: int | None = None, **kw) -> Numbered:
    """Stream from a real server; leave after `stop_after_tokens` tokens (None: read to the end)."""
    seen: Numbered = []
    async with httpx.AsyncClient(base_url=url, timeout=30) as client, aconnect_sse(client, method, path, **kw) as sse:
        async for s in sse.aiter_sse():
            if s.data:
                seen.append((int(s.id), s.event, s.json()))
            if stop_after_tokens is not None and sum(e == "token" for _, e, _ in seen) >= stop_after_tokens:
                break  # leaving the block closes the connection
    return seen


async def until_logged(app, run_id: str) -> None:
    """Wait until the finished run has left memory: its whole log is in the file."""
    for _ in range(200):
        if run_id not in app.state.services.runner.live:
            return
        await asyncio.sleep(0.01)
    raise AssertionError(f"run {run_id} is still in memory")


def answer_of(events: Numbered) -> str:
    return "".join(d["text"] for _, e, d in events if e == "token")


@pytest.fixture
def slow_server(tmp_path):
    app = create_app(fake_settings(tmp_path / "data", fake_tokens_per_second=10))
    with serve_in_thread(app) as url:
        yield url, app


@pytest.fixture
def slower_server(tmp_path):
    """Answers take about 7 s: a client that leaves after 0.8 s is noticed long before, even on a loaded machine
    (at 10 words/s, the /v1 case once found the turn stored: CI shared its 2 cores with other work)."""
    app = create_app(fake_settings(tmp_path / "data", fake_tokens_per_second=3))
    with serve_in_thread(app) as url:
        yield url, app


async def test_replay_from_every_last_event_id_of_a_finished_run_is_the_original_stream(app, client):
    original = numbered(await client.post("/api/chat/stream", json={"message": POEM, "mode": "chat"}))
    assert [i for i, _, _ in original] == list(range(1, len(original) + 1)) and original[-1][1] == "done"
    run_id = original[0][2]["run_id"]
    await until_logged(app, run_id)  # the replays below read the file
    for k in range(len(original) + 1):
        replay = await client.get(f"/api/runs/{run_id}/stream", headers={"Last-Event-ID": str(k)})
        assert replay.status_code == 200 and numbered(replay) == original[k:], k
    assert numbered(await client.get(f"/api/runs/{run_id}/stream?after=3")) == original[3:]
    info = (await client.get(f"/api/runs/{run_id}")).json()
    assert info["status"] == "completed" and info["last_event_id"] == len(original) and info["question"] == POEM


async def test_two_followers_and_a_client_that_leaves_and_re_attaches_see_every_event_once(slow_server):
    url, app = slow_server
    first = await read_until(url, "POST", "/api/chat/stream", 3, json={"message": POEM, "mode": "chat"})
    run_id, thread_id = first[0][2]["run_id"], first[0][2]["thread_id"]
    async with httpx.AsyncClient(base_url=url) as client:
        thread = (await client.get(f"/api/threads/{thread_id}")).json()  # the first run of a new thread shows at once
    assert thread["active_run"]["run_id"] == run_id and thread["active_run"]["status"] == "running"
    follower = asyncio.create_task(read_until(url, "GET", f"/api/runs/{run_id}/stream"))
    await asyncio.sleep(0.3)  # the run goes on without its first client
    rest = await read_until(url, "GET", f"/api/runs/{run_id}/stream", headers={"Last-Event-ID": str(first[-1][0])})
    whole = await follower
    assert whole[-1][1] == "done" and first + rest == whole  # nothing lost, nothing twice
    assert answer_of(whole).strip() == whole[-1][2]["answer"]
    assert len(answer_of(first).split()) == 3 < len(answer_of(whole).split())
    async with httpx.AsyncClient(base_url=url) as client:
        views = await history_views(client, thread_id)
    assert views["page"] == [(POEM, whole[-1][2]["answer"])] == views["export"]
    async with httpx.AsyncClient(base_url=url) as client:
        assert (await client.get(f"/api/threads/{thread_id}")).json()["active_run"] is None


async def test_stop_cancels_the_model_keeps_the_partial_answer_marked_stopped_outside_memory(slow_server):
    url, app = slow_server
    model = app.state.services.deps.chat_model
    body = {"message": POEM, "mode": "chat", "thread_id": "stopped"}
    async with httpx.AsyncClient(base_url=url, timeout=30) as client:
        await client.post("/api/chat", json={"message": "Thanks!", "thread_id": "stopped"})  # a completed turn first
        seen: Numbered = []
        async with aconnect_sse(client, "POST", "/api/chat/stream", json=body) as sse:
            async for s in sse.aiter_sse():
                if s.data:
                    seen.append((int(s.id), s.event, s.json()))
                if s.event == "token" and sum(e == "token" for _, e, _ in seen) == 4:
                    run_id = seen[0][2]["run_id"]
                    started = time.monotonic()
                    cancelled = await client.post(f"/api/runs/{run_id}/cancel")
                    took = time.monotonic() - started
        assert cancelled.status_code == 200 and cancelled.json()["status"] == "stopped", cancelled.text
        assert took < 1.0, f"cancel took {took:.2f} s"
        name, last = seen[-1][1], seen[-1][2]
        assert name == "stopped" and last == {"run_id": run_id, "status": "stopped", "answer": answer_of(seen)}
        assert "done" not in [e for _, e, _ in seen] and 4 <= len(answer_of(seen).split()) < 16
        produced = len(model.calls)
        await asyncio.sleep(1.0)
        assert len(model.calls) == produced  # nothing generates in the background
        messages = (await client.get("/api/threads/stopped")).json()["messages"]
        assert [(m["content"], m["status"]) for m in messages[-2:]] == [(POEM, None), (last["answer"], "stopped")]
        assert messages[1]["latency_ms"] > 0 and messages[-1]["latency_ms"] is None  # a cut turn keeps no time
        memory = (await client.get("/api/threads/stopped/memory")).json()
        assert [e["question"] for e in memory["qa_index"]] == ["Thanks!"]  # the stopped turn is not memory
        nxt = await client.post("/api/chat", json={"message": "Tell me a joke", "thread_id": "stopped", "mode": "chat"})
        assert nxt.status_code == 200
        prompt = "\n".join(m.text for m in model.calls[-1])
        assert POEM not in prompt and last["answer"].strip() not in prompt
        again = await client.post(f"/api/runs/{run_id}/cancel")
        assert again.status_code == 409 and "already finished (stopped)" in again.json()["detail"]
        pages = [(m["content"], m["status"]) for m in (await client.get("/api/threads/stopped")).json()["messages"]]
        assert pages[2:] == [
            (POEM, None),
            (last["answer"], "stopped"),
            ("Tell me a joke", None),
            (nxt.json()["answer"], "completed"),
        ]


async def test_an_answer_stopped_after_the_search_keeps_the_steps_it_showed_with_what_the_search_found(tmp_path):
    app = create_app(fake_settings(tmp_path / "data", fake_tokens_per_second=10))
    async with LifespanManager(app):
        services = app.state.services
        await ingest_paths(services.knowledge, [SAMPLE_DOCS])
        run = await services.runner.start("How long is the Zephyr-9 warranty?", "rag")
        seen = []
        async for _, event in run.follow():
            seen.append(event)
            if isinstance(event, TokenEvent):  # the model is writing: the search is over, no sources listed yet
                await services.runner.stop(run.run_id)
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url="http://test") as client:
            stored = (await client.get(f"/api/threads/{run.thread_id}")).json()["messages"][-1]
    assert isinstance(seen[-1], StoppedEvent) and not any(isinstance(e, SourcesEvent) for e in seen)
    said = [e for e in seen if isinstance(e, StatusEvent)]
    found = next(e for e in said if e.node == "retriever" and e.phase == "end")
    assert found.detail and re.search(r"\d+ passages?$", found.detail)
    assert stored["status"] == "stopped" and stored["sources"] == []
    assert [line.split(":")[0] for line in stored["steps"]] == [e.node for e in said if e.phase == "start"]
    assert f"retriever: {found.label} ({found.detail})" in stored["steps"]
    assert stored["steps"][-1] == "generator: Writing answer…"  # at work when stopped: its label, ending in "…"


async def test_a_client_that_leaves_does_not_cancel_the_run_unless_it_asked(slow_server):
    url, app = slow_server
    kept = await read_until(url, "POST", "/api/chat/stream", 2, json={"message": POEM, "mode": "chat"})
    cut = await read_until(
        url, "POST", "/api/chat/stream", 2, json={"message": POEM, "mode": "chat", "on_disconnect": "cancel"}
    )
    await asyncio.sleep(2.5)  # long enough for the kept run to finish
    async with httpx.AsyncClient(base_url=url) as client:
        ran = (await client.get(f"/api/runs/{kept[0][2]['run_id']}")).json()
        assert ran["status"] == "completed"
        assert (await client.get(f"/api/threads/{kept[0][2]['thread_id']}")).json()["messages"][-1][
            "status"
        ] == "completed"
        gone = (await client.get(f"/api/runs/{cut[0][2]['run_id']}")).json()
        assert gone["status"] == "cancelled"
        assert (await client.get(f"/api/threads/{cut[0][2]['thread_id']}")).status_code == 404


async def test_bad_run_requests_get_clear_errors(client):
    unknown = await client.get("/api/runs/nope/stream")
    assert unknown.status_code == 404 and "run 'nope' does not exist" in unknown.json()["detail"]
    assert (await client.post("/api/runs/nope/cancel")).status_code == 404
    assert (await client.get("/api/runs/nope")).status_code == 404
    events = numbered(await client.post("/api/chat/stream", json={"message": "Thanks!"}))
    run_id = events[0][2]["run_id"]
    for bad in ("after=-1", "after=abc"):
        response = await client.get(f"/api/runs/{run_id}/stream?{bad}")
        assert response.status_code == 422 and "after" in response.json()["detail"], bad
    header = await client.get(f"/api/runs/{run_id}/stream", headers={"Last-Event-ID": "x7"})
    assert header.status_code == 422 and "Last-Event-ID" in header.json()["detail"]
    too_big = await client.get(f"/api/runs/{run_id}/stream?after={2**63}")  # over SQLite's integers: was a 500
    assert too_big.status_code == 422 and "after" in too_big.json()["detail"]
    huge = await client.get(f"/api/runs/{run_id}/stream", headers={"Last-Event-ID": "9" * 20})
    assert huge.status_code == 422 and "Last-Event-ID" in huge.json()["detail"]
    finished = await client.post(f"/api/runs/{run_id}/cancel")
    assert finished.status_code == 409 and "already finished (completed)" in finished.json()["detail"]


async def test_finished_runs_logs_are_pruned_after_the_configured_time(app, client):
    events = numbered(await client.post("/api/chat/stream", json={"message": "Thanks!"}))
    run_id = events[0][2]["run_id"]
    runner = app.state.services.runner
    await until_logged(app, run_id)
    assert await runner.prune(app.state.settings.run_log_hours) == 0  # RAG_RUN_LOG_HOURS (24 h) not reached yet
    assert (await client.get(f"/api/runs/{run_id}")).status_code == 200
    await asyncio.sleep(0.01)
    assert await runner.prune(0.001 / 3600) == 1  # older than a millisecond
    gone = await client.get(f"/api/runs/{run_id}/stream")
    assert gone.status_code == 404 and "pruned" in gone.json()["detail"]


async def test_a_run_whose_turn_is_already_stored_is_not_offered_again_as_the_threads_active_run(app, client):
    # The turn is committed with its final checkpoint before `done` goes out: in between, the run is still live and
    # unfinished. A client opening the thread then must see the answer once (stored), not also as a run to follow.
    events = numbered(await client.post("/api/chat/stream", json={"message": "Thanks!"}))
    run_id, thread_id = events[0][2]["run_id"], events[0][2]["thread_id"]
    await until_logged(app, run_id)
    runner = app.state.services.runner
    runner.live[run_id] = LiveRun(run_id, thread_id, "Thanks!", "2026-01-01T00:00:00")  # `done` not sent yet
    try:
        assert runner.active(thread_id) is not None
        thread = (await client.get(f"/api/threads/{thread_id}")).json()
    finally:
        runner.live.pop(run_id)
    assert thread["active_run"] is None
    assert [m["role"] for m in thread["messages"]] == ["user", "assistant"]


async def test_replay_from_every_last_event_id_of_a_live_run_is_the_suffix_every_follower_sees(tmp_path):
    # The finished-run test above replays from the log file; this one re-attaches while the run is still going, so
    # the replay comes from memory and then joins the live events. Every follower must see the same sequence.
    app = create_app(fake_settings(tmp_path / "data", fake_tokens_per_second=3))  # 5 s: followers join in time
    with serve_in_thread(app) as url:
        await _follow_from_every_id(url, app)


async def _follow_from_every_id(url: str, app) -> None:
    first = await read_until(url, "POST", "/api/chat/stream", 2, json={"message": POEM, "mode": "chat"})
    run_id = first[0][2]["run_id"]
    path = f"/api/runs/{run_id}/stream"
    whole = asyncio.create_task(read_until(url, "GET", path))
    ks = range(first[-1][0] + 1)
    followers = [asyncio.create_task(read_until(url, "GET", path, headers={"Last-Event-ID": str(k)})) for k in ks]
    await asyncio.sleep(0.2)
    assert not app.state.services.runner.live[run_id].finished  # they joined while the model was still writing
    suffixes = await asyncio.gather(*followers)
    original = await whole
    assert original[-1][1] == "done" and original[: len(first)] == first
    for k, suffix in enumerate(suffixes):
        assert suffix == original[k:], k


@asynccontextmanager
async def started(client: httpx.AsyncClient, body: dict) -> AsyncIterator[tuple[AsyncIterator, str]]:
    """A turn streamed from POST /api/chat/stream, past its metadata: (the rest of its events, its run id)."""
    async with aconnect_sse(client, "POST", "/api/chat/stream", json=body) as sse:
        events = sse.aiter_sse()
        yield events, (await anext(events)).json()["run_id"]


async def test_a_run_cancelled_by_its_client_leaving_ends_with_an_error_event_for_its_followers(slow_server):
    url, app = slow_server
    body = {"message": POEM, "mode": "chat", "on_disconnect": "cancel"}
    async with httpx.AsyncClient(base_url=url, timeout=30) as client:
        async with started(client, body) as (events, run_id):
            follower = asyncio.create_task(read_until(url, "GET", f"/api/runs/{run_id}/stream"))
            async for event in events:
                if event.event == "token":
                    break  # the asker leaves after its first token
        followed = await asyncio.wait_for(follower, 10)
    assert followed[-1][1] == "error" and followed[-1][2]["code"] == "cancelled", followed[-1]
    await until_logged(app, run_id)
    replayed = await read_until(url, "GET", f"/api/runs/{run_id}/stream")
    assert replayed[-1] == followed[-1]


async def wait_for_no_runs(app, seconds: float = 6) -> None:
    runner = app.state.services.runner
    for _ in range(int(seconds / 0.05)):
        if not runner.live:
            return
        await asyncio.sleep(0.05)
    raise AssertionError("a run is still going")


@pytest.mark.parametrize("api", ["/api/chat", "/v1/chat/completions"])
async def test_a_json_request_whose_client_leaves_cancels_its_run_and_keeps_nothing(slower_server, api):
    url, app = slower_server
    thread = f"json-leaves-{api.count('/')}"
    if api == "/api/chat":
        request = {"json": {"message": POEM, "mode": "chat", "thread_id": thread, "on_disconnect": "cancel"}}
    else:  # /v1 has no on_disconnect: a client that leaves always stops its turn, as on its stream
        messages = [{"role": "user", "content": POEM}]
        request = {"json": {"model": "ragline-chat", "messages": messages}, "headers": {"X-Ragline-Thread-Id": thread}}
    async with httpx.AsyncClient(base_url=url, timeout=0.8) as client:
        with pytest.raises(httpx.ReadTimeout):  # the answer takes about 2 s at 10 words/s: the client gives up
            await client.post(api, **request)
    await wait_for_no_runs(app)  # long enough for the answer to have finished, had the run gone on
    async with httpx.AsyncClient(base_url=url) as client:
        assert (await client.get(f"/api/threads/{thread}")).status_code == 404


async def test_a_new_thread_is_listed_under_its_question_while_its_first_answer_is_written(slow_server):
    url, app = slow_server
    body = {"message": POEM, "mode": "chat", "thread_id": "listed-early"}
    async with httpx.AsyncClient(base_url=url, timeout=30) as client:
        assert (await client.post("/api/chat", json={"message": "Hello", "thread_id": "older"})).status_code == 200
        async with started(client, body) as (events, run_id):
            listed = (await client.get("/api/threads")).json()  # what a page reloaded now shows in its sidebar
            assert [(t["thread_id"], t["title"]) for t in listed] == [("listed-early", POEM), ("older", "Hello")]
            async for _ in events:
                pass
        await until_logged(app, run_id)
        listed = (await client.get("/api/threads")).json()
        assert [(t["thread_id"], t["title"]) for t in listed] == [("listed-early", POEM), ("older", "Hello")]


async def test_a_run_of_this_server_that_has_ended_is_not_listed_while_its_status_is_still_being_logged(app, client):
    runner = app.state.services.runner
    for run_id in ("ended", "just-started"):
        await runner.runlog.start(run_id, f"thread-{run_id}", f"Asked in {run_id}", "2026-11-26T10:00:00.000+00:00")
    runner.live["ended"] = LiveRun("ended", "thread-ended", "Asked in ended", "2026-11-26T10:00:00.000+00:00")
    runner.live["ended"].end("completed")  # its last event went out; the log still says running
    listed = (await client.get("/api/threads")).json()
    runner.live.pop("ended")
    assert [t["thread_id"] for t in listed] == ["thread-just-started"]  # logged, not yet in `live`: answering


async def test_a_run_that_ends_while_the_log_is_read_is_not_listed_as_answering(app, monkeypatch):
    runner = app.state.services.runner
    run = await runner.start(POEM, "chat", "ends-meanwhile")
    read = runner.runlog.running

    async def read_then_the_run_ends() -> list[dict]:
        rows = await read()  # the run is logged as running …
        await until_logged(app, run.run_id)  # … and ends, leaving `live`, before the rows are looked at
        return rows

    monkeypatch.setattr(runner.runlog, "running", read_then_the_run_ends)
    answering = await runner.answering()
    assert run.status == "completed" and run.run_id not in [r["run_id"] for r in answering]


async def test_a_run_whose_caller_left_while_it_was_logged_is_not_left_answering(app, client, monkeypatch):
    """A stream's client gone while its run's row was being written (the write goes on in its worker thread): the
    row stayed `running` with no run behind it, so the thread listed an active run until a restart, which a reload
    followed forever."""
    runner = app.state.services.runner
    start, written = runner.runlog.start, asyncio.Event()

    async def written_then_slow_to_return(*args) -> None:
        await start(*args)  # the row is in …
        written.set()
        await asyncio.sleep(0.5)  # … and the caller is cancelled before the write returns

    monkeypatch.setattr(runner.runlog, "start", written_then_slow_to_return)
    starting = asyncio.create_task(runner.start(POEM, "chat", "left-while-logged"))
    await written.wait()
    starting.cancel()
    with pytest.raises(asyncio.CancelledError):
        await starting
    for _ in range(200):  # the clean-up goes on once the write returns
        if not await runner.runlog.running():
            break
        await asyncio.sleep(0.01)
    assert await runner.runlog.running() == [] and await runner.answering() == []
    assert (await client.get("/api/threads/left-while-logged")).json().get("active_run") is None


async def test_a_new_threads_first_run_is_a_409_to_rename_or_delete_not_a_404(slow_server):
    url, app = slow_server
    body = {"message": POEM, "mode": "chat", "thread_id": "first-run"}
    async with httpx.AsyncClient(base_url=url, timeout=30) as client:
        async with started(client, body) as (events, run_id):
            assert (await client.get("/api/threads/first-run")).json()["active_run"]["run_id"] == run_id
            deleted = await client.delete("/api/threads/first-run")
            assert deleted.status_code == 409 and "first question" in deleted.json()["detail"]
            renamed = await client.patch("/api/threads/first-run", json={"title": "Sea"})
            assert renamed.status_code == 409 and "first question" in renamed.json()["detail"]
            async for _ in events:
                pass
        await until_logged(app, run_id)
        assert (await client.delete("/api/threads/first-run")).status_code == 204
