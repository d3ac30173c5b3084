"""The KV cache follows the thread, on the real embedded 0.5B model: follow-ups and restarts are served from it."""

import asyncio
import logging
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx
import pytest
from fastapi import FastAPI

from backend.graph.builder import build_graph
from backend.main import create_app
from backend.rag.knowledge import ingest_paths
from backend.settings import Settings
from backend.store.checkpointer import checkpointer_for
from backend.store.open import open_storage
from backend.tests.conftest import SAMPLE_DOCS
from bench.lib.llama import LlamaLog, stderr_to
from bench.lib.server import serve_in_thread
from bench.lib.sse import parse_sse

pytestmark = pytest.mark.embedded_model


def settings(data_dir) -> Settings:
    return Settings(
        llm_backend="embedded",
        embedded_model="qwen2.5-coder-0.5b",
        embedded_ctx=2048,
        embedded_slots=1,  # one slot: its counters describe the last request
        temperature=0.0,
        max_answer_tokens=60,
        data_dir=data_dir,
        faq_path=None,  # every turn goes to the model
    )


def ask(url: str, message: str, thread_id: str) -> dict:
    """The turn's done event, with `replaced`: whether the checks changed the answer the model wrote (a `replace`
    event), which the thread then remembers in place of the tokens left in the slot."""
    events = parse_sse(
        httpx.post(f"{url}/api/chat/stream", json={"message": message, "thread_id": thread_id}, timeout=600)
    )
    assert events[-1][0] == "done", events[-1]
    return {**events[-1][1], "replaced": any(name == "replace" for name, _ in events)}


def last_call(log: LlamaLog, timeout: float = 30) -> dict:
    """llama.cpp's own figures for the last answer since the previous read of its log: all prompt tokens and those
    evaluated (the rest came from the KV cache). The /slots counters read 0 once a request is done. The answerable
    check's one-token verdict, asked after the answer and then undone (the slot is put back), is not an answer."""
    deadline = time.monotonic() + timeout
    while not (calls := log.calls()):
        assert time.monotonic() < deadline, "llama.cpp logged no finished request"
        time.sleep(0.2)
    time.sleep(0.3)
    calls += log.calls()
    return [c for c in calls if c["decoded"] > 1][-1]


@contextmanager
def serving_the_samples(data: Path, log_path: Path) -> Iterator[tuple[FastAPI, str, LlamaLog]]:
    """A server on the 0.5B model with the sample documents ingested; its app, URL and llama.cpp's log."""
    app = create_app(settings(data))
    with stderr_to(log_path), serve_in_thread(app) as url:
        asyncio.run(ingest_paths(app.state.services.knowledge, [SAMPLE_DOCS]))
        yield app, url, LlamaLog(log_path)


def cached(call: dict) -> int:
    """Prompt tokens of a request that llama.cpp took from the KV cache."""
    return call["prompt_tokens"] - call["evaluated"]


def in_slot(call: dict) -> int:
    """Tokens a request left in its slot: its prompt and its answer."""
    return call["prompt_tokens"] + call["decoded"] - 1


def test_first_turns_find_the_system_prompt_already_cached_and_a_restart_restores_it_instead_of_evaluating(
    tmp_path, caplog
):
    log_path = tmp_path / "llama.log"
    app = create_app(settings(tmp_path / "data"))
    with stderr_to(log_path), serve_in_thread(app) as url:
        log = LlamaLog(log_path)
        deadline = time.monotonic() + 120
        while not (primed := log.calls()):  # the startup request that caches the system prompt
            assert time.monotonic() < deadline, "the system prompt was never cached"
            time.sleep(0.2)
        done = ask(url, "Write one sentence about the sea.", "primed")
        first = last_call(log)
    assert primed[0]["evaluated"] > 100, primed  # the system prompt and the user header
    assert done["answer"]
    # the first turn of a fresh server evaluates its question, not the system prompt again
    assert first["evaluated"] < first["prompt_tokens"] - 100, first

    log.offset = log_path.stat().st_size
    caplog.set_level(logging.INFO, logger="backend.llm.prime")
    with stderr_to(log_path), serve_in_thread(create_app(settings(tmp_path / "data"))) as url:
        deadline = time.monotonic() + 120
        while "system prompt cached in 1 slot" not in caplog.text:
            assert time.monotonic() < deadline, "the slot was not primed after the restart"
            time.sleep(0.1)
        startup = log.calls()  # what llama.cpp evaluated while the slot was primed: nothing, it was restored
        ask(url, "Write one sentence about the moon.", "restarted")
        after_restart = last_call(log)
    assert startup == [], startup
    assert after_restart["evaluated"] < after_restart["prompt_tokens"] - 100, after_restart


