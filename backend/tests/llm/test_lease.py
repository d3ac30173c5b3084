"""ModelLease.aside: a side request on the turn's slot leaves the slot's KV cache as it found it, put back when
the turn finishes (after `done`), before the slot is saved for the thread."""

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
