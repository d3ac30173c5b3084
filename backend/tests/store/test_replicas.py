"""Two real API processes on one real Postgres, each with its own data folder (as on two machines): any replica
serves any request. A run started on one is followed and stopped from the other; concurrent turns spread over
both lose nothing; `kill -9` of one mid-run leaves the run `interrupted` (found by the other) and the thread clean.
"""

import asyncio
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from httpx_sse import aconnect_sse

from bench.lib.faults import KILL_POINTS, POEM, stream_and_kill
from bench.lib.faults import history_views_sync as history
from bench.lib.server import ServerProcess, serve_in_process

Replica = tuple[str, ServerProcess]


def replica_env(postgres_url: str, data_dir: Path, tokens_per_second: str = "10") -> dict[str, str]:
    return {
        "RAG_LLM_BACKEND": "fake",
        "RAG_DATA_DIR": str(data_dir),
        "RAG_FAKE_TOKENS_PER_SECOND": tokens_per_second,
        "RAG_DATABASE_URL": postgres_url,
    }


@pytest.fixture
def two_replicas(postgres_url: str, tmp_path: Path) -> Iterator[tuple[Replica, Replica]]:
    with (
        serve_in_process(replica_env(postgres_url, tmp_path / "a" / "data")) as a,
        serve_in_process(replica_env(postgres_url, tmp_path / "b" / "data")) as b,
    ):
        yield a, b


async def test_a_stream_started_on_one_replica_is_followed_and_stopped_from_the_other(two_replicas) -> None:
    (url_a, _), (url_b, _) = two_replicas
    async with httpx.AsyncClient(timeout=60) as client:
        started: asyncio.Future[str] = asyncio.get_running_loop().create_future()

        async def ask_a() -> list[tuple[str, dict]]:
            events = []
            body = {"message": POEM, "thread_id": "shared", "mode": "chat"}
            async with aconnect_sse(client, "POST", f"{url_a}/api/chat/stream", json=body) as sse:
                async for event in sse.aiter_sse():
                    events.append((event.event, event.json()))
                    if event.event == "metadata":
                        started.set_result(event.json()["run_id"])
            return events

        asking = asyncio.create_task(ask_a())
        run_id = await asyncio.wait_for(started, 30)
        followed: list[tuple[str, dict]] = []
        async with aconnect_sse(client, "GET", f"{url_b}/api/runs/{run_id}/stream") as sse:
            async for event in sse.aiter_sse():
                followed.append((event.event, event.json()))
                if sum(name == "token" for name, _ in followed) == 3:
                    stop = await client.post(f"{url_b}/api/runs/{run_id}/cancel")
                    assert stop.status_code == 200 and stop.json()["status"] == "stopped", stop.text
        on_a = await asyncio.wait_for(asking, 30)
        assert followed[-1][0] == on_a[-1][0] == "stopped", (followed[-1], on_a[-1])
        partial = followed[-1][1]["answer"]
        assert partial and partial == on_a[-1][1]["answer"]  # the same run, seen from both replicas
        for url in (url_a, url_b):
            messages = (await client.get(f"{url}/api/threads/shared")).json()["messages"]
            assert [(m["role"], m["status"]) for m in messages] == [("user", None), ("assistant", "stopped")]
            assert messages[1]["content"] == partial


async def test_fifty_concurrent_turns_spread_over_both_replicas_lose_nothing(postgres_url, tmp_path) -> None:
    env = {"RAG_FAKE_TOKENS_PER_SECOND": "0"}
    with (
        serve_in_process(replica_env(postgres_url, tmp_path / "a" / "data") | env) as (url_a, _),
        serve_in_process(replica_env(postgres_url, tmp_path / "b" / "data") | env) as (url_b, _),
    ):
        urls = [url_a, url_b]
        async with httpx.AsyncClient(timeout=120, limits=httpx.Limits(max_connections=60)) as client:
            replies = await asyncio.gather(
                *[
                    client.post(f"{urls[n % 2]}/api/chat", json={"message": f"Hello number {n}", "thread_id": f"t{n}"})
                    for n in range(50)
                ]
            )
            assert [r.status_code for r in replies] == [200] * 50, [r.text for r in replies if r.status_code != 200]
            for n in range(50):  # every turn is stored, and read the same from the replica that did not run it
                page = (await client.get(f"{urls[(n + 1) % 2]}/api/threads/t{n}")).json()["messages"]
                assert [m["content"] for m in page] == [f"Hello number {n}", replies[n].json()["answer"]]
            listed = (await client.get(f"{url_a}/api/threads")).json()
        assert {f"t{n}" for n in range(50)} <= {t["thread_id"] for t in listed}