def test_follow_ups_come_from_the_kv_cache_also_after_a_restart_and_the_cache_goes_with_its_thread(tmp_path, caplog):
    data, log_path = tmp_path / "data", tmp_path / "llama.log"
    with serving_the_samples(data, log_path) as (first, url, log):
        ask(url, "How often must the Zephyr-9 be serviced?", "kv")
        first_turn = last_call(log)
        follow_turn = ask(url, "And how much does a service cost?", "kv")
        follow = last_call(log)
        kv = first.state.services.models.kv
        saved = kv.folder / kv.filename("kv")
        assert saved.exists() and 0 < saved.stat().st_size <= 50e6
    # the follow-up's prompt starts with the first turn's prompt and answer, all of it taken from the cache
    assert cached(follow) >= in_slot(first_turn) - 2 > 0, (first_turn, follow)

    second = create_app(settings(data))
    caplog.set_level(logging.WARNING, logger="backend.llm.kv_cache")
    with stderr_to(log_path), serve_in_thread(second) as url:
        log = LlamaLog(log_path)
        log.offset = log_path.stat().st_size
        kv = second.state.services.models.kv
        (kv.folder / kv.filename("garbage")).write_bytes(b"not a KV cache" * 100)
        ask(url, "@it-security-policy what must I do when a laptop is lost?", "garbage")  # ignored, no error
        assert "KV cache restore ignored" in caplog.text
        last_call(log)  # the garbage thread's turn
        ask(url, "Is the service covered by the warranty?", "kv")
        after_restart = last_call(log)
        # restored from the file: the follow-up's prompt and, unless the checks changed it (the thread remembers
        # the final text, so the next prompt differs from the slot from there on), its answer
        restored = follow["prompt_tokens"] if follow_turn["replaced"] else in_slot(follow)
        assert cached(after_restart) >= restored - 2, (follow, after_restart, follow_turn["replaced"])
        assert httpx.delete(f"{url}/api/threads/kv").status_code == 204
        assert not list(kv.folder.glob(f"{kv.thread_key('kv')}.*"))


def test_a_call_without_cache_prompt_evaluates_its_whole_prompt_though_the_slot_holds_chunks_of_it(tmp_path):
    """What ModelLease.start_afresh relies on, when an earlier prompt showed a passage its asker has lost: llama.cpp
    would move chunks of the slot's cache into place (`n_cache_reuse`), values computed with that passage in the
    prompt; with `cache_prompt` false it evaluates the whole prompt."""
    topics = ("boilers", "ladders", "printers", "badges", "laptops", "keys", "desks", "parking", "travel", "lunch")
    common = " ".join(
        f"Rule {i}: {t} are checked every {i + 2} weeks by the facilities team." for i, t in enumerate(topics * 4)
    )
    lost = "The salary of the chief lighthouse keeper is 91,000 crowns a year."

    def call(user: str, cache: bool) -> dict:
        body = {
            "messages": [{"role": "system", "content": "Answer briefly."}, {"role": "user", "content": user}],
            "max_tokens": 1,
            "temperature": 0,
            "id_slot": 0,
            "cache_prompt": cache,
        }
        reply = httpx.post(f"{base}/v1/chat/completions", json=body, timeout=600)
        assert reply.status_code == 200, reply.text
        return reply.json()["timings"]

    app = create_app(settings(tmp_path / "data"))
    with serve_in_thread(app):
        base = app.state.services.models.base_url
        call(f"{lost}\n\n{common}\n\nHow often are ladders checked?", cache=True)  # the earlier prompt, in the slot
        reused = call(f"{common}\n\nHow often are ladders checked?", cache=True)  # the passage taken out
        call(f"{lost}\n\n{common}\n\nHow often are ladders checked?", cache=True)
        afresh = call(f"{common}\n\nHow often are ladders checked?", cache=False)
    assert reused["cache_n"] > 200, reused  # chunks moved into place, though the prompt no longer starts the same
    assert afresh["cache_n"] == 0 and afresh["prompt_n"] >= reused["prompt_n"] + reused["cache_n"] - 1, afresh


def test_a_server_that_cached_a_thread_before_another_replica_cut_its_window_reuses_none_of_that_cache(tmp_path):
    """Another replica's turn cut the thread's window for a passage its asker lost, and moved the thread's cache
    epoch (`cache_epoch`) in the shared checkpoint store. This server's llama.cpp still holds the thread's earlier
    cache, computed with that passage in the prompt, and so does its saved file: the next turn here evaluates its
    whole prompt, and the turn after it is served from the clean cache it left."""
    data = tmp_path / "data"
    with serving_the_samples(data, tmp_path / "llama.log") as (app, url, log):
        ask(url, "How often must the Zephyr-9 be serviced?", "cut")
        last_call(log)
        ask(url, "And how much does a service cost?", "cut")
        follow = last_call(log)
        assert cached(follow) > 100, follow  # the cache of epoch 0 serves the thread here
        kv = app.state.services.models.kv
        assert set(kv.saved("cut")) == {0}

        asyncio.run(another_replica_moves_the_epoch(settings(data), "cut", 1))
        ask(url, "Is the service covered by the warranty?", "cut")
        afresh = last_call(log)
        assert cached(afresh) == 0, afresh  # though the slot held all of the earlier turns
        assert set(kv.saved("cut")) == {1}  # the file of epoch 0 went; the clean one is saved under epoch 1
        ask(url, "Who carries out the service?", "cut")
        after = last_call(log)
    assert cached(after) >= afresh["prompt_tokens"] - 2, (afresh, after)  # (its answer may have been repaired)


async def another_replica_moves_the_epoch(config: Settings, thread_id: str, epoch: int) -> None:
    """What another replica's turn cut for a lost passage leaves in the checkpoint store it shares (only the
    epoch: this server's own window is left as it was)."""
    async with open_storage(config) as storage:
        checkpointer = await storage.conversations.call(lambda: checkpointer_for(storage.conversations))
        graph = build_graph(checkpointer)
        await graph.aupdate_state({"configurable": {"thread_id": thread_id}}, {"cache_epoch": epoch}, as_node="memory")
