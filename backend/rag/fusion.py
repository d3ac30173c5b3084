"""Ranking helpers of the hybrid search: reciprocal rank fusion of the hit lists, and the two ways a passage
below the relevance floor is still sent (it holds every anchor of a follow-up, or it is a section the question
names)."""

from collections import defaultdict

from backend.contract.text import content_words, names_heading
from backend.rag.passages import Passage

RRF_K = 60
Key = tuple[str, int]  # (document id, chunk index)
ANCHORED = 2  # passages at most that the anchors let past the floor, best fused first


def anchored(text: str, anchors: list[str] | None) -> bool:
    """The text holds every anchor (stemmed content words): "new employees" needs both words, not any HR passage
    that says "employee" (review)."""
    return bool(anchors) and set(anchors) <= content_words(text)


def headed(passage: Passage, question: str) -> bool:
    """The question names the section of one of the passage's chunks (contract.text.names_heading): "What should
    I do on my first day?" and the checklist's "First day", which MiniLM put under the floor while the "First week"
    section passed, so a tester got the first week's tasks."""
    return any(names_heading(question, c.section, passage.document) for c in passage.chunks)


def fuse(lists: list[list[Key]]) -> list[tuple[Key, float]]:
    """Reciprocal rank fusion: sum of 1/(RRF_K + rank) over the lists a key appears in, best first."""
    scores: dict[Key, float] = defaultdict(float)
    for lst in lists:
        for rank, key in enumerate(dict.fromkeys(lst), start=1):
            scores[key] += 1.0 / (RRF_K + rank)
    return sorted(scores.items(), key=lambda kv: -kv[1])
