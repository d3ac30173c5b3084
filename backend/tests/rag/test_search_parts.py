from backend.rag.fusion import fuse
from backend.rag.index import StoredChunk
from backend.rag.passages import Passage, dedupe, merge_ranges, trim


def chunk(idx: int, text: str, start: int, doc: str = "d1", h: str | None = None) -> StoredChunk:
    return StoredChunk(doc, doc + ".md", 1, idx, text, None, None, start, start + len(text), h or f"{doc}{idx}")


def test_fuse_rewards_agreement_between_lists():
    fused = fuse([[("a", 0), ("b", 0), ("c", 0)], [("c", 0), ("b", 0), ("d", 0)]])
    order = [k for k, _ in fused]
    assert set(order[:2]) == {("b", 0), ("c", 0)}  # in both lists beats first in only one
    assert order.index(("a", 0)) < order.index(("d", 0))


def test_merge_ranges_joins_overlapping_windows_keeping_best_hit():
    merged = merge_ranges([[4, 6, 5, 0.1], [0, 2, 1, 0.3], [2, 4, 3, 0.5], [7, 9, 8, 0.2], [20, 20, 20, 0.9]])
    assert merged == [(0, 6, 3, 0.5), (7, 9, 8, 0.2), (20, 20, 20, 0.9)]


def test_passage_text_removes_overlap_between_chunks():
    p = Passage("d1", "d1.md", [chunk(0, "Hello world. ", 0), chunk(1, "world. Bye now.", 6)], 0, 1.0)
    assert p.text == "Hello world. Bye now."


def test_dedupe_drops_passage_with_only_seen_content():
    a = Passage("d1", "d1.md", [chunk(0, "same", 0, h="x")], 0, 1.0)
    b = Passage("d2", "d2.md", [chunk(0, "same", 0, doc="d2", h="x")], 0, 0.5)
    c = Passage("d3", "d3.md", [chunk(0, "other", 0, doc="d3", h="y")], 0, 0.4)
    assert dedupe([a, b, c]) == [a, c]


def test_trim_keeps_hit_chunks_first_then_neighbours_within_budget():
    words = "word " * 40  # ~52 tokens by the estimate
    p1 = Passage("d1", "d1.md", [chunk(0, words, 0), chunk(1, words, 200), chunk(2, words, 400)], 1, 1.0)
    p2 = Passage("d2", "d2.md", [chunk(5, words, 0, doc="d2")], 5, 0.5)
    kept = trim([p1, p2], k=4, budget=120)
    assert [[c.idx for c in p.chunks] for p in kept] == [[1], [5]]
    roomy = trim([p1, p2], k=4, budget=10_000)
    assert [[c.idx for c in p.chunks] for p in roomy] == [[0, 1, 2], [5]]
    assert len(trim([p1, p2], k=1, budget=10_000)) == 1
