"""Does another document the model was given state the answer's figure differently?

A team's documents disagree: an older policy says private cars are reimbursed at "0.30 euros per kilometre", a
newer expense sheet "0.42 euros per kilometre when a technician uses a private car". Both passages reached the
model; it answered with one, cited it, and every check passed, so the reader never learnt that the other document
says otherwise (tester). A supported claim with a number is compared with the sentences of the passages of other
documents: when one of them says the same thing (at least MIN_SHARED content words in common besides the unit, and
at least MIN_OVERLAP of the shorter sentence's) with another number of the same unit ("0.42 euros" against
"0.30 euros"), the answer ends by saying so and quoting that sentence with its marker. The claim's own sentence is
its passage's sentence holding the claim's number, so the answer's wording does not matter.

Only figures are compared: a number and the word after it, its unit ("euros", "days", "%"; not a stop word, as in
"30 to 45"). Words are stemmed
content words (text.content_words), so "uses" and "used" match. Sentences of one document are never compared (a
policy gives 45 euros a day and 20 for a short day), nor a figure the answer already states (it gave both).
"""

import re
from collections.abc import Mapping
from dataclasses import dataclass

from backend.contract.text import content_words, stem, typed_content_words
from backend.contract.types import Conflict
from backend.guardrails.grounding import SentenceSupport, figures, passage_sentences
from backend.guardrails.text import numbers, unwrapped

MIN_SHARED = 3  # content words two sentences must share to say the same thing
MIN_OVERLAP = 0.6  # and this share of the shorter sentence's words: "Private cars used for business trips are
# reimbursed at 0.30 euros per kilometre" and "Mileage is reimbursed at 0.42 euros per kilometre when a technician
# uses a private car" share 5 of 8
MIN_AROUND = 2  # and the words around the two figures, besides the unit: "reimbursed at 0.30 euros per kilometre"
# and "reimbursed at 0.42 euros per kilometre", not "at most 20 working days per calendar year" and "rejects the
# request within 3 working days" (both about what a line manager approves)
AROUND_BEFORE, AROUND_AFTER = 4, 3  # words read on each side of a figure
MOST = 2  # conflicts named per answer
_FIGURE = re.compile(r"(?<![\w.])(\d+(?:[.,:]\d+)*)\s*(%|[^\W\d_]+)?")


@dataclass(frozen=True)
class Figure:
    """A number with its unit (the word after it, stemmed) and the content words around it."""

    value: str
    unit: str
    around: frozenset[str]


def sentence_figures(sentence: str) -> list[Figure]:
    """The sentence's numbers that have a unit ("0.30 euros per kilometre": value "0.30", unit "euro", around
    {"reimburs", "euro", "kilometr"} for "… reimbursed at 0.30 euros per kilometre"), numbers normalised as
    text.numbers does ("1,500" is "1500")."""
    out = []
    for match in _FIGURE.finditer(sentence):
        value, unit = next(iter(numbers(match.group(1))), None), match.group(2) or ""
        if value is None or not (unit == "%" or typed_content_words(unit)):  # not "30 to 45", "4 of"
            continue
        before = " ".join(sentence[: match.start()].split()[-AROUND_BEFORE:])
        after = " ".join(sentence[match.end() :].split()[:AROUND_AFTER])
        around = frozenset(content_words(f"{before} {unit} {after}"))
        out.append(Figure(value, stem(unit.lower()), around))
    return out


def differs(mine: Figure, found: list[Figure], said: set[str]) -> bool:
    """Whether another sentence gives another number of the figure's unit, in the same words around it (MIN_AROUND
    of them besides the unit), where it does not give the figure's own; a number the answer states anyway is no
    conflict."""
    values = {f.value for f in found if f.unit == mine.unit}
    return mine.value not in values and any(
        f.unit == mine.unit and f.value not in said and len((f.around & mine.around) - {mine.unit}) >= MIN_AROUND
        for f in found
    )


def same_thing(one: str, other: str) -> bool:
    """Two sentences about the same thing: MIN_SHARED content words in common, and MIN_OVERLAP of the shorter
    one's."""
    a, b = content_words(one), content_words(other)
    shared = a & b
    return len(shared) >= MIN_SHARED and len(shared) >= MIN_OVERLAP * min(len(a), len(b))


def conflicts(
    claims: list[SentenceSupport], passages: Mapping[str, str], documents: Mapping[str, str], answer: str
) -> list[Conflict]:
    """For each supported claim with a number: another document's sentence, among the passages given, that says the
    same thing with another number of that unit; at most MOST, one per other passage."""
    said, out, seen = numbers(answer), [], set()
    for claim in claims:
        mine = figures(claim.sentence) & numbers(claim.sentence)
        if claim.best is None or not mine:
            continue
        for sentence in passage_sentences(unwrapped(passages[claim.best])):
            stated = [f for f in sentence_figures(sentence) if f.value in mine]
            for source, text in passages.items() if stated else ():
                if source in seen or documents.get(source) == documents.get(claim.best):
                    continue
                for other in passage_sentences(unwrapped(text)):
                    found = sentence_figures(other)
                    if any(differs(f, found, said) for f in stated) and same_thing(sentence, other):
                        out.append(Conflict(sentence=claim.sentence, cited=claim.best, source=source, says=other))
                        seen.add(source)
                        break
    return out[:MOST]


def conflict_note(found: list[Conflict], documents: Mapping[str, str]) -> str:
    """The paragraph the answer ends with: each other document's sentence, quoted with its marker."""
    quoted = " ".join(f"{documents[c['source']]} says: “{c['says'].strip()}” [{c['source']}]" for c in found)
    return f"{CONFLICT_NOTE}{quoted}"


CONFLICT_NOTE = "Another document gives a different figure. "
