"""The run log on its own, on SQLite and on Postgres: batched appends, final status, unfinished runs, pruning."""

import asyncio
import sqlite3

from backend.contract.events import StatusEvent
from backend.runs.log import BATCH_SECONDS, RECOVERED_GAP, SENT_AHEAD, RunLog
from backend.runs.unfinished import logged_steps
from backend.store.sqlite import SqliteDatabase


async def test_events_reach_the_file_in_batches_and_finish_writes_the_rest_with_the_status(database):
    async with RunLog.open(database) as log:
        await log.start("r1", "t1", "question?", "2026-01-01T00:00:00.000+00:00")
        for seq in range(1, 4):
            log.append("r1", seq, "token", f'{{"text": "w{seq} "}}')
        await asyncio.sleep(BATCH_SECONDS * 4)
        assert [s for s, _, _ in await log.events("r1")] == [1, 2, 3]  # one batch, without being asked
        log.append("r1", 4, "done", "{}")
        await log.finish("r1", "completed", 4, "2026-01-01T00:00:01.000+00:00")
        assert [s for s, _, _ in await log.events("r1", after=2)] == [3, 4]
        assert (await log.run("r1"))["status"] == "completed" and (await log.run("r1"))["last_event_id"] == 4


async def test_unfinished_runs_carry_their_logged_text_and_pruning_keeps_them_and_recent_runs(database):
    async with RunLog.open(database) as log:
        for run_id, created in (("old", "2026-01-01"), ("new", "2026-01-03"), ("live", "2026-01-02")):
            await log.start(run_id, "t", "q", created)
            log.append(run_id, 1, "metadata", "{}")
            log.append(run_id, 2, "token", '{"text": "Partial "}')
            log.append(run_id, 3, "token", '{"text": "answer"}')
        await log.flush()
        await log.finish("old", "completed", 3, "2026-01-01T12:00:00.000+00:00")
        await log.finish("new", "stopped", 3, "2026-01-03T12:00:00.000+00:00")
        assert await log.unfinished() == []  # its own runs are not for it to interrupt
        async with RunLog.open(database) as next_server:  # after a restart: a new replica on the same database
            unfinished = await next_server.unfinished()
        assert [(r["run_id"], r["answer"], r["last_event_id"]) for r in unfinished] == [("live", "Partial answer", 3)]
        assert await log.prune("2026-01-02T00:00:00.000+00:00") == 1
        assert await log.run("old") is None and await log.events("old") == []
        assert await log.run("new") is not None and await log.run("live") is not None


async def test_an_unfinished_run_carries_its_status_events_as_stored(database):
    said = [
        StatusEvent(node="retriever", phase="start", label="Searching documents…"),
        StatusEvent(node="retriever", phase="end", label="Searching documents", detail="8 passages"),
        StatusEvent(node="generator", phase="start", label="Writing answer…"),
    ]
    async with RunLog.open(database) as log:
        await log.start("cut", "t", "q", "2026-01-01")
        for seq, event in enumerate(said, 1):
            log.append("cut", seq, "status", event.model_dump_json())
        log.append("cut", 4, "token", '{"text": "According"}')
        await log.flush()
        async with RunLog.open(database) as next_server:  # after a restart
            [run] = await next_server.unfinished()
    assert run["statuses"] == [event.model_dump_json() for event in said]
    steps = ["retriever: Searching documents (8 passages)", "generator: Writing answer…"]  # the last one at work
    assert logged_steps(run["statuses"]) == steps
    assert run["answer"] == "According"


async def test_a_status_event_that_does_not_read_is_skipped_not_fatal_to_recovery(database):
    """A row from a newer replica (a phase this one does not know) or a damaged one: the others still give steps,
    and listing the unfinished runs does not fail."""
    async with RunLog.open(database) as log:
        await log.start("cut", "t", "q", "2026-01-01")
        log.append("cut", 1, "status", '{"node": "retriever", "phase": "retry", "label": "x"}')
        log.append("cut", 2, "status", "{not json")
        ended = StatusEvent(node="retriever", phase="end", label="Searching documents", detail="2 passages")
        log.append("cut", 3, "status", ended.model_dump_json())
        await log.flush()
        async with RunLog.open(database) as next_server:
            [run] = await next_server.unfinished()
    assert logged_steps(run["statuses"]) == ["retriever: Searching documents (2 passages)"]


async def test_another_replica_takes_over_only_the_runs_of_a_replica_whose_heartbeat_stopped(database):
    async with RunLog.open(database) as alive, RunLog.open(database) as dying, RunLog.open(database) as other:
        await alive.start("a", "t1", "q", "2026-01-01")
        await dying.start("d", "t2", "q", "2026-01-01")
        assert await other.unfinished(dead_only=True) == []  # both replicas beat
        stale = "2000-01-01T00:00:00.000+00:00"
        await database.write(
            lambda c: c.execute("UPDATE replicas SET seen_at = ? WHERE replica_id = ?", (stale, dying.replica_id))
        )
        dead = await other.unfinished(dead_only=True)
        assert [r["run_id"] for r in dead] == ["d"]
        assert await other.claim(dead[0]) and not await alive.claim(dead[0])  # one replica takes it over, once
        assert (await other.run("d"))["replica"] == other.replica_id


