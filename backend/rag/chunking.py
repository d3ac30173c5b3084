"""Split loaded sections into overlapping chunks that never cross a PDF page or a heading."""

import bisect
import hashlib
import re
from collections.abc import Iterator
from dataclasses import dataclass

from backend.rag.loaders import Section

Span = tuple[int, int]

_FENCE = re.compile(r" {0,3}(`{3,}|~{3,})")  # the Markdown code fence rule of backend.rag.loaders
_SENTENCE_GAP = re.compile(
    r"(?:(?<=[.!?])|(?<=[.!?][\"')\]\u201d\u2019]))\s+"  # after sentence punctuation, maybe a closing quote
    r"|\s*\n\s*(?=(?:[-*+\u2022]|\d{1,3}[.)])\s)"  # before a list item on a new line
)
_WORD = re.compile(r"\S+")


@dataclass(frozen=True)
class Chunk:
    """A piece of a document: exactly full_text(sections)[start:end], with its page and section heading."""

    index: int
    text: str
    page: int | None
    section: str | None
    start: int
    end: int
    hash: str


def full_text(sections: list[Section]) -> str:
    """The document's text: section texts joined with blank lines; chunk spans index into it."""
    return "\n\n".join(s.text for s in sections)


def page_spans(sections: list[Section]) -> list[tuple[int, int, int]]:
    """(page, start, end) of each PDF page's text within full_text(sections); [] when sections have no pages."""
    spans: list[list[int]] = []
    offset = 0
    for section in sections:
        start, offset = offset, offset + len(section.text)
        if section.page is not None:
            if spans and spans[-1][0] == section.page:
                spans[-1][2] = offset
            else:
                spans.append([section.page, start, offset])
        offset += 2  # the blank line full_text puts between sections
    return [(p, s, e) for p, s, e in spans]


def estimate_tokens(text: str) -> int:
    """Estimated tokens: one per 4 characters of the text with whitespace runs collapsed, rounded up."""
    return (len(" ".join(text.split())) + 3) // 4


def chunk_sections(sections: list[Section], target_tokens: int = 200, overlap_tokens: int = 30) -> list[Chunk]:
    """Chunks of at most target_tokens, overlapping by about overlap_tokens within a page/heading block."""
    if target_tokens < 1 or not 0 <= overlap_tokens < target_tokens:
        raise ValueError("need target_tokens >= 1 and 0 <= overlap_tokens < target_tokens")
    text = full_text(sections)
    chunks: list[Chunk] = []
    for page, heading, paragraphs in _blocks(sections):
        for start, end in _pack(text, paragraphs, target_tokens, overlap_tokens):
            piece = text[start:end]
            digest = hashlib.sha256(piece.encode("utf-8", "surrogatepass")).hexdigest()
            chunks.append(Chunk(len(chunks), piece, page, heading, start, end, digest))
    return chunks


def _blocks(sections: list[Section]) -> Iterator[tuple[int | None, str | None, list[Span]]]:
    """Runs of consecutive non-blank sections with the same page and heading, as paragraph spans."""
    page: int | None = None
    heading: str | None = None
    paragraphs: list[Span] = []
    offset = 0
    for section in sections:
        if section.text.strip():
            if paragraphs and (section.page, section.heading) != (page, heading):
                yield page, heading, paragraphs
                paragraphs = []
            page, heading = section.page, section.heading
            paragraphs.extend(_paragraph_spans(section.text, offset))
        offset += len(section.text) + 2
    if paragraphs:
        yield page, heading, paragraphs


