"""ModelLease: one turn's hold on a model slot, from its first model call to its end.

The first call waits its turn at the gate (telling the client its place), restores the thread's saved KV cache
into the slot after a restart, and pins every call of the turn to that slot (llama.cpp's `id_slot`), so the
rewriter and the generator share the cached prefix. A side request that branches off the prompt (the answerable
check) runs `aside`: the slot is stashed before it and put back when the turn ends, after its `done` went out, so
the next turn still finds the answer cached and the reader does not wait for the file read. When the turn ends the
slot is saved for the thread and released. After a restart, `prefetch` takes a free slot and reads the thread's
saved file as the turn starts, while the nodes before the first model call run. `begin` checks the thread's cache
epoch: a cache computed while the prompt showed a passage its asker has since lost is never reused.
"""

import asyncio

from langchain_core.language_models import BaseChatModel
from langchain_core.runnables import Runnable

from backend.llm.gate import Ahead, ModelGate
from backend.llm.kv_cache import KVCache


class ModelLease:
    """A turn's slot, taken lazily."""

    def __init__(
        self, gate: ModelGate, thread_id: str, kv: KVCache | None = None, pin: bool = False, memory: bool = True
    ) -> None:
        """kv: the server's saved caches. memory: the turn replays the thread's history, so its slot is restored
        and saved for the thread; a turn without memory only checks what the server holds of the thread."""
        self.gate, self.thread_id, self.pin = gate, thread_id, pin
        self.kv, self.held_by = (kv if memory else None), kv
        self.slot: int | None = None
        self.waited = False
        self.restored_tokens = 0
        self.stashed = False  # the slot's state before a side request waits in a scratch file, to be put back
        self._lock = asyncio.Lock()
        self.called = False  # a node asked for the model: only then is the slot worth saving for the thread
        self._restoring: asyncio.Task[None] | None = None  # a restore started by `prefetch`
        self.afresh = False  # this turn's calls compute their whole prompts: nothing cached is reused
        self.epoch = 0  # the thread's cache epoch (KVCache), told by `begin`

    async def take(self, ahead: Ahead) -> int:
        """The turn's slot, waiting for it the first time."""
        async with self._lock:
            self.called = True
            if self.slot is None:
                self.waited = self.gate.waiting > 0 or self.gate.size > 0 and not self.gate.free
                self.slot = await self.gate.acquire(ahead, self.thread_id)
                if self.kv is not None and self.slot >= 0:
                    self.restored_tokens = await self.kv.restore(self.slot, self.thread_id, self.epoch)
            elif self._restoring is not None:
                await asyncio.shield(self._restoring)  # the file read `prefetch` started
            return self.slot

    def prefetch(self) -> None:
        """When the thread's saved KV cache is not in llama.cpp yet (after a restart) and a slot is free with nobody
        waiting, take the slot now and start reading the file, so the restore overlaps the turn's first nodes
        instead of delaying its first model call. Otherwise the first call takes the slot as usual."""
        kv = self.kv
        if kv is None or self.slot is not None or self.thread_id in kv.held or not (saved := kv.saved(self.thread_id)):
            return
        slot = self.gate.try_acquire(self.thread_id)  # taken here and now, or not at all: never queued
        if slot is None or slot < 0:
            return
        self.slot = slot
        self._restoring = asyncio.create_task(self._restore(kv, slot, max(saved)))

    async def _restore(self, kv: KVCache, slot: int, epoch: int) -> None:
        """The thread's saved cache into the slot (KVCache logs and drops a file llama.cpp refuses). The file's
        epoch is checked against the thread's when the turn begins."""
        self.restored_tokens = await kv.restore(slot, self.thread_id, epoch)

    def begin(self, epoch: int, cut: bool = False) -> None:
        """The thread's cache epoch as its turn starts. cut: this turn cut the prompt's window for a lost passage
        (and moved the epoch). What this server holds of the thread from another epoch (another replica made the
        cut, or a prefetched file is older) is not reused either: the turn starts afresh."""
        self.epoch = epoch
        if cut or self.held_by is not None and self.held_by.stale(self.thread_id, epoch):
            self.start_afresh()

    def start_afresh(self) -> None:
        """The turn's prompt no longer holds text its cache was computed with (a passage the asker lost): drop the
        thread's saved cache, and have every call of the turn compute its whole prompt (`cache_prompt` false).
        With it, llama.cpp would move chunks of an old cache into place (`n_cache_reuse`), from the slot or its
        host-memory prompt cache, and their values were computed while that text was in the prompt. The turn's
        slot is then saved clean for the thread, and the next turn reuses that."""
        self.afresh = True
        if self.kv is not None:
            self.kv.drop(self.thread_id)

    def bind(self, model: BaseChatModel | Runnable) -> Runnable:
        """The model with every request pinned to the turn's slot (when the backend has slots), reusing the slot's
        cache unless the turn starts afresh."""
        if not self.pin or self.slot is None or self.slot < 0:
            return model
        return model.bind(extra_body={"id_slot": self.slot, "cache_prompt": not self.afresh})

    async def aside(self) -> None:
        """Before a side request on the slot: stash the slot's KV cache as it is, once per turn, for `finish` to put
        back (no-op without a pinned slot or saved caches)."""
        slot = self.slot
        if not self.stashed and self.pin and self.kv is not None and slot is not None and slot >= 0:
            self.stashed = await self.kv.stash(slot)

    async def finish(self, keep: bool) -> None:
        """Put back what `aside` stashed, save the slot for the thread (when the turn is kept) and release it."""
        slot: int | None = None
        owner: str | None = None  # the thread the released slot holds, for the gate's affinity
        try:
            try:
                async with self._lock:
                    slot, self.slot = self.slot, None
            except asyncio.CancelledError:  # cancelled again while a node's call held the lock: still free the slot
                slot, self.slot = self.slot, None
                raise
            if slot is None:
                return
            # a stopped turn's slot still holds the thread's prompt (llama.cpp keeps what it evaluated): asked again,
            # the question finds it there. Given up, the slot went to the back of the free list and the next turn
            # took the other one, evaluating the whole prompt (tester: 18 s to the first token after Stop)
            owner = self.thread_id
            if self._restoring is not None:  # a turn that ended before its first model call: the read ends first
                await asyncio.gather(asyncio.shield(self._restoring), return_exceptions=True)
            if self.stashed and self.kv is not None and slot >= 0:
                self.stashed = False
                await asyncio.shield(self.kv.unstash(slot))  # drops the scratch file even when the turn is not kept
            if keep and self.called and self.kv is not None and slot >= 0:
                await asyncio.shield(self.kv.save(slot, self.thread_id, self.epoch))
        finally:
            if slot is not None:
                self.gate.release(slot, owner)