def test_kill_9_of_one_replica_mid_run_leaves_the_run_interrupted_and_the_thread_clean(postgres_url, tmp_path) -> None:
    with serve_in_process(replica_env(postgres_url, tmp_path / "b" / "data")) as (url_b, _):
        with serve_in_process(replica_env(postgres_url, tmp_path / "a" / "data")) as (url_a, proc_a):
            first = httpx.post(f"{url_a}/api/chat", json={"message": "Hello", "thread_id": "kept"}, timeout=30)
            body = {"message": POEM, "thread_id": "kept", "mode": "chat"}
            killed = stream_and_kill(url_a, body, KILL_POINTS["mid-answer"], proc_a)
        assert not killed.done and killed.text
        deadline, run = time.monotonic() + 60, {}
        while time.monotonic() < deadline:  # replica B notices A's heartbeat stopped and interrupts A's run
            run = httpx.get(f"{url_b}/api/runs/{killed.run_id}").json()
            if run["status"] != "running":
                break
            time.sleep(0.5)
        assert run["status"] == "interrupted", run
        views = history(url_b, "kept")
        assert views["page"] == views["export"] == views["memory"] == [("Hello", first.json()["answer"])]
        last = httpx.get(f"{url_b}/api/threads/kept").json()["messages"][-1]
        assert last["status"] == "interrupted" and killed.text.startswith(last["content"])
        again = httpx.post(f"{url_b}/api/chat", json={"message": "Hi again", "thread_id": "kept"}, timeout=30)
        assert again.status_code == 200
        after = history(url_b, "kept")
        assert after["page"] == after["export"] == after["memory"] and len(after["page"]) == 2


async def test_two_questions_on_one_thread_sent_to_both_replicas_at_once_run_one_after_the_other(two_replicas):
    (url_a, _), (url_b, _) = two_replicas
    async with httpx.AsyncClient(timeout=60) as client:
        replies = await asyncio.gather(
            client.post(f"{url_a}/api/chat", json={"message": "Hello from A", "thread_id": "both"}),
            client.post(f"{url_b}/api/chat", json={"message": "Hello from B", "thread_id": "both"}),
        )
        assert [r.status_code for r in replies] == [200, 200], [r.text for r in replies]
        page = (await client.get(f"{url_a}/api/threads/both")).json()["messages"]
    questions = [m["content"] for m in page if m["role"] == "user"]
    assert sorted(questions) == ["Hello from A", "Hello from B"]  # both stored, neither lost to the other
    answers = {r.json()["answer"] for r in replies}
    assert {m["content"] for m in page if m["role"] == "assistant"} == answers
    views = history(url_b, "both")
    assert views["page"] == views["export"] and len(views["memory"]) == 2  # the second turn saw the first


async def test_a_document_uploaded_to_one_replica_is_searched_and_served_by_the_other(two_replicas) -> None:
    (url_a, _), (url_b, _) = two_replicas
    text = b"# Lighthouse rota\n\nThe lighthouse keepers on Skerry Rock rotate every six weeks.\n"
    async with httpx.AsyncClient(timeout=60) as client:
        upload = await client.post(f"{url_a}/api/documents", files={"files": ("rota.md", text, "text/markdown")})
        assert upload.status_code in (200, 202), upload.text
        doc_id = upload.json()["documents"][0]["id"]
        for _ in range(300):  # ingested in A's background worker
            doc = (await client.get(f"{url_b}/api/documents/{doc_id}")).json()
            if doc["status"] != "queued" and doc["status"] != "processing":
                break
            await asyncio.sleep(0.1)
        assert doc["status"] == "ready", doc
        assert (await client.get(f"{url_b}/api/documents/{doc_id}/file")).content == text  # the original, from B
        found = await client.post(f"{url_b}/api/search", json={"query": "how often do lighthouse keepers rotate"})
        assert found.json()["results"][0]["document"] == "rota.md"
