"""Ingestion throughput for bench.retrieval: the real Ingestor vs the bare embedder, block by block, side by side."""

import time
from collections import defaultdict
from collections.abc import Callable
from typing import Any

from backend.rag.embeddings import OfflineMiniLM
from backend.rag.ingestion import EMBED_BATCH, Ingestor
from backend.rag.knowledge import KnowledgeBase
from backend.settings import Settings
from bench.lib import report
from bench.retrieval_data import Collection, Subset, doc_name

BLOCK = 250  # documents ingested, then embedded bare, per side-by-side measurement


class Stopwatch:
    """Seconds spent per label by wrapped callables."""

    def __init__(self) -> None:
        self.seconds: dict[str, float] = defaultdict(float)

    def wrap(self, label: str, fn: Callable[..., Any]) -> Callable[..., Any]:
        """`fn` with its time added to `label`."""

        def timed(*args: Any, **kwargs: Any) -> Any:
            start = time.perf_counter()
            try:
                return fn(*args, **kwargs)
            finally:
                self.seconds[label] += time.perf_counter() - start

        return timed


class TimedCollection:
    """The Chroma collection with add and delete timed; everything else passes through."""

    def __init__(self, collection: Any, watch: Stopwatch) -> None:
        self._collection = collection
        self.add = watch.wrap("chroma add", collection.add)
        self.delete = watch.wrap("chroma delete", collection.delete)

    def __getattr__(self, name: str) -> Any:
        """Everything but add and delete comes from the collection itself."""
        return getattr(self._collection, name)


def embed_in_slices(embed: OfflineMiniLM, texts: list[str]) -> None:
    """The embedder called directly on consecutive slices of 32 texts, as the Ingestor batches them."""
    for i in range(0, len(texts), EMBED_BATCH):
        embed(texts[i : i + EMBED_BATCH])


def ingest_each(ingestor: Ingestor, files: list[tuple[str, bytes]]) -> None:
    """One Ingestor.ingest per file, as scripts/ingest does."""
    for name, data in files:
        ingestor.ingest(name, data)


def seconds(fn: Callable[..., Any], *args: Any) -> float:
    """Wall time of one call."""
    start = time.perf_counter()
    fn(*args)
    return time.perf_counter() - start


def ingest(
    kb: KnowledgeBase, collection: Any, embed: OfflineMiniLM, settings: Settings, coll: Collection, subset: Subset
) -> dict:
    """Ingest block by block through the real Ingestor; each block's texts also go through the bare embedder."""
    watch = Stopwatch()
    ingestor = Ingestor(
        kb.index,
        TimedCollection(collection, watch),
        watch.wrap("embed", embed),
        settings.chunk_target_tokens,
        settings.chunk_overlap_tokens,
    )
    files = [(doc_name(d), coll.docs[d].encode()) for d in subset.docs]
    per_doc = [len(ingestor.prepare(name, data).chunks) for name, data in files]
    embed([coll.docs[d] for d in subset.docs[:EMBED_BATCH]])  # load the ONNX session before any timing
    spent: dict[str, float] = defaultdict(float)
    ratios = []
    for n, first in enumerate(range(0, len(files), BLOCK)):
        block = files[first : first + BLOCK]
        texts = [c.text for name, data in block for c in ingestor.prepare(name, data).chunks]
        steps = [
            ("ingest", ingest_each, ingestor, block),
            ("raw", embed_in_slices, embed, texts),
            ("sorted", embed, texts),
        ]
        took = {label: seconds(fn, *args) for label, fn, *args in steps[n % 3 :] + steps[: n % 3]}  # rotate order
        ratios.append(took["raw"] / took["ingest"])
        for label, t in took.items():
            spent[label] += t
        done = first + len(block)
        report.progress(f"{done:,}/{len(files):,} documents, ingest/raw {ratios[-1]:.2f} (load {report.load()})")
    chunks = kb.index.count_chunks()
    return {
        "documents": len(files),
        "chunks": chunks,
        "multi_chunk_documents": sum(n > 1 for n in per_doc),
        "max_chunks_per_document": max(per_doc),
        "seconds": spent["ingest"],
        "chunks_per_s": chunks / spent["ingest"],
        "raw_embed_chunks_per_s": chunks / spent["raw"],
        "raw_embed_chunks_per_s_length_sorted": chunks / spent["sorted"],
        "ratio_ingest_to_raw": spent["raw"] / spent["ingest"],
        "ratio_per_block": {"blocks": len(ratios), "min": min(ratios), "max": max(ratios)},
        "share_of_ingest_time": {k: v / spent["ingest"] for k, v in sorted(watch.seconds.items())}
        | {"other (parse, chunk, injection scan, SQLite)": 1 - sum(watch.seconds.values()) / spent["ingest"]},
    }