async def test_stop_asked_through_one_replica_reaches_the_replica_running_the_run(database):
    async with RunLog.open(database) as runner, RunLog.open(database) as other:
        await runner.start("r", "t", "q", "2026-01-01")
        assert await runner.stop_requests() == []
        assert await other.request_stop("r")
        assert await runner.stop_requests() == ["r"] and await other.stop_requests() == []
        await runner.finish("r", "stopped", 0, "2026-01-01T00:00:01.000+00:00")
        assert not await other.request_stop("r")  # finished: nothing to stop


async def test_a_run_logged_later_with_an_earlier_clock_waits_for_the_run_already_going(database):
    """The lost-turn race: replica B logs its run and, finding nothing ahead, goes; replica A's run reaches the
    log after that with an earlier stamp (a late insert, or a machine whose clock is behind). Ordered by the stamps,
    A found nothing ahead either and both turns ran at once; ordered by when they were logged, A waits for B."""
    async with RunLog.open(database) as a, RunLog.open(database) as b:
        await b.start("run-b", "t", "from B", "2026-01-01T00:00:00.200+00:00")
        assert await b.ahead_elsewhere("t", "run-b") == 0  # B goes ahead
        await a.start("run-a", "t", "from A", "2026-01-01T00:00:00.100+00:00")
        assert await a.ahead_elsewhere("t", "run-a") == 1  # A waits for B
        await b.finish("run-b", "completed", 0, "2026-01-01T00:00:01.000+00:00")
        assert await a.ahead_elsewhere("t", "run-a") == 0


async def test_runs_logged_at_once_from_two_replicas_get_distinct_turn_numbers(database):
    """Forty runs of one thread logged concurrently from two replicas: each gets its own place in the order (two
    runs numbered alike would each find the other not ahead)."""
    async with RunLog.open(database) as a, RunLog.open(database) as b:
        starts = [(a if i % 2 else b).start(f"r{i:02}", "t", "q", "2026-01-01") for i in range(40)]
        await asyncio.gather(*starts)
        numbers = await database.read(
            lambda c: c.execute("SELECT turn_no FROM runs WHERE thread_id = ? ORDER BY turn_no", ("t",)).fetchall()
        )
        assert [n for (n,) in numbers] == list(range(1, 41))


async def test_a_run_log_file_made_before_replicas_and_turn_numbers_is_upgraded_and_keeps_its_runs(tmp_path):
    old = sqlite3.connect(tmp_path / "runs.sqlite")
    old.execute(
        "CREATE TABLE runs (run_id TEXT PRIMARY KEY, thread_id TEXT NOT NULL, question TEXT NOT NULL, "
        "status TEXT NOT NULL, created_at TEXT NOT NULL, finished_at TEXT, last_event_id INTEGER NOT NULL DEFAULT 0)"
    )
    old.execute("INSERT INTO runs VALUES ('kept', 't', 'q', 'completed', '2026-01-01', '2026-01-01', 3)")
    old.commit()
    old.close()
    async with SqliteDatabase.open(tmp_path / "runs.sqlite") as db, RunLog.open(db) as log:
        await log.start("next", "t", "q2", "2026-01-02")
        assert (await log.run("kept"))["status"] == "completed"
        assert (await log.run("next"))["replica"] == log.replica_id
        assert await db.read(lambda c: c.execute("SELECT turn_no FROM runs WHERE run_id = 'next'").fetchone()) == (1,)


async def test_a_run_of_a_replica_older_than_the_numbering_is_ordered_by_its_start_as_that_replica_orders(database):
    """During a rolling upgrade a replica without turn numbers writes 0 and orders by created_at: so does the new
    one for that run, so the two never each wait for the other."""
    async with RunLog.open(database) as new, RunLog.open(database) as old:
        await new.start("run-new", "t", "q", "2026-01-01T00:00:00.100+00:00")
        await old.start("run-old", "t", "q", "2026-01-01T00:00:00.200+00:00")
        await database.write(lambda c: c.execute("UPDATE runs SET turn_no = 0 WHERE run_id = 'run-old'"))
        assert await new.ahead_elsewhere("t", "run-new") == 0  # the old run started later
        assert await old.ahead_elsewhere("t", "run-old") == 1  # as the old replica's own created_at order says


class StalledWrites:
    """The database with its writes held until `go` is set (a disk slower than the model)."""

    def __init__(self, db) -> None:
        self.db, self.go = db, asyncio.Event()

    async def write(self, job):
        await self.go.wait()
        return await self.db.write(job)

    def __getattr__(self, name: str):
        return getattr(self.db, name)


async def test_a_run_goes_at_most_sent_ahead_events_beyond_the_file(database):
    """What a recovered run's numbering relies on: its dead server sent no event numbered RECOVERED_GAP or more
    above the last one written."""
    assert RECOVERED_GAP > SENT_AHEAD
    async with RunLog.open(database) as log:
        await log.start("r1", "t1", "question?", "2026-01-01T00:00:00.000+00:00")
        stalled = log.db = StalledWrites(database)
        for seq in range(1, SENT_AHEAD):
            log.append("r1", seq, "token", '{"text": "w "}')
        await asyncio.wait_for(log.keep_up("r1"), 5)  # below the bound: at once
        log.append("r1", SENT_AHEAD, "token", '{"text": "w "}')
        waiting = asyncio.create_task(log.keep_up("r1"))
        await asyncio.sleep(BATCH_SECONDS * 6)
        assert not waiting.done()
        stalled.go.set()
        await asyncio.wait_for(waiting, 10)
        log.db = database
        assert len(await log.events("r1")) == SENT_AHEAD
