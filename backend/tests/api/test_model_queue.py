"""The fair queue for the model: order, position updates, leaving it on disconnect, and no summary while waiting."""

import asyncio

import httpx
from asgi_lifespan import LifespanManager

from backend.llm.fake import ScriptedChatModel
from backend.llm.gate import ModelGate
from backend.main import create_app
from backend.tests.conftest import fake_settings
from bench.lib.sse import parse_sse

POEM = "Write a poem about the sea"  # goes to the model in chat mode


async def until(condition, seconds: float = 10.0) -> None:
    """Wait for the condition (polled every 5 ms); fail after `seconds`."""
    for _ in range(int(seconds / 0.005)):
        if condition():
            return
        await asyncio.sleep(0.005)
    raise AssertionError("the condition never held")


def waits(events) -> list[str]:
    return [d["label"] for n, d in events if n == "status" and d["label"].startswith("Waiting for the model")]


async def test_turns_on_different_threads_wait_in_order_and_hear_their_place(tmp_path):
    app = create_app(fake_settings(tmp_path / "data", model_concurrency=1))
    async with (
        LifespanManager(app),
        httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://t", timeout=60) as client,
    ):
        app.state.services.deps.chat_model = ScriptedChatModel(tokens_per_second=100)
        finished: list[str] = []

        gate = app.state.services.models.gate

        async def ask(i: int) -> list:
            body = {"message": POEM, "thread_id": f"q{i}", "mode": "chat"}
            events = parse_sse(await client.post("/api/chat/stream", json=body))
            finished.append(f"q{i}")
            return events

        # they arrive at the model in order 0, 1, 2: each is sent once the one before holds the model or waits for
        # it (sent 50 ms apart, q2 once overtook q1 in the steps before the model, on Postgres)
        asks = [asyncio.create_task(ask(0))]
        await until(lambda: gate.free == 0)
        asks.append(asyncio.create_task(ask(1)))
        await until(lambda: gate.waiting == 1)
        asks.append(asyncio.create_task(ask(2)))
        results = await asyncio.gather(*asks)
    assert finished == ["q0", "q1", "q2"]  # one at a time, first come first served
    assert waits(results[0]) == []
    assert waits(results[1]) == ["Waiting for the model: 1 ahead"]
    assert waits(results[2])[0] == "Waiting for the model: 2 ahead" and waits(results[2])[-1].endswith("1 ahead")
    assert all(r[-1][0] == "done" for r in results)


async def test_a_client_that_leaves_while_waiting_leaves_the_queue_at_once():
    gate = ModelGate(1)
    held = await gate.acquire()
    heard: list[int] = []
    leaver = asyncio.create_task(gate.acquire(heard.append))
    stayer = asyncio.create_task(gate.acquire(heard.append))
    await asyncio.sleep(0.01)
    assert gate.waiting == 2 and heard == [1, 2]
    leaver.cancel()
    await asyncio.gather(leaver, return_exceptions=True)
    await asyncio.sleep(0.01)
    assert gate.waiting == 1 and heard == [1, 2, 1]  # the one behind moved up and heard it
    gate.release(held)
    assert await asyncio.wait_for(stayer, 1) == held and gate.waiting == 0


async def test_background_work_runs_only_when_nobody_waits_and_is_preempted_by_a_turn():
    gate = ModelGate(1)
    started, stopped = asyncio.Event(), asyncio.Event()

    async def summary() -> None:
        async with gate.background() as slot:
            assert slot == 0
            started.set()
            try:
                await asyncio.sleep(10)
            finally:
                stopped.set()

    background = asyncio.create_task(summary())
    await started.wait()
    turn = asyncio.create_task(gate.acquire())
    assert await asyncio.wait_for(turn, 1) == 0  # the waiting turn got the slot…
    assert stopped.is_set() and background.cancelled()  # …because the summary was stopped
    async with gate.background() as slot:
        assert slot is None  # the turn holds the only slot: no background work now


async def test_a_thread_gets_back_the_slot_holding_its_cache_when_it_is_free():
    gate = ModelGate(2)
    a = await gate.acquire(thread="A")
    b = await gate.acquire(thread="B")
    gate.release(a, "A")
    gate.release(b, "B")
    # B released last, so without affinity A would get the slot released longest ago, which is A's; try both ways.
    assert await gate.acquire(thread="B") == b
    assert await gate.acquire(thread="A") == a
    gate.release(a, "A")
    gate.release(b, "B")
    # A newcomer takes the slot released longest ago; a thread whose slot was taken gets the other one.
    newcomer = await gate.acquire(thread="C")
    assert newcomer == a
    assert await gate.acquire(thread="A") == b


async def test_a_turn_stops_background_work_even_with_a_slot_free_and_none_starts_while_it_runs():
    gate = ModelGate(2)
    started = asyncio.Event()

    async def summary() -> None:
        async with gate.background() as slot:
            assert slot is not None
            started.set()
            await asyncio.sleep(10)

    background = asyncio.create_task(summary())
    await started.wait()
    slot = await gate.acquire(thread="T")  # a slot is free: no wait, but the CPU is shared
    await asyncio.gather(background, return_exceptions=True)
    assert background.cancelled()
    async with gate.background() as other:
        assert other is None  # a turn is running
    gate.release(slot, "T")
    async with gate.background() as other:
        assert other is not None  # nobody runs or waits