def _paragraph_spans(text: str, offset: int) -> list[Span]:
    """Spans of blank-line-separated paragraphs, keeping a Markdown code fence whole."""
    spans: list[Span] = []
    start: int | None = None
    end = 0
    fence: str | None = None
    pos = offset
    for line in text.split("\n"):
        stripped = line.strip()
        if stripped:
            if start is None:
                start = pos + len(line) - len(line.lstrip())
            end = pos + len(line.rstrip())
            if opener := _FENCE.match(line):
                if fence is None:
                    fence = opener.group(1)
                elif opener.group(1).startswith(fence) and not stripped.strip(fence[0]):
                    fence = None
        elif fence is None and start is not None:
            spans.append((start, end))
            start = None
        pos += len(line) + 1
    if start is not None:
        spans.append((start, end))
    return spans


def _pack(text: str, paragraphs: list[Span], target: int, overlap: int) -> list[Span]:
    """Greedy chunk spans over one block, ending at a paragraph when that keeps at least half the target."""
    units: list[Span] = []  # sentences, or the words of a sentence longer than the target
    paragraph_starts: set[int] = set()  # indices of units that begin a paragraph
    sentence_starts: list[int] = []
    for paragraph in paragraphs:
        paragraph_starts.add(len(units))
        for start, end in _sentence_spans(text, paragraph):
            sentence_starts.append(start)
            fits = estimate_tokens(text[start:end]) <= target
            units.extend([(start, end)] if fits else _word_spans(text, (start, end), target))
    spans: list[Span] = []
    start, i = units[0][0], 0
    while i < len(units):
        first = i
        i += 1
        while i < len(units) and estimate_tokens(text[start : units[i][1]]) <= target:
            i += 1
        breaks = [m for m in range(first + 1, i) if m in paragraph_starts]
        ends_mid_paragraph = i < len(units) and i not in paragraph_starts
        if ends_mid_paragraph and breaks and 2 * estimate_tokens(text[start : units[breaks[-1] - 1][1]]) >= target:
            i = breaks[-1]
        spans.append((start, units[i - 1][1]))
        if i < len(units):
            tail = _overlap_start(text, spans[-1], units[i][1], sentence_starts, target, overlap)
            start = units[i][0] if tail is None else tail
    return spans


def _sentence_spans(text: str, span: Span) -> list[Span]:
    """Sentence spans inside span: breaks after . ! ? and before list items on a new line."""
    spans: list[Span] = []
    start = span[0]
    for gap in _SENTENCE_GAP.finditer(text, span[0], span[1]):
        if gap.start() > start:
            spans.append((start, gap.start()))
        start = gap.end()
    if start < span[1]:
        spans.append((start, span[1]))
    return spans


def _word_spans(text: str, span: Span, target: int) -> list[Span]:
    """Word spans inside span; a word longer than the target is cut every 4 * target characters."""
    spans: list[Span] = []
    for word in _WORD.finditer(text, span[0], span[1]):
        spans.extend((s, min(s + 4 * target, word.end())) for s in range(word.start(), word.end(), 4 * target))
    return spans


def _overlap_start(
    text: str, chunk: Span, next_end: int, sentence_starts: list[int], target: int, overlap: int
) -> int | None:
    """Where the next chunk starts inside chunk: whole tail sentences, or tail words if those give too little."""
    chunk_start, chunk_end = chunk

    def earliest(candidates: list[int]) -> int | None:
        """The earliest candidate whose tail fits the overlap and, with the next unit, the target."""
        found = None
        for position in reversed(candidates):  # later starts give shorter tails, so stop at the first misfit
            if estimate_tokens(text[position:chunk_end]) > overlap or estimate_tokens(text[position:next_end]) > target:
                break
            found = position
        return found

    first, last = bisect.bisect_right(sentence_starts, chunk_start), bisect.bisect_left(sentence_starts, chunk_end)
    by_sentence = earliest(sentence_starts[first:last])
    if by_sentence is not None and 2 * estimate_tokens(text[by_sentence:chunk_end]) >= overlap:
        return by_sentence
    words = [w.start() for w in _WORD.finditer(text, chunk_start, chunk_end) if w.start() > chunk_start]
    by_word = earliest(words)
    return by_sentence if by_word is None else by_word
