"""Sentence splitting for answers: keeps [S1] citation markers with their sentence and fenced code whole."""

import re

from backend.contract.citations import CITATION_PATTERN, CITATION_RE, SAYING_VERB, cited_ids
from backend.contract.text import CONFLICT_NOTE, PART_NOT_COVERED, PART_NOT_FOUND, word_set

# a sentence's end, with the markers written after its full stop ("… per night. [S1]"), unless they open the next
# sentence as its subject ("… tools. [S4] states that …")
_END = re.compile(
    rf"[.!?]+[\"')\]\u201d\u2019]*(?:\s*{CITATION_PATTERN}(?:\s*[,;]?\s*{CITATION_PATTERN})*(?!\s+{SAYING_VERB}))?"
    r"(?=\s|$)"
)
_ABBREVIATIONS = word_set("e.g i.e etc vs approx mr mrs ms dr no nr fig cf incl p pp st ca")
_LIST_NUMBER = re.compile(r"^\s*(?:[-*+\u2022]\s*)?\(?\d{1,3}[.)]$")
_FENCE = re.compile(r"^\s*(```|~~~)", re.MULTILINE)


def split_code(text: str) -> list[tuple[str, bool]]:
    """Text as (segment, is_code) pieces; fenced code blocks (``` or ~~~) are code."""
    pieces: list[tuple[str, bool]] = []
    cursor = 0
    inside = False
    for fence in _FENCE.finditer(text):
        line_end = text.find("\n", fence.end())
        line_end = len(text) if line_end < 0 else line_end + 1
        if inside:
            pieces.append((text[cursor:line_end], True))
            cursor = line_end
        else:
            pieces.append((text[cursor : fence.start()], False))
            cursor = fence.start()
        inside = not inside
    pieces.append((text[cursor:], inside))
    return [(piece, code) for piece, code in pieces if piece]


def split_sentences(line: str) -> list[str]:
    """Sentences of one line of prose, stripped, each with its trailing citation markers."""
    sentences: list[str] = []
    start = 0
    for end in _END.finditer(line):
        before = re.search(r"([\w.]+)\.+$", line[start : end.start() + 1])
        if end.group().startswith(".") and before and before.group(1).lower().rstrip(".") in _ABBREVIATIONS:
            continue
        if _LIST_NUMBER.match(line[start : end.end()]):
            continue
        sentence = line[start : end.end()].strip()
        if sentence:
            sentences.append(sentence)
        start = end.end()
    rest = line[start:].strip()
    if rest:
        sentences.append(rest)
    return sentences


def citations(sentence: str) -> list[str]:
    """Citation markers in a sentence, without brackets: "[S1] [S2, S3]" -> ["S1", "S2", "S3"]."""
    return cited_ids(sentence)


_NUMBER = re.compile(r"(?<![\w.])\d+(?:[.,:]\d+)*")


def numbers(text: str) -> set[str]:
    """Numbers in a text, thousands separators removed: "1,500 euros at 10:00" -> {"1500", "10:00"}."""
    text = CITATION_RE.sub(" ", text)
    return {re.sub(r",(?=\d{3}\b)", "", n).rstrip(".,:") for n in _NUMBER.findall(text)}


def unwrapped(text: str) -> str:
    """A passage with the line breaks inside its sentences taken out: a PDF's text breaks wherever the page's lines
    did ("… for offices of" / "up to 400 square metres."); a line that starts in lower case goes on the one before."""
    return re.sub(r"(?<![.!?:])\n(?=[a-z0-9(])", " ", text)


# what follows a note's lead: the parts of the question, quoted; or each other document's sentence, quoted with
# its marker
_PARTS_QUOTED = re.compile(r"(?:\s*“[^”]*”)+\s*")
_SAYS_QUOTED = re.compile(r"(?:\s*[^“”]+? says: “[^”]*” \[S\d+\])+\s*")


def is_check_note(text: str) -> bool:
    """Whether a paragraph or sentence is one of the checks' notes as they write it: a lead and what they quote
    (the conflict note's lead alone is a sentence of it); not a sentence that only opens like one ("This answer
    does not cover the rest of the question: Paris has 2 million people.", review)."""
    text = text.strip()
    if text.startswith(CONFLICT_NOTE.strip()):
        rest = text[len(CONFLICT_NOTE.strip()) :]
        return not rest.strip() or bool(_SAYS_QUOTED.fullmatch(rest))
    parts = (PART_NOT_FOUND, PART_NOT_COVERED)
    return any(text.startswith(lead) and _PARTS_QUOTED.fullmatch(text[len(lead) :]) for lead in parts)


def split_notes(answer: str, count: int | None = None) -> tuple[str, list[str]]:
    """The answer without the checks' closing notes, and the notes (paragraphs), in order; with `count`, that many
    last paragraphs are the notes (those the checks say they added)."""
    paragraphs = answer.rstrip().split("\n\n")
    at = len(paragraphs)
    if count is not None:
        at = max(1, at - count)
    else:
        while at > 1 and is_check_note(paragraphs[at - 1]):
            at -= 1
    return "\n\n".join(paragraphs[:at]), paragraphs[at:]


def closed_fence(text: str) -> str:
    """The text with a code fence it leaves open closed, so a paragraph added after it is prose (an answer cut at the
    length limit inside a code block; review)."""
    fences = _FENCE.findall(text)
    return f"{text}\n{fences[-1]}" if len(fences) % 2 else text
