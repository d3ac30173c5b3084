"""ModelLease.aside: a side request on the turn's slot leaves the slot's KV cache as it found it, put back when
the turn finishes (after `done`), before the slot is saved for the thread."""

import asyncio

from langchain_core.language_models.fake_chat_models import FakeListChatModel

from backend.llm.gate import ModelGate
from backend.llm.lease import ModelLease


class RecordingKV:
    """Stands in for KVCache: records stash and unstash calls."""

    def __init__(self) -> None:
        self.calls: list[tuple[str, int]] = []

    async def restore(self, slot: int, thread_id: str) -> int:
        return 0

    async def stash(self, slot: int) -> bool:
        self.calls.append(("stash", slot))
        return True

    async def unstash(self, slot: int) -> bool:
        self.calls.append(("unstash", slot))
        return True

    async def save(self, slot: int, thread_id: str) -> int:
        self.calls.append(("save", slot))
        return 1


async def test_aside_stashes_the_slot_once_and_finish_puts_it_back_before_saving_it_for_the_thread():
    kv = RecordingKV()
    lease = ModelLease(ModelGate(2), "t", kv, pin=True)  # type: ignore[arg-type]
    slot = await lease.take(lambda ahead: None)
    await lease.aside()
    kv.calls.append(("request", slot))
    await lease.aside()  # the stash still holds the state before the first side request
    kv.calls.append(("request", slot))
    assert kv.calls == [("stash", slot), ("request", slot), ("request", slot)]
    await lease.finish(keep=True)
    assert kv.calls[3:] == [("unstash", slot), ("save", slot)]


async def test_a_turn_not_kept_after_a_side_request_still_gets_its_slot_put_back_and_not_saved():
    kv = RecordingKV()
    lease = ModelLease(ModelGate(2), "t", kv, pin=True)  # type: ignore[arg-type]
    slot = await lease.take(lambda ahead: None)
    await lease.aside()  # then the turn fails or is cancelled: the runner finishes it with keep=False
    await lease.finish(keep=False)
    assert kv.calls == [("stash", slot), ("unstash", slot)]


async def test_aside_does_nothing_without_pinned_slots_or_saved_caches():
    kv = RecordingKV()
    for lease in (ModelLease(ModelGate(2), "t", kv, pin=False), ModelLease(ModelGate(2), "t", None, pin=True)):  # type: ignore[arg-type]
        await lease.take(lambda ahead: None)
        await lease.aside()
    assert kv.calls == []


class SavedKV(RecordingKV):
    """Stands in for KVCache after a restart: the thread has a saved file, and reading it takes a while."""

    def __init__(self) -> None:
        super().__init__()
        self.warm: set[str] = set()

    def has(self, thread_id: str) -> bool:
        return True

    async def restore(self, slot: int, thread_id: str) -> int:
        self.calls.append(("restore starts", slot))
        await asyncio.sleep(0.05)
        self.calls.append(("restored", slot))
        return 700


async def test_prefetch_reads_the_saved_cache_while_the_first_nodes_run_and_the_first_call_gets_that_slot():
    kv, gate = SavedKV(), ModelGate(2)
    lease = ModelLease(gate, "t", kv, pin=True)  # type: ignore[arg-type]
    lease.prefetch()
    await asyncio.sleep(0.01)  # the nodes before the first model call
    kv.calls.append(("first model call", -1))
    slot = await lease.take(lambda ahead: None)
    assert kv.calls == [("restore starts", slot), ("first model call", -1), ("restored", slot)]
    assert lease.restored_tokens == 700 and gate.free == 1
    await lease.finish(keep=True)
    assert gate.free == 2


async def test_prefetch_waits_for_nothing_and_restores_nothing_when_it_should_not():
    kv = SavedKV()
    kv.warm.add("warm")
    busy = ModelGate(1)
    await busy.acquire()  # another turn holds the only slot: this one must queue and say so, as usual
    for lease in (ModelLease(ModelGate(2), "warm", kv, pin=True), ModelLease(busy, "t", kv, pin=True)):  # type: ignore[arg-type]
        lease.prefetch()
        await asyncio.sleep(0.01)
        assert lease.slot is None
    assert kv.calls == []


async def test_a_turn_answered_without_the_model_after_a_prefetch_releases_its_slot_and_saves_nothing():
    kv, gate = SavedKV(), ModelGate(2)
    lease = ModelLease(gate, "t", kv, pin=True)  # type: ignore[arg-type]
    lease.prefetch()
    await lease.finish(keep=True)  # e.g. answered from the FAQ while the file was being read
    assert gate.free == 2 and kv.calls == [("restore starts", 0), ("restored", 0)]


async def test_a_turn_cancelled_twice_while_its_prefetch_reads_still_frees_the_only_slot():
    kv, gate = SavedKV(), ModelGate(1)
    lease = ModelLease(gate, "t", kv, pin=True)  # type: ignore[arg-type]
    lease.prefetch()
    finishing = asyncio.create_task(lease.finish(keep=False))  # the runner's finally, after a first cancel
    await asyncio.sleep(0.01)
    finishing.cancel()  # Stop pressed while the client also left: a second cancel
    await asyncio.gather(finishing, return_exceptions=True)
    assert gate.free == 1 and lease.slot is None
    assert await asyncio.wait_for(gate.acquire(), 1) == 0  # the next turn gets it


async def test_a_turn_cancelled_while_a_node_call_holds_the_lease_still_frees_its_slot():
    gate = ModelGate(1)
    lease = ModelLease(gate, "t", RecordingKV(), pin=True)  # type: ignore[arg-type]
    await lease.take(lambda _: None)
    await lease._lock.acquire()  # a node's model call is between take and its request
    finishing = asyncio.create_task(lease.finish(keep=True))
    await asyncio.sleep(0.01)
    finishing.cancel()  # the runner's finally cancelled while waiting for that lock
    await asyncio.gather(finishing, return_exceptions=True)
    assert gate.free == 1 and lease.slot is None
    assert await asyncio.wait_for(gate.acquire(), 1) == 0  # the next turn gets it


class FilesKV(RecordingKV):
    """RecordingKV that also records which thread's saved files were deleted."""

    def delete(self, thread_id: str) -> None:
        self.calls.append(("delete", thread_id))  # type: ignore[arg-type]


def test_a_turn_started_afresh_drops_the_threads_saved_cache_and_reuses_nothing_cached_in_any_call():
    kv, model = FilesKV(), FakeListChatModel(responses=["ok"])
    lease = ModelLease(ModelGate(2), "t", kv, pin=True)  # type: ignore[arg-type]
    lease.slot = 1
    assert lease.bind(model).kwargs["extra_body"] == {"id_slot": 1, "cache_prompt": True}  # type: ignore[attr-defined]
    lease.start_afresh()
    assert kv.calls == [("delete", "t")]
    for _ in range(2):  # the rewriter's call and the generator's
        assert lease.bind(model).kwargs["extra_body"] == {"id_slot": 1, "cache_prompt": False}  # type: ignore[attr-defined]
