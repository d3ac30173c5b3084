"""Vocabulary: what the respelling's vocabulary costs the first question after one document changes.

The speller (rag/spelling.py) respells a question's misspelt words against the documents' words. It counted every
active document's words again after any change of the documents; it now counts the changed document only. Side by
side in one run, per corpus size, on a real SQLite knowledge index filled with synthetic documents (100 KB each,
words drawn from a Zipf-like vocabulary of 20,000 made-up words):
- "every document": a speller that has counted nothing, as every speller was after a change before (it reads and
  counts every document's chunks);
- "one changed": a speller that has counted the corpus, after one document gets a new version;
- "unchanged": the same speller asked again with nothing changed.
Each figure is the time of `Speller.fixes` on a misspelt question through the index, p50 of `--repeats`.
"""

import argparse
import hashlib
import random
import sys
import tempfile
import time
from pathlib import Path

from backend.rag.chunking import Chunk
from backend.rag.index import KnowledgeIndex
from backend.rag.spelling import Speller
from backend.store.sqlite import SqliteDatabase
from bench.lib import report
from bench.lib.stats import median, ratio
from bench.scale import vocabulary

DOCUMENT_KB = 100
CHUNK_CHARS = 1_000
QUESTION = "how many dayz of anual leeve do i get"
ENGLISH = frozenset({"how", "many", "get", "annual", "leave", "days"})


def document(words: list[str], weights: list[float], rng: random.Random) -> list[Chunk]:
    """One synthetic document of about DOCUMENT_KB kilobytes, in chunks of about CHUNK_CHARS characters."""
    chunks, at = [], 0
    while at < DOCUMENT_KB * 1_000:
        text = " ".join(rng.choices(words, weights, k=CHUNK_CHARS // 7)) + "."
        chunks.append(Chunk(len(chunks), text, None, None, at, at + len(text), hashlib.sha1(text.encode()).hexdigest()))
        at += len(text) + 1
    return chunks


def put(index: KnowledgeIndex, doc_id: str, version: int, chunks: list[Chunk]) -> None:
    if version == 1:
        index.upsert_pending(doc_id, f"{doc_id}.md", "md", 0)
    size = chunks[-1].end
    index.activate(doc_id, version, chunks, type_="md", size=size, pages=None, sha256=f"{doc_id}:{version}")


def fixes_s(speller: Speller, index: KnowledgeIndex) -> float:
    started = time.perf_counter()
    speller.fixes(QUESTION, index.active_versions(), index.active_texts)
    return time.perf_counter() - started


def at_size(megabytes: int, work: Path, repeats: int) -> dict:
    """Fill an index with `megabytes` of documents and time the three cases."""
    rng = random.Random(megabytes)
    words = vocabulary(20_000, rng) + ["annual", "leave", "days"]
    weights = [1 / (rank + 1) for rank in range(len(words))]
    db = SqliteDatabase(work / f"knowledge-{megabytes}.sqlite")
    try:
        index = KnowledgeIndex(db)
        count = megabytes * 1_000 // DOCUMENT_KB
        for d in range(count):
            put(index, f"doc{d:05d}", 1, document(words, weights, rng))
        report.progress(f"{megabytes} MB in {count} documents written")
        every = [fixes_s(Speller(ENGLISH), index) for _ in range(repeats)]
        speller = Speller(ENGLISH)
        fixes_s(speller, index)
        changed, unchanged = [], []
        for k in range(repeats):
            put(index, "doc00000", k + 2, document(words, weights, rng))
            changed.append(fixes_s(speller, index))
            unchanged.append(fixes_s(speller, index))
    finally:
        db.close()
    return {
        "megabytes": megabytes,
        "documents": count,
        "every_document_s": median(every),
        "one_changed_s": median(changed),
        "unchanged_s": median(unchanged),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="bench.vocabulary", description=__doc__.splitlines()[0])
    parser.add_argument("--megabytes", type=int, action="append", help="corpus sizes (repeatable; default 5 and 20)")
    parser.add_argument("--repeats", type=int, default=5)
    report.add_output_args(parser, "vocabulary")
    args = parser.parse_args(argv)
    sizes = args.megabytes or [5, 20]
    with tempfile.TemporaryDirectory() as tmp:
        rows = [at_size(mb, Path(tmp), args.repeats) for mb in sizes]
    table = report.table(
        f"the first respelt question after one document changes (p50 of {args.repeats}; load {report.load()})",
        ["corpus", "documents", "every document", "one changed", "unchanged", "every / one changed"],
        [
            [
                f"{r['megabytes']} MB",
                r["documents"],
                report.ms(r["every_document_s"]),
                report.ms(r["one_changed_s"]),
                report.ms(r["unchanged_s"]),
                report.times(ratio(r["every_document_s"], r["one_changed_s"])),
            ]
            for r in rows
        ],
        args.markdown,
    )
    report.publish(table, {"sizes": rows, "repeats": args.repeats}, args.json)
    return 0


if __name__ == "__main__":
    sys.exit(main())
