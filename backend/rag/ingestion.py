"""Ingestor: validate, parse, chunk, embed and index one document; incremental and atomic per document."""

import hashlib
import logging
import re
import threading
import unicodedata
import uuid
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any, Literal, NamedTuple

from backend.contract.text import INVISIBLE
from backend.guardrails.injection import score_injection
from backend.rag.chunking import Chunk, chunk_sections, full_text, page_spans
from backend.rag.files import DocumentFiles
from backend.rag.index import DocumentRecord, KnowledgeIndex
from backend.rag.leases import IngestLeases
from backend.rag.limits import UploadLimits
from backend.rag.loaders import SUPPORTED_TYPES, DocumentError, LoadedDocument, document_type, load_document
from backend.rag.store import VectorStore

log = logging.getLogger(__name__)

EMBED_BATCH = 32
REGISTER_ATTEMPTS = 3  # reads of the name when other uploads of it register first
# characters that change the order text is shown in (Unicode's bidirectional embeddings, overrides and isolates)
BIDI_CONTROLS = frozenset("\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069")
BLANK = re.compile(rf"[\s{INVISIBLE}]+")  # a stem of these shows no name: "\u200b.md" listed as ".md"
HOSTILE_CACHE = 8192  # verdicts remembered: every turn rescans the passages it retrieves (2-8 ms uncached)
Progress = Callable[[int, int], None]  # (chunks embedded, total chunks)


@lru_cache(maxsize=HOSTILE_CACHE)
def hostile(text: str) -> bool:
    """True when a chunk reads like instructions aimed at the model (indirect prompt injection).

    Remembered by text: every turn scans the passages it retrieves, so a passage retrieved before costs a
    dictionary lookup (a passage of one chunk is found from ingestion's scan; one of several joined chunks is a
    new text the first time). The verdict depends on the text alone: documents are scanned by the rules only.
    """
    return score_injection(text, "document").flagged


def validate_name(name: str) -> str:
    """The bare file name in Unicode's composed form (NFC), or DocumentError when it has path parts, `..`, control
    characters, line or paragraph separators (U+2028, U+2029: the name shown on two lines), characters that reorder
    the text shown, or no name (nothing visible before its extension).

    NFC: macOS sends "Résumé.md" with the accent as a character of its own (NFD), Windows composed; both are one
    document, and an @mention typed either way finds it. Reordering characters would let "report\u202egnp.md" show
    as "reportdm.png"."""
    name = unicodedata.normalize("NFC", name or "")
    if not name.strip():
        raise DocumentError(422, "the file has no name; give it a name with an extension such as notes.md")
    if "/" in name or "\\" in name or ".." in name or any(ord(ch) < 32 for ch in name) or len(name) > 255:
        raise DocumentError(422, f"file name {name!r} is not allowed: use a plain name without '/', '\\' or '..'")
    if odd := [ch for ch in name if unicodedata.category(ch) in ("Cc", "Zl", "Zp") or ch in BIDI_CONTROLS]:
        raise DocumentError(
            422, f"file name {name!r} is not allowed: it holds invisible control characters or line breaks {odd!r}"
        )
    if BLANK.fullmatch(name.strip().rsplit(".", 1)[0]):
        raise DocumentError(
            422, f"file name {name!r} shows no name before its extension; give it one, such as notes.md"
        )
    return name.strip()


@dataclass(frozen=True)
class Prepared:
    """A parsed and chunked document ready to be embedded."""

    name: str
    data_sha256: str
    size: int
    loaded: LoadedDocument
    chunks: list[Chunk]
    data: bytes = b""  # the uploaded file, kept so a citation can open the original (a PDF page)


@dataclass(frozen=True)
class IngestResult:
    """What ingesting one file did."""

    record: DocumentRecord
    outcome: Literal["added", "updated", "unchanged"]


class Registered(NamedTuple):
    """A document queued for ingestion, and whether its name was new to the collection."""

    record: DocumentRecord
    outcome: Literal["new", "replaced"]  # of UploadOutcome


