"""kill -9 of a real server while a turn streams from the model: after a restart, one history everywhere."""

import httpx
import pytest

from bench.lib.faults import KILL_POINTS, POEM, stream_and_kill
from bench.lib.faults import history_views_sync as history
from bench.lib.server import serve_in_process


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
        assert len(views["page"]) == 2 if finished else len(views["page"]) in (1, 2)
        if point in ("before the first token", "mid-answer"):
            assert len(views["page"]) == 1  # the model was still writing: nothing of the turn was stored
        again = httpx.post(f"{url}/api/chat", json={"message": "Hi again", "thread_id": thread_id}, timeout=30)
        assert again.status_code == 200
        after = history(url, thread_id)
        assert after["page"] == after["export"] == after["memory"]
        assert after["page"][-1][0] == "Hi again" and len(after["page"]) == len(views["page"]) + 1
