"""A turn cancelled at any await point of its recording leaves the database unlocked and the thread whole."""

import asyncio
import sqlite3

import psycopg
import pytest

from bench.lib.faults import history_views
from bench.lib.sse import parse_sse

QUESTION = "How long is the Zephyr-9 warranty?"  # answered from the documents by the model


class CancelAtCall:
    """Wraps the database's job runner: cancels the running turn at its n-th job, before or after it runs. Only the
    turn's own jobs count (on Postgres the run log and the request's reads share the database)."""

    def __init__(self, db, n: int, when: str) -> None:
        self.db, self.n, self.when, self.calls = db, n, when, 0
        self._call = db.call
        db.call = self.call

    async def call(self, job):
        if not asyncio.current_task().get_name().startswith("turn:"):
            return await self._call(job)
        self.calls += 1
        hit = self.calls == self.n
        if hit and self.when == "before":
            self._cancel_turn()
        result = await self._call(job)
        if hit and self.when == "after":
            self._cancel_turn()
        return result

    def _cancel_turn(self) -> None:
        turns = [t for t in asyncio.all_tasks() if t.get_name().startswith("turn:")]
        assert len(turns) == 1
        turns[0].cancel()

    def remove(self) -> None:
        self.db.call = self._call


async def turns_ended(seconds: float = 5) -> None:
    """Wait until no run task is left: a run ends (its log row written) just after its `done` event went out."""
    for _ in range(int(seconds / 0.01)):
        if not any(t.get_name().startswith("turn:") for t in asyncio.all_tasks()):
            return
        await asyncio.sleep(0.01)
    raise AssertionError("a run task never ended")


async def test_cancel_at_every_database_await_of_a_turn_then_thread_whole_and_usable(app, client):
    db = app.state.services.checkpointer.db
    counter = CancelAtCall(db, 0, "never")
    await client.post("/api/chat/stream", json={"message": QUESTION, "thread_id": "count"})
    counter.remove()
    total = counter.calls
    assert total >= 3, total  # at least: read the thread, store the final checkpoint, log the run
    print(f"database jobs in one turn: {total}")
    for n in range(1, total + 1):
        for when in ("before", "after"):
            thread = f"t{n}{when}"
            assert (await client.post("/api/chat", json={"message": "Hello", "thread_id": thread})).status_code == 200
            await turns_ended()  # so the one run task below is the turn to cancel
            fault = CancelAtCall(db, n, when)
            try:
                events = parse_sse(
                    await client.post("/api/chat/stream", json={"message": QUESTION, "thread_id": thread})
                )
            finally:
                fault.remove()
            failed = [d for e, d in events if e == "error" and d["code"] != "cancelled"]  # cancelled: a last word
            assert fault.calls >= n and not failed, failed
            seen = await history_views(client, thread)
            assert seen["page"] == seen["export"] == seen["memory"], (n, when, seen)
            assert len(seen["page"]) in (1, 2)
            nxt = await client.post("/api/chat", json={"message": QUESTION, "thread_id": thread})
            assert nxt.status_code == 200, (n, when, nxt.text)
            after = await history_views(client, thread)
            assert after["page"] == after["export"] == after["memory"] and len(after["page"]) == len(seen["page"]) + 1
            assert (await client.patch(f"/api/threads/{thread}", json={"title": "renamed"})).status_code == 200
            assert (await client.delete(f"/api/threads/{thread}")).status_code == 204
            assert await history_views(client, thread) == {"page": [], "export": [], "memory": []}
    assert_no_transaction_left_open(db)


def assert_no_transaction_left_open(db) -> None:
    """SQLite: another connection takes the write lock at once. Postgres: no session is idle in a transaction."""
    if db.dialect == "postgres":
        with psycopg.connect(db.url, autocommit=True) as other:
            sql = "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() AND state LIKE 'idle in%'"
            assert other.execute(sql).fetchone()[0] == 0
        return
    other = sqlite3.connect(db.path, timeout=0.1)
    other.execute("BEGIN IMMEDIATE")
    other.execute("ROLLBACK")
    other.close()


async def test_delete_that_fails_half_way_leaves_the_thread_as_it_was(app, client):
    await client.post("/api/chat", json={"message": QUESTION, "thread_id": "keep"})
    before = await history_views(client, "keep")
    checkpointer = app.state.services.checkpointer
    original = checkpointer._on_delete

    def failing(conn, thread_id):
        original(conn, thread_id)  # turns and thread rows are gone inside the transaction…
        raise OSError("disk I/O error")  # …and then the disk fails

    checkpointer._on_delete = failing
    try:
        with pytest.raises(OSError):
            await client.delete("/api/threads/keep")
    finally:
        checkpointer._on_delete = original
    assert await history_views(client, "keep") == before and len(before["page"]) == 1
    assert (await client.delete("/api/threads/keep")).status_code == 204
    assert await history_views(client, "keep") == {"page": [], "export": [], "memory": []}
