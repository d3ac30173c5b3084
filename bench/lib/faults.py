"""Fault probes shared by the tests and `bench.faults`: history views, kill points, cut streams."""

from collections.abc import Callable
from dataclasses import dataclass
from subprocess import Popen
from typing import Any

import httpx
from httpx_sse import aconnect_sse, connect_sse

Pairs = list[tuple[str, str]]

POEM = "Write a poem about the sea"  # answered by the model, streamed word by word
KillPoint = Callable[[str, Any], bool]  # (event name, token count or (node, phase)) -> kill now
KILL_POINTS: dict[str, KillPoint] = {
    "before the first token": lambda name, data: name == "status" and data == ("generator", "start"),
    "mid-answer": lambda name, data: name == "token" and data >= 3,
    "while checking and saving": lambda name, data: name == "status" and data == ("generator", "end"),
    "right after done": lambda name, data: name == "done",
}
DISCONNECT_VARIANTS = {  # the answer arrives as one token after the memory node, or streams from the model
    "faq": "How much does a Zephyr-9 service cost?",
    "small talk": "Thanks!",
    "short answer": "@it-security-policy how long must passwords be?",
}


def agree(views: dict[str, Pairs]) -> bool:
    """The page, the export and the memory show the same exchanges; the memory keeps an answer's first
    ANSWER_PREVIEW_CHARS characters (graph/nodes/memory.py), so its answers are compared as prefixes."""
    if views["page"] != views["export"] or len(views["memory"]) != len(views["page"]):
        return False
    return all(q == mq and a.startswith(ma) for (q, a), (mq, ma) in zip(views["page"], views["memory"], strict=True))


def _views(page: httpx.Response, export: Any, memory: httpx.Response | None) -> dict[str, Pairs]:
    if page.status_code == 404:
        stray = memory is not None and memory.status_code != 404
        return {"page": [], "export": [], "memory": [("memory without a thread", "")] if stray else []}
    messages = page.json()["messages"]
    assert memory is not None
    pairs = zip(messages[::2], messages[1::2], strict=True)
    return {
        "page": [(q["content"], a["content"]) for q, a in pairs if a["status"] in (None, "completed")],
        "export": [(t["question"], t["answer"]) for t in export.json()["turns"] if t["status"] == "completed"],
        "memory": [(e["question"], e["answer"]) for e in memory.json()["qa_index"]],
    }


async def history_views(client: httpx.AsyncClient, thread_id: str) -> dict[str, Pairs]:
    """The thread's completed (question, answer) pairs from the page, the export and the memory endpoint ([] if
    none); stopped and interrupted turns stand beside the history, outside memory, and are left out."""
    page = await client.get(f"/api/threads/{thread_id}")
    memory = await client.get(f"/api/threads/{thread_id}/memory")
    export = await client.get(f"/api/threads/{thread_id}/export") if page.status_code != 404 else None
    return _views(page, export, memory)


def history_views_sync(url: str, thread_id: str) -> dict[str, Pairs]:
    """history_views for a blocking caller."""
    with httpx.Client(base_url=url, timeout=30) as client:
        page = client.get(f"/api/threads/{thread_id}")
        memory = client.get(f"/api/threads/{thread_id}/memory")
        export = client.get(f"/api/threads/{thread_id}/export") if page.status_code != 404 else None
    return _views(page, export, memory)


@dataclass
class Killed:
    """What the client of a killed stream saw: whether `done` had arrived, the run's id, the streamed text and the
    number of the last event it received (the SSE `id:` it would re-attach with)."""

    done: bool
    run_id: str
    text: str
    last_id: int = 0


def stream_and_kill(url: str, body: dict, kill_point: KillPoint, proc: Popen) -> Killed:
    """Stream a turn and SIGKILL the server at the kill point."""
    tokens, name, run_id, text, last_id = 0, "", "", "", 0
    with httpx.Client(timeout=30) as client, connect_sse(client, "POST", f"{url}/api/chat/stream", json=body) as sse:
        for event in sse.iter_sse():
            name, data, last_id = event.event, event.json(), int(event.id or last_id)
            run_id = data["run_id"] if name == "metadata" else run_id
            text += data["text"] if name == "token" else ""
            tokens += name == "token"
            seen = tokens if name == "token" else (data.get("node"), data.get("phase"))
            if kill_point(name, seen):
                proc.kill()
                break
    proc.wait(timeout=10)
    return Killed(name == "done", run_id, text, last_id)


async def cut_after_first_token(client: httpx.AsyncClient, thread_id: str, question: str) -> None:
    """Ask (a run that ends when its client leaves), then close the connection as soon as the first token arrives."""
    body = {"message": question, "thread_id": thread_id, "on_disconnect": "cancel"}
    async with aconnect_sse(client, "POST", "/api/chat/stream", json=body) as sse:
        async for event in sse.aiter_sse():
            if event.event == "token":
                return  # leaving the block closes the connection mid-stream
