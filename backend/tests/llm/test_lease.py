"""ModelLease.aside: a side request on the turn's slot leaves the slot's KV cache as it found it, put back when
the turn finishes (after `done`), before the slot is saved for the thread. ModelLease.begin and KVCache's epochs:
what a server cached of a thread before its window was cut for a lost passage is never reused."""

import asyncio
import json
from pathlib import Path

import httpx
from langchain_core.language_models.fake_chat_models import FakeListChatModel

from backend.llm.gate import ModelGate
from backend.llm.kv_cache import KVCache
from backend.llm.lease import ModelLease


class RecordingKV:
    """Stands in for KVCache: records stash and unstash calls."""

    def __init__(self) -> None:
        self.calls: list[tuple[str, int]] = []

    async def restore(self, slot: int, thread_id: str, epoch: int = 0) -> int:
        return 0

    async def stash(self, slot: int) -> bool:
        self.calls.append(("stash", slot))
        return True

    async def unstash(self, slot: int) -> bool:
        self.calls.append(("unstash", slot))
        return True

    async def save(self, slot: int, thread_id: str, epoch: int = 0) -> int:
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
        self.held: dict[str, int] = {}

    def saved(self, thread_id: str) -> dict[int, str]:
        return {0: "file"}

    async def restore(self, slot: int, thread_id: str, epoch: int = 0) -> int:
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
    kv.held["warm"] = 0
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
    """RecordingKV that also records which thread's cache was dropped (files deleted, not to be reused)."""

    def drop(self, thread_id: str) -> None:
        self.calls.append(("drop", thread_id))  # type: ignore[arg-type]


def test_a_turn_started_afresh_drops_the_threads_saved_cache_and_reuses_nothing_cached_in_any_call():
    kv, model = FilesKV(), FakeListChatModel(responses=["ok"])
    lease = ModelLease(ModelGate(2), "t", kv, pin=True)  # type: ignore[arg-type]
    lease.slot = 1
    assert lease.bind(model).kwargs["extra_body"] == {"id_slot": 1, "cache_prompt": True}  # type: ignore[attr-defined]
    lease.start_afresh()
    assert kv.calls == [("drop", "t")]
    for _ in range(2):  # the rewriter's call and the generator's
        assert lease.bind(model).kwargs["extra_body"] == {"id_slot": 1, "cache_prompt": False}  # type: ignore[attr-defined]


def slot_files(folder: Path) -> httpx.AsyncClient:
    """A client of a stand-in for llama.cpp's slot save and restore routes (`POST /slots/{id}?action=…`): a save
    writes the named file into the folder, a restore reads it back or fails as llama.cpp does on a missing file."""

    def handle(request: httpx.Request) -> httpx.Response:
        path = folder / json.loads(request.content)["filename"]
        if request.url.params["action"] == "save":
            path.write_bytes(b"state")
            return httpx.Response(200, json={"n_saved": 5})
        if not path.exists():
            return httpx.Response(400, json={"error": "failed to restore"})
        return httpx.Response(200, json={"n_restored": 5})

    return httpx.AsyncClient(transport=httpx.MockTransport(handle), base_url="http://llama")


async def test_a_server_holding_the_threads_cache_from_an_earlier_epoch_reuses_none_of_it(tmp_path):
    """Another replica cut the thread's window for a lost passage (the state's cache epoch moved from 0 to 1):
    what this server cached of the thread before, in llama.cpp or in its file, was computed with that passage."""
    model = FakeListChatModel(responses=["ok"])
    async with slot_files(tmp_path) as http:
        kv = KVCache(tmp_path, http, "m", "v1", max_mb=100, thread_mb=10)
        before = ModelLease(ModelGate(1), "t", kv, pin=True)
        before.begin(0)
        await before.take(lambda _: None)
        await before.finish(keep=True)
        assert set(kv.saved("t")) == {0} and kv.held == {"t": 0}

        after = ModelLease(ModelGate(1), "t", kv, pin=True)
        after.begin(1)  # the epoch the other replica's cut turn left in the thread's state
        assert kv.saved("t") == {} and not after.restored_tokens
        slot = await after.take(lambda _: None)
        assert after.bind(model).kwargs["extra_body"] == {"id_slot": slot, "cache_prompt": False}  # type: ignore[attr-defined]
        await after.finish(keep=True)
        assert set(kv.saved("t")) == {1} and kv.saved("t")[1].name.endswith(".m.v1.e1.bin")

        next_turn = ModelLease(ModelGate(1), "t", kv, pin=True)
        next_turn.begin(1)  # same epoch: the clean cache is reused
        await next_turn.take(lambda _: None)
        assert next_turn.bind(model).kwargs["extra_body"]["cache_prompt"] is True  # type: ignore[attr-defined]


