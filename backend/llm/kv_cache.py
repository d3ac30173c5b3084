"""A thread's KV cache on disk, through llama.cpp's own slot save and restore (`/slots/{id}?action=save|restore`).

After a turn its slot is saved as one file per thread; before the first turn of a thread since this process
started (after a restart), the file is restored into the slot, so the follow-up costs a file read, not a prefill.
Switching threads in a running server is served by llama.cpp's host-memory prompt cache (`cache_ram_mib`).
Files are keyed on the thread, the model file and the prompt layout, so a cache made by another model or layout
is never restored; the total is capped (least recently used first) and a thread's file goes with the thread.

A thread's cache epoch (`cache_epoch` in its state) moves on when a turn stops showing the model a passage its
asker lost. What this server holds of the thread from another epoch, in llama.cpp or in a file, was computed with
that passage in the prompt: `stale` says so, and the turn then reuses none of it (ModelLease.begin). The file of
epoch n > 0 carries ".e<n>" in its name (epoch 0 keeps the name files had before epochs).
"""

import contextlib
import hashlib
import logging
import os
from pathlib import Path

import httpx

log = logging.getLogger(__name__)
NO_EPOCH = -1  # what llama.cpp holds of a thread once its cache may no longer be reused: stale at every epoch


class KVCache:
    """Saved slot files under one folder (llama.cpp's `slot_save_path`)."""

    def __init__(
        self,
        folder: Path,
        http: httpx.AsyncClient,
        model_tag: str,
        layout: str,
        max_mb: float,
        thread_mb: float,
    ):
        """http: a client of the llama.cpp server, open as long as the server (one client for every call: a client
        made per call cost about 35 ms of each save or restore, measured side by side)."""
        self.folder, self.http = folder, http
        self.model_tag, self.layout = model_tag, layout
        self.max_bytes, self.thread_bytes = int(max_mb * 1e6), int(thread_mb * 1e6)
        self.held: dict[str, int] = {}  # threads served since start (llama.cpp's RAM cache has them): their epoch
        folder.mkdir(parents=True, exist_ok=True)

    @staticmethod
    def thread_key(thread_id: str) -> str:
        """The file-name stem of a thread (a hash: thread ids never reach the file system)."""
        return hashlib.sha256(thread_id.encode()).hexdigest()[:32]

    def filename(self, thread_id: str, epoch: int = 0) -> str:
        """The thread's file for this model, prompt layout and cache epoch."""
        return f"{self.thread_key(thread_id)}.{self.model_tag}.{self.layout}{f'.e{epoch}' if epoch else ''}.bin"

    def saved(self, thread_id: str) -> dict[int, Path]:
        """The thread's files for this model and prompt layout, by epoch."""
        stem = f"{self.thread_key(thread_id)}.{self.model_tag}.{self.layout}"
        found = {0: self.folder / f"{stem}.bin"} if (self.folder / f"{stem}.bin").exists() else {}
        for path in self.folder.glob(f"{stem}.e*.bin"):
            if (epoch := path.name[len(stem) + 2 : -4]).isdigit():
                found[int(epoch)] = path
        return found

    def stale(self, thread_id: str, epoch: int) -> bool:
        """Whether this server holds a state of the thread from another cache epoch: in llama.cpp (served since
        start), or else in a file (the only one a turn may restore)."""
        if thread_id in self.held:
            return self.held[thread_id] != epoch
        return any(e != epoch for e in self.saved(thread_id))

    async def restore(self, slot: int, thread_id: str, epoch: int = 0) -> int:
        """Load the thread's saved state into the slot if it was not served since start; tokens restored (0: none)."""
        if thread_id in self.held:
            return 0
        self.held[thread_id] = epoch
        return await self.load(slot, thread_id, epoch)

    def has(self, thread_id: str, epoch: int = 0) -> bool:
        """Whether a state is saved under this name for this model, layout and epoch."""
        return (self.folder / self.filename(thread_id, epoch)).exists()

    async def load(self, slot: int, thread_id: str, epoch: int = 0) -> int:
        """Load the saved state into the slot; tokens restored (0: no file, or llama.cpp refused it)."""
        if not self.has(thread_id, epoch):
            return 0
        reply = await self._slot_call(slot, "restore", thread_id, epoch)
        if reply is None:
            return 0
        with contextlib.suppress(FileNotFoundError):  # deleted while llama.cpp read it: `touch` would recreate it
            os.utime(self.folder / self.filename(thread_id, epoch))  # recently used
        return int(reply.get("n_restored", 0))

    async def save(self, slot: int, thread_id: str, epoch: int = 0) -> int:
        """Save the slot as the thread's file; bytes written (files over the per-thread cap are not kept)."""
        self.held[thread_id] = epoch  # what llama.cpp holds of the thread now, whatever becomes of the file
        reply = await self._slot_call(slot, "save", thread_id, epoch)
        path = self.folder / self.filename(thread_id, epoch)
        if reply is None or not path.exists():
            return 0
        size = path.stat().st_size
        if size > self.thread_bytes:
            log.info("KV cache of a thread is %.0f MB, over RAG_KV_CACHE_THREAD_MB: not kept", size / 1e6)
            path.unlink(missing_ok=True)
            return 0
        self.prune()
        return size

    async def stash(self, slot: int) -> bool:
        """Save the slot as it is to a scratch file, to be put back by `unstash` after a side request."""
        return await self._call(slot, "save", self.stash_name(slot)) is not None

    async def unstash(self, slot: int) -> bool:
        """Put back what `stash` saved into the slot and drop the scratch file."""
        try:
            return await self._call(slot, "restore", self.stash_name(slot)) is not None
        finally:
            (self.folder / self.stash_name(slot)).unlink(missing_ok=True)

    def stash_name(self, slot: int) -> str:
        """The scratch file of a slot (not a thread's: `prune` and `used_bytes` count only .bin files)."""
        return f"slot{slot}.{self.model_tag}.{self.layout}.stash"

    def drop(self, thread_id: str) -> None:
        """The thread's cache may no longer be reused (its prompt lost a passage): remove its files, and mark what
        llama.cpp holds of it as of no epoch, so the next turn here reuses none of it even if this one never calls
        the model."""
        self.delete(thread_id)
        self.held[thread_id] = NO_EPOCH

    def delete(self, thread_id: str) -> None:
        """Remove every saved file of a thread (any model, layout or epoch), and forget that llama.cpp holds it."""
        for path in self.folder.glob(f"{self.thread_key(thread_id)}.*.bin"):
            path.unlink(missing_ok=True)
        self.held.pop(thread_id, None)

    def prune(self) -> None:
        """Drop least recently used files until the folder is under its cap."""
        files = sorted(self.folder.glob("*.bin"), key=lambda p: p.stat().st_mtime)
        total = sum(p.stat().st_size for p in files)
        while files and total > self.max_bytes:
            oldest = files.pop(0)
            total -= oldest.stat().st_size
            oldest.unlink(missing_ok=True)

    def used_bytes(self) -> int:
        """Bytes on disk."""
        return sum(p.stat().st_size for p in self.folder.glob("*.bin"))

    async def _slot_call(self, slot: int, action: str, thread_id: str, epoch: int) -> dict | None:
        """POST /slots/{slot}?action=… with the thread's file; a restore that llama.cpp refuses (a corrupt file)
        deletes the file."""
        reply = await self._call(slot, action, self.filename(thread_id, epoch))
        if reply is None and action == "restore":
            (self.folder / self.filename(thread_id, epoch)).unlink(missing_ok=True)
        return reply

    async def _call(self, slot: int, action: str, filename: str) -> dict | None:
        """POST /slots/{slot}?action=…; None (and a log line) when llama.cpp refuses or cannot be reached."""
        try:
            response = await self.http.post(f"/slots/{slot}", params={"action": action}, json={"filename": filename})
        except httpx.HTTPError as exc:
            log.warning("KV cache %s for slot %d failed: %s", action, slot, exc)
            return None
        if response.status_code != 200:
            log.warning("KV cache %s ignored (%s): %s", action, response.status_code, response.text[:200])
            return None
        return response.json()
