"""ModelLease.aside: a side request on the turn's slot leaves the slot's KV cache as it found it."""

import pytest

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


async def test_aside_stashes_the_slot_before_and_puts_it_back_after_even_when_the_request_fails():
    kv = RecordingKV()
    lease = ModelLease(ModelGate(2), "t", kv, pin=True)  # type: ignore[arg-type]
    slot = await lease.take(lambda ahead: None)
    async with lease.aside():
        kv.calls.append(("request", slot))
    with pytest.raises(RuntimeError):
        async with lease.aside():
            raise RuntimeError("model error")
    assert kv.calls == [("stash", slot), ("request", slot), ("unstash", slot), ("stash", slot), ("unstash", slot)]


async def test_aside_does_nothing_without_pinned_slots_or_saved_caches():
    kv = RecordingKV()
    for lease in (ModelLease(ModelGate(2), "t", kv, pin=False), ModelLease(ModelGate(2), "t", None, pin=True)):  # type: ignore[arg-type]
        await lease.take(lambda ahead: None)
        async with lease.aside():
            pass
    assert kv.calls == []
