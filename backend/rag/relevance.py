"""The relevance floor: how close each passage is to the query, and which passages are close enough to be sent.

Fused ranks say which passages are best, not whether any is good: every query gets a top k. The floor uses the
cosine similarity of a passage's hit chunk to the query (MiniLM; comparable across queries) and keeps passages
that are both above an absolute floor and within a margin of the best one.
"""

from collections.abc import Iterable, Mapping

import numpy as np

from backend.rag.passages import Passage
from backend.rag.store import VectorStore

Key = tuple[str, int]  # (document id, chunk index)


def chunk_similarities(
    collection: VectorStore,
    query_vector: list[float],
    keys: Iterable[Key],
    versions: Mapping[str, int],
    known: Mapping[Key, float],
) -> dict[Key, float]:
    """Cosine similarity to the query of every key; vectors not among the vector hits are read from Chroma."""
    out = dict(known)
    missing = [k for k in dict.fromkeys(keys) if k not in out and k[0] in versions]
    if not missing:
        return out
    ids = [f"{doc}:{versions[doc]}:{idx}" for doc, idx in missing]
    got = collection.get(ids=ids, include=["embeddings"])
    query = np.asarray(query_vector, dtype=np.float32)
    query /= max(float(np.linalg.norm(query)), 1e-12)
    by_id = dict(zip(got["ids"], got["embeddings"], strict=True))
    for key, chunk_id in zip(missing, ids, strict=True):
        if chunk_id in by_id:
            vector = np.asarray(by_id[chunk_id], dtype=np.float32)
            out[key] = float(vector @ query / max(float(np.linalg.norm(vector)), 1e-12))
    return out


def above_floor(passages: list[Passage], floor: float, margin: float, keep_best: bool) -> list[Passage]:
    """Passages at least `floor` similar to the query and within `margin` of the best, plus the intro of an
    aimed-at document; the best alone if none passes and `keep_best` (a search aimed at named documents)."""
    scored = [p.similarity for p in passages if p.similarity is not None]
    if not scored:
        return passages
    best = max(scored)
    bar = max(floor, best - margin)
    kept = [p for p in passages if p.intro or (p.similarity is not None and p.similarity >= bar)]
    if not [p for p in kept if not p.intro] and keep_best:
        best_passage = max(passages, key=lambda p: p.similarity if p.similarity is not None else -1.0)
        kept = [p for p in passages if p.intro or p is best_passage]
    return kept