async def test_after_a_restart_an_older_epochs_file_is_prefetched_but_not_reused_and_a_current_one_is(tmp_path):
    model = FakeListChatModel(responses=["ok"])
    async with slot_files(tmp_path) as http:
        await KVCache(tmp_path, http, "m", "v1", 100, 10).save(0, "t", 0)  # before the restart, at epoch 0
        for epoch, reused in ((1, False), (1, True)):  # the thread's state says 1; then its clean file is used
            kv = KVCache(tmp_path, http, "m", "v1", 100, 10)  # a restarted server: llama.cpp holds nothing
            lease = ModelLease(ModelGate(1), "t", kv, pin=True)
            lease.prefetch()
            lease.begin(epoch)
            slot = await lease.take(lambda _: None)
            assert lease.bind(model).kwargs["extra_body"] == {"id_slot": slot, "cache_prompt": reused}  # type: ignore[attr-defined]
            await lease.finish(keep=True)
            assert set(kv.saved("t")) == {1}


async def test_a_thread_is_stale_only_where_held_or_saved_at_another_epoch(tmp_path):
    async with slot_files(tmp_path) as http:
        kv = KVCache(tmp_path, http, "m", "v1", 100, 10)
        assert not kv.stale("t", 3)  # never served here, no file: nothing of it can be reused
        await kv.save(0, "t", 3)
        await kv.save(0, "other", 0)
        assert not kv.stale("t", 3) and kv.stale("t", 4)
        assert kv.saved("t")[3].name == kv.filename("t", 3) and kv.filename("t", 0) == f"{kv.thread_key('t')}.m.v1.bin"


async def test_llama_cpp_holding_the_thread_from_an_earlier_epoch_is_stale_though_no_file_is_left(tmp_path):
    """Another replica's llama.cpp served the thread at epoch 0; its file is gone (a shared folder where the cut
    deleted it, or pruned, or over the size cap), but the slot and the host-memory prompt cache still hold it."""
    model = FakeListChatModel(responses=["ok"])
    async with slot_files(tmp_path) as http:
        kv = KVCache(tmp_path, http, "m", "v1", 100, 10)
        await kv.save(0, "t", 0)
        kv.saved("t")[0].unlink()
        lease = ModelLease(ModelGate(1), "t", kv, pin=True)
        lease.begin(1)
        await lease.take(lambda _: None)
        assert lease.bind(model).kwargs["extra_body"]["cache_prompt"] is False  # type: ignore[attr-defined]


async def test_a_cut_turn_that_never_called_the_model_leaves_the_next_turn_to_start_afresh(tmp_path):
    """The cut turn was answered from the FAQ, or blocked: it saved nothing, and llama.cpp still holds the thread's
    cache from before the cut."""
    model = FakeListChatModel(responses=["ok"])
    async with slot_files(tmp_path) as http:
        kv = KVCache(tmp_path, http, "m", "v1", 100, 10)
        before = ModelLease(ModelGate(1), "t", kv, pin=True)
        before.begin(0)
        await before.take(lambda _: None)
        await before.finish(keep=True)
        cut = ModelLease(ModelGate(1), "t", kv, pin=True)
        cut.begin(1, cut=True)
        await cut.finish(keep=True)
        for reused in (False, True):  # the turn after the cut starts afresh and saves a clean cache: then reused
            lease = ModelLease(ModelGate(1), "t", kv, pin=True)
            lease.begin(1)
            await lease.take(lambda _: None)
            assert lease.bind(model).kwargs["extra_body"]["cache_prompt"] is reused  # type: ignore[attr-defined]
            await lease.finish(keep=True)


async def test_a_turn_without_memory_on_a_server_holding_the_thread_from_an_earlier_epoch_reuses_none_of_it(tmp_path):
    """Its prompt replays no history, but its slot (kept for the thread) holds the earlier cache, whose chunks
    llama.cpp could move into place. It saves nothing for the thread, so the next turn with memory starts afresh too."""
    model = FakeListChatModel(responses=["ok"])
    async with slot_files(tmp_path) as http:
        kv = KVCache(tmp_path, http, "m", "v1", 100, 10)
        await kv.save(0, "t", 0)
        for memory in (False, True):
            lease = ModelLease(ModelGate(1), "t", kv, pin=True, memory=memory)
            lease.begin(1)
            await lease.take(lambda _: None)
            assert lease.bind(model).kwargs["extra_body"]["cache_prompt"] is False  # type: ignore[attr-defined]
            await lease.finish(keep=True)
        assert set(kv.saved("t")) == {1}


async def test_a_stopped_turns_thread_gets_the_same_slot_back_for_its_next_turn():
    """Tester: the first answer after Stop took 18 s to its first token. The stopped turn gave up its slot's
    affinity, so the thread's next turn took the other slot and evaluated its whole prompt again."""
    gate = ModelGate(2)
    stopped = ModelLease(gate, "t", RecordingKV(), pin=True)  # type: ignore[arg-type]
    slot = await stopped.take(lambda ahead: None)
    await stopped.finish(keep=False)  # the runner's finally for a stopped turn
    again = ModelLease(gate, "t", RecordingKV(), pin=True)  # type: ignore[arg-type]
    assert await again.take(lambda ahead: None) == slot