class Ingestor:
    """Writes documents into the index and the vector store; one document at a time."""

    def __init__(
        self,
        index: KnowledgeIndex,
        collection: VectorStore,
        embed: Any,
        target_tokens: int,
        overlap_tokens: int,
        limits: UploadLimits | None = None,
        files: DocumentFiles | None = None,
        leases: IngestLeases | None = None,
    ) -> None:
        self.index = index
        self.files = files  # where originals are kept (None: not kept)
        self.leases = leases  # which process ingests which document (None: this one, always)
        self.limits = limits or UploadLimits()
        self._collection = collection
        self._embed = embed
        self._target, self._overlap = target_tokens, overlap_tokens
        self._lock = threading.Lock()  # one document written at a time
        # a version switched in against a deletion: a delete waits for a switch, not for the embedding before it
        self._switch = threading.Lock()
        # versions registered and not committed yet, by document id: the document's lease is held (and it is not
        # "ready" nor "unchanged") until the last of them is committed
        self._queued: Counter[str] = Counter()
        self._queued_lock = threading.Lock()

    def prepare(self, name: str, data: bytes) -> Prepared:
        """Check and parse a file without touching the stores; raises DocumentError with a 4xx status."""
        name = validate_name(name)
        document_type(name)
        loaded = load_document(name, data, self.limits)
        chunks = chunk_sections(loaded.sections, self._target, self._overlap)
        if not chunks:
            raise DocumentError(422, f"{name} contains no text to index")
        return Prepared(name, hashlib.sha256(data).hexdigest(), len(data), loaded, chunks, data)

    def unchanged(self, prepared: Prepared, collection: str = "") -> DocumentRecord | None:
        """The stored record when this exact file is already indexed in the collection."""
        record = self.index.by_name(prepared.name, collection)
        if record and record.status == "ready" and record.sha256 == prepared.data_sha256:
            with self._queued_lock:
                if not self._queued[record.id]:  # a newer version queued would replace it: this file is news again
                    return record
        return None

    def register(self, prepared: Prepared, collection: str = "") -> Registered:
        """Create or re-queue the document's row in the collection and say which (id is stable across versions).

        Two uploads of one name at once: the first to write creates the document ("new"); the other reads the name
        again and queues a new version of it ("replaced")."""
        for _ in range(REGISTER_ATTEMPTS):
            existing = self.index.by_name(prepared.name, collection)
            doc_id = existing.id if existing else uuid.uuid4().hex[:16]
            name = existing.name if existing else prepared.name
            if not self._hold(doc_id):
                raise DocumentError(409, f"{name} is being ingested by another server; try again once it is ready")
            try:
                outcome = self.index.upsert_pending(doc_id, name, prepared.loaded.type, prepared.size, collection)
                record = self.index.document(doc_id) if outcome is not None else None
            except BaseException:
                self._let_go(doc_id)
                raise
            if outcome is not None and record is not None:
                return Registered(record, outcome)
            self._let_go(doc_id)
        raise DocumentError(409, f"{name}: its collection was removed or the document moved meanwhile; try again")

    def _hold(self, doc_id: str) -> bool:
        """Count one more queued version of the document, taking its lease for the first; False when another
        process holds the lease."""
        with self._queued_lock:
            if not self._queued[doc_id] and self.leases and not self.leases.take(doc_id):
                return False
            self._queued[doc_id] += 1
            return True

    def _let_go(self, doc_id: str) -> None:
        """One queued version of the document fewer; with the last one the lease is released, and a status left
        "queued" by a version committed while a later one was registering, which then failed, is settled."""
        with self._queued_lock:
            self._queued[doc_id] -= 1
            if self._queued[doc_id] > 0:
                return
            try:
                self.index.settle_queued(doc_id)
                if self.leases:
                    self.leases.release(doc_id)
            finally:
                del self._queued[doc_id]

    def _queued_after(self, doc_id: str) -> bool:
        """Whether another version of the document is queued behind the one being committed."""
        with self._queued_lock:
            return self._queued[doc_id] > 1

    def commit(self, record: DocumentRecord, prepared: Prepared, progress: Progress | None = None) -> IngestResult:
        """Embed the chunks under a new version, switch the document to it atomically, drop the old vectors."""
        try:
            return self._commit(record, prepared, progress)
        finally:
            self._let_go(record.id)

    def _commit(self, queued: DocumentRecord, prepared: Prepared, progress: Progress | None) -> IngestResult:
        with self._lock:
            # read again: a version committed since this one was registered (two uploads of one name, the second
            # queued behind the first) is the one this replaces, else both would write the same version's vectors
            record = self.index.document(queued.id)
            if record is None:  # deleted while queued: nothing to write
                raise DocumentError(409, f"{queued.name} was deleted before it was ingested")
            version = record.version + 1
            ids = [f"{record.id}:{version}:{c.index}" for c in prepared.chunks]
            self.index.set_status(record.id, "processing", 0.0)
            # vectors an interrupted ingestion left under this version's ids: the store keeps a known id's vector
            self._collection.delete(where={"$and": [{"document_id": record.id}, {"version": version}]})
            try:
                self._add_vectors(record, version, prepared.chunks, ids, progress)
                flagged = sum(hostile(c.text) for c in prepared.chunks)
                with self._switch:
                    self._keep_file(record.id, prepared.data)
                    self.index.activate(
                        record.id,
                        version,
                        prepared.chunks,
                        type_=prepared.loaded.type,
                        size=prepared.size,
                        pages=prepared.loaded.pages,
                        flagged=flagged,
                        sha256=prepared.data_sha256,
                        text=full_text(prepared.loaded.sections),
                        page_spans=page_spans(prepared.loaded.sections) or None,
                        queued=self._queued_after(record.id),
                    )
            except Exception as exc:
                self._collection.delete(ids=ids)
                if self.index.document(record.id) is None:  # deleted meanwhile (or with its collection)
                    if self.files:
                        self.files.delete(record.id)
                    log.info("%s was deleted while it was ingested; nothing of it is kept", prepared.name)
                    raise
                self.index.set_status(
                    record.id, "ready" if record.version else "failed", 1.0, f"ingestion failed: {exc}"
                )
                log.exception("ingesting %s failed; its previous state is kept", prepared.name)
                raise
            self._collection.delete(where={"$and": [{"document_id": record.id}, {"version": {"$ne": version}}]})
        if (done := self.index.document(record.id)) is None:  # deleted as soon as it was in
            raise DocumentError(409, f"{record.name} was deleted once it was ingested")
        return IngestResult(done, "updated" if record.version else "added")

    def ingest(self, name: str, data: bytes, progress: Progress | None = None, collection: str = "") -> IngestResult:
        """Prepare, skip when unchanged, else register and commit: the whole pipeline for one file."""
        prepared = self.prepare(name, data)
        if same := self.unchanged(prepared, collection):
            return IngestResult(same, "unchanged")
        return self.commit(self.register(prepared, collection).record, prepared, progress)

    def wait_idle(self, timeout: float) -> bool:
        """Block until no document is being written (at most `timeout` seconds); True when idle."""
        if self._lock.acquire(timeout=timeout):
            self._lock.release()
            return True
        return False

    def delete(self, doc_id: str) -> bool:
        """Remove a document from the registry, the BM25 index and the vector store, at once: an ingestion of it
        stops at its next batch and writes nothing back."""
        with self._switch:
            existed = self.index.delete(doc_id)
            self._collection.delete(where={"document_id": doc_id})
            if self.files:
                self.files.delete(doc_id)
        return existed

    def _keep_file(self, doc_id: str, data: bytes) -> None:
        """Keep the original (replacing the previous version's)."""
        if self.files and data:
            self.files.put(doc_id, data)

    def _add_vectors(
        self, record: DocumentRecord, version: int, chunks: list[Chunk], ids: list[str], progress: Progress | None
    ) -> None:
        for start in range(0, len(chunks), EMBED_BATCH):
            batch = chunks[start : start + EMBED_BATCH]
            vectors = self._embed([c.text for c in batch])
            self._collection.add(
                ids=ids[start : start + EMBED_BATCH],
                embeddings=vectors,
                documents=[c.text for c in batch],
                metadatas=[_metadata(record, version, c) for c in batch],
            )
            done = start + len(batch)
            if not self.index.set_status(record.id, "processing", done / len(chunks)):
                raise DocumentError(409, f"{record.name} was deleted while it was ingested")
            if progress:
                progress(done, len(chunks))


def _metadata(record: DocumentRecord, version: int, chunk: Chunk) -> dict[str, Any]:
    meta: dict[str, Any] = {
        "document_id": record.id,
        "document": record.name,
        "version": version,
        "chunk": chunk.index,
        "start": chunk.start,
        "end": chunk.end,
        "hash": chunk.hash,
    }
    if chunk.page is not None:
        meta["page"] = chunk.page
    if chunk.section:
        meta["section"] = chunk.section
    return meta


def iter_files(paths: list[Path]) -> list[Path]:
    """Supported files among the given files and (recursively) folders, in a stable order."""
    found: list[Path] = []
    for path in paths:
        candidates = [path] if path.is_file() else sorted(p for p in path.rglob("*") if p.is_file())
        found += [p for p in candidates if p.suffix.lower() in SUPPORTED_TYPES]
    return found
