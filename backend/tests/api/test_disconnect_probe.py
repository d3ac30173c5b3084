"""The fault probe of issue 9 against a real server: cut streams right after their first token, many at once."""

import asyncio

import httpx

from bench.lib import SAMPLE_DOCS
from bench.lib.faults import DISCONNECT_VARIANTS as VARIANTS
from bench.lib.faults import cut_after_first_token, history_views
from bench.lib.server import serve_in_process

STREAMS_PER_VARIANT = 10


async def probe(url: str) -> None:
    async with httpx.AsyncClient(base_url=url, timeout=60) as client:
        threads = [
            (f"{name.replace(' ', '-')}-{i}", q) for name, q in VARIANTS.items() for i in range(STREAMS_PER_VARIANT)
        ]
        await asyncio.gather(*(client.post("/api/chat", json={"message": "Hello", "thread_id": t}) for t, _ in threads))
        await asyncio.gather(*(cut_after_first_token(client, t, q) for t, q in threads))
        await asyncio.sleep(0.5)  # let the server notice the disconnects
        for thread_id, question in threads:
            seen = await history_views(client, thread_id)
            assert seen["page"] == seen["export"] == seen["memory"], (thread_id, seen)  # none half-recorded
            assert [q for q, _ in seen["page"]] in (["Hello"], ["Hello", question])
            again = await client.post("/api/chat", json={"message": "Thanks!", "thread_id": thread_id})
            assert again.status_code == 200, again.text
            assert (await client.patch(f"/api/threads/{thread_id}", json={"title": "probe"})).status_code == 200
            assert (await client.delete(f"/api/threads/{thread_id}")).status_code == 204


def test_cut_streams_leave_no_lock_and_no_half_recorded_thread(tmp_path):
    env = {"RAG_LLM_BACKEND": "fake", "RAG_DATA_DIR": str(tmp_path / "data"), "RAG_FAKE_TOKENS_PER_SECOND": "200"}
    with serve_in_process(env, ingest_paths=[SAMPLE_DOCS]) as (url, proc):
        asyncio.run(probe(url))
        log = proc.log()
    assert "database is locked" not in log and "Traceback" not in log, log[-3000:]
