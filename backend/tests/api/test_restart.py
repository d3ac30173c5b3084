"""kill -9 of a real server while a turn streams from the model: after a restart, one history everywhere."""

import httpx
import pytest
from httpx_sse import connect_sse

from bench.lib.server import serve_in_process

POEM = "Write a poem about the sea"  # answered by the model, streamed word by word at 20 words a second
KILL_POINTS = {
    "before the first token": lambda name, data: name == "status" and data == ("generator", "start"),
    "mid-answer": lambda name, data: name == "token" and data >= 3,
    "while checking and saving": lambda name, data: name == "status" and data == ("generator", "end"),
    "right after done": lambda name, data: name == "done",
}


def history(url: str, thread_id: str) -> dict[str, list[tuple[str, str]]]:
    """The thread's (question, answer) pairs as the page, the export and the model's memory see them."""
    page = httpx.get(f"{url}/api/threads/{thread_id}").json()["messages"]
    export = httpx.get(f"{url}/api/threads/{thread_id}/export").json()["turns"]
    memory = httpx.get(f"{url}/api/threads/{thread_id}/memory").json()["qa_index"]
    return {
        "page": list(zip([m["content"] for m in page[::2]], [m["content"] for m in page[1::2]], strict=True)),
        "export": [(t["question"], t["answer"]) for t in export],
        "memory": [(e["question"], e["answer"]) for e in memory],
    }


def stream_until(url: str, body: dict, kill_point, proc) -> bool:
    """Stream a turn and SIGKILL the server at the kill point; True when `done` had already arrived."""
    tokens, name = 0, ""
    with httpx.Client(timeout=30) as client, connect_sse(client, "POST", f"{url}/api/chat/stream", json=body) as sse:
        for event in sse.iter_sse():
            name, data = event.event, event.json()
            tokens += name == "token"
            seen = tokens if name == "token" else (data.get("node"), data.get("phase"))
            if kill_point(name, seen):
                proc.kill()
                break
    proc.wait(timeout=10)
    return name == "done"


@pytest.mark.parametrize("point", list(KILL_POINTS))
def test_kill_9_while_the_model_streams_then_page_export_and_memory_agree_after_restart(tmp_path, point):
    env = {"RAG_LLM_BACKEND": "fake", "RAG_DATA_DIR": str(tmp_path / "data"), "RAG_FAKE_TOKENS_PER_SECOND": "20"}
    thread_id = "survivor"
    with serve_in_process(env) as (url, proc):
        first = httpx.post(f"{url}/api/chat", json={"message": "Hello", "thread_id": thread_id}, timeout=30).json()
        body = {"message": POEM, "thread_id": thread_id, "mode": "chat"}
        finished = stream_until(url, body, KILL_POINTS[point], proc)
    with serve_in_process(env) as (url, _):
        views = history(url, thread_id)
        assert views["page"] == views["export"] == views["memory"], views
        assert views["page"][0] == ("Hello", first["answer"])
        assert len(views["page"]) == 2 if finished else len(views["page"]) in (1, 2)
        if point in ("before the first token", "mid-answer"):
            assert len(views["page"]) == 1  # the model was still writing: nothing of the turn was stored
        again = httpx.post(f"{url}/api/chat", json={"message": "Hi again", "thread_id": thread_id}, timeout=30)
        assert again.status_code == 200
        after = history(url, thread_id)
        assert after["page"] == after["export"] == after["memory"]
        assert after["page"][-1][0] == "Hi again" and len(after["page"]) == len(views["page"]) + 1
