"""Passages: contiguous chunks of one document around search hits (a hit's window kept to its section when asked),
merged, deduplicated and trimmed."""

from dataclasses import dataclass

from backend.contract.text import snippet
from backend.contract.types import Source
from backend.rag.chunking import estimate_tokens
from backend.rag.index import StoredChunk


@dataclass
class Passage:
    """Contiguous chunks of one document around one or more hits."""

    doc_id: str
    document: str
    chunks: list[StoredChunk]
    hit: int
    fused: float
    intro: bool = False
    score: float = 0.0
    similarity: float | None = None  # cosine similarity of the hit chunk to the query

    @property
    def text(self) -> str:
        """The chunks' text with overlaps removed, using their character spans."""
        out, end = "", -1
        for c in self.chunks:
            if end < 0:
                out = c.text
            elif c.start >= end:
                out += "\n\n" + c.text  # chunks of different sections are separated like the full text
            else:
                out += c.text[end - c.start :]
            end = max(end, c.end)
        return out


def merge_ranges(spans: list[list]) -> list[tuple[int, int, int, float]]:
    """Overlapping [first, last] windows merged (adjacent ones stay apart); each keeps its best hit and score."""
    merged: list[list] = []
    for first, last, hit, score in sorted(spans):
        if merged and first <= merged[-1][1]:
            cur = merged[-1]
            cur[1] = max(cur[1], last)
            if score > cur[3]:
                cur[2], cur[3] = hit, score
        else:
            merged.append([first, last, hit, score])
    return [tuple(m) for m in merged]  # type: ignore[misc]


def dedupe(passages: list[Passage]) -> list[Passage]:
    """Drop passages whose chunks were all seen already (identical content hashes), keeping the better one."""
    seen: set[str] = set()
    kept = []
    for p in passages:
        hashes = {c.hash for c in p.chunks}
        if hashes <= seen:
            continue
        seen |= hashes
        kept.append(p)
    return kept


def trim(passages: list[Passage], k: int, budget: int) -> list[Passage]:
    """At most k passages within the token budget: first every passage's hit chunk, then neighbours nearest first."""
    top = passages[:k]
    keep: list[dict[int, StoredChunk]] = []
    used = 0
    for p in top:
        hit = next((c for c in p.chunks if c.idx == p.hit), p.chunks[0])
        cost = estimate_tokens(hit.text)
        keep.append({hit.idx: hit} if not keep or used + cost <= budget else {})
        used += cost if keep[-1] else 0
    for p, kept in zip(top, keep, strict=True):
        if not kept:
            continue
        for c in sorted(p.chunks, key=lambda c: abs(c.idx - p.hit)):
            cost = estimate_tokens(c.text)
            if c.idx in kept or used + cost > budget:
                continue
            if c.idx - 1 in kept or c.idx + 1 in kept:  # stay contiguous
                kept[c.idx] = c
                used += cost
    return [
        Passage(p.doc_id, p.document, [kept[i] for i in sorted(kept)], p.hit, p.fused, p.intro, p.score, p.similarity)
        for p, kept in zip(top, keep, strict=True)
        if kept
    ]


def to_source(n: int, p: Passage) -> Source:
    """The client-facing source for a passage, cited as S<n>."""
    hit = next((c for c in p.chunks if c.idx == p.hit), p.chunks[0])
    return Source(
        id=f"S{n}",
        document=p.document,
        page=hit.page,
        chunk=hit.idx,
        snippet=snippet(hit.text),
        score=round(float(p.score), 4),
        text=p.text,
        section=hit.section,
        chunks=[p.chunks[0].idx, p.chunks[-1].idx],
        doc_id=p.doc_id,
        version=p.chunks[0].version,
        start=p.chunks[0].start,
        end=max(c.end for c in p.chunks),
        relevance=None if p.similarity is None else round(p.similarity, 4),
    )


def section_span(chunks: list[StoredChunk], hit: int) -> tuple[int, int]:
    """The first and last chunk index of the run around the hit, among `chunks` (its window), that stays in the
    hit's section; the whole window when the hit has no section (a PDF page's text).

    On documents with headings a neighbour from the next section is another subject: with it, an onboarding
    checklist's "First week" hit carried the "First day" list before it, and the 1.5B model answered "what should
    I do in my first week?" with the first day's items (tester, 3 of 3)."""
    by_idx = {c.idx: c for c in chunks}
    section = by_idx[hit].section if hit in by_idx else None
    if section is None:
        return (chunks[0].idx, chunks[-1].idx) if chunks else (hit, hit)
    first = last = hit
    while first - 1 in by_idx and by_idx[first - 1].section == section:
        first -= 1
    while last + 1 in by_idx and by_idx[last + 1].section == section:
        last += 1
    return first, last
