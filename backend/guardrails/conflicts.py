"""Does another document the model was given state the answer's figure differently?

A team's documents disagree: an older policy says private cars are reimbursed at "0.30 euros per kilometre", a
newer expense sheet "0.42 euros per kilometre when a technician uses a private car". Both passages reached the
model; it answered with one, cited it, and every check passed, so the reader never learnt that the other document
says otherwise (tester). Each figure of a supported claim (a number with its unit: the word after it, not a stop
word as in "30 to 45"; a currency sign; a clock time) is found in the claim's passage, in the sentence that states
it. Another document's sentence disagrees with it when it
- gives another number of that unit, and not the claim's own ("210 EUR" against "€180");
- says the same thing in any words: MiniLM cosine of the two sentences, numbers masked, at least MIN_SIMILARITY
  ("From 1 March 2024, the nightly hotel cap for Paris, London and Amsterdam is 210 EUR" and "Hotel accommodation in
  Paris, London and Amsterdam is reimbursed up to €180 per night", 0.60);
- is about the same subject: the words, names and codes that the question and the claim's sentence share are in it
  too ("annual" of "How many days of annual leave …?" rules out "10 days of paid sick leave", "France" Belgium's
  allowance, "Year 8" Year 10's deposit), and where both sentences name codes or years they share one ("Zephyr-9"
  is not "Zephyr-7", 2023 not 2022).
The answer then ends by quoting that sentence with its marker (text.CONFLICT_NOTE). Numbers are compared as values
("0.3", "0.30" and "0,30"; "1,500" and "1 500"; "07:00" and "7:00"; "2:30 pm" and "14:30"). Sentences of one
document are never compared, a document is quoted once, and a figure the answer itself states, with its unit, is
no disagreement (it gave both). Sentences this alike may still be about different things the question does not
name (a plan's price and its add-on's), so the note says "something similar" and quotes the sentence whole. The
rules were set on a review's cases and two labelled sets helpers wrote without seeing them; a third is reported
(bench.conflicts).
"""

import re
import unicodedata
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from backend.contract.text import CONFLICT_NOTE, content_words, stem, typed_content_words
from backend.contract.types import Conflict
from backend.guardrails.grounding import NAME, SentenceSupport, passage_sentences
from backend.guardrails.text import unwrapped

Embed = Callable[[list[str]], Sequence]
MIN_SIMILARITY = 0.5  # MiniLM cosine of two sentences, numbers masked, that say the same thing; with the question's
# words (same_subject), chosen on 140 labelled cases (bench.conflicts): it noted 21 of 70 disagreements and 6 of 70
# others, and without the question's words 0.62 noted 29 and 19
PREFIX = 5  # letters a question's word is compared by: "night" and "nightly", "reimburse" and "reimbursement"
MOST = 2  # conflicts named per answer
MOST_PAIRS = 64  # candidate pairs whose wording is compared (a price list against another holds thousands)
# a currency sign, a number ("1,500", "1 500", "0,30", "10:00"), then its unit word or a per cent sign
_FIGURE = re.compile(
    r"([€$£])?\s?(?<![\w.,:])(\d{1,3}(?:[ ,]\d{3})+(?![\d,])|\d{1,15}(?:[.,:]\d{1,15})*(?!\d))\s*(%|[^\W\d_]+)?"
)
CURRENCY = {"€": "euro", "$": "dollar", "£": "pound"}
# one unit, several spellings (stemmed)
UNITS = {"eur": "euro", "km": "kilometr", "kms": "kilometr", "percent": "%", "h": "hour", "hr": "hour", "hrs": "hour",
         "min": "minut", "mins": "minut", "kilogram": "kg", "kgs": "kg", "usd": "dollar", "gbp": "pound"}  # fmt: skip
CLOCK = "time"  # the unit of a clock time ("07:00", "9 am"), whatever word follows it
# codes and years: "Zephyr-9", "R-410A", "E4", "Year 8", "Vega 5", 2024
_CODE = re.compile(r"\b[A-Za-z]+-?\d+[A-Za-z]*\b|\b[A-Z][a-z]+ \d+\b|\b(?:19|20)\d{2}\b")
_PER = re.compile(r"\s*(?:per|a|an|each|every|/)\s*([^\W\d_]+)", re.IGNORECASE)  # "per night", "a day", "/km"
_MASK = re.compile(r"[€$£]?\s?\d+(?:[.,:]\d+)*\s*%?")


@dataclass(frozen=True)
class Figure:
    """A number as a value, with its unit (the word after it, stemmed; a currency; a clock time) and what it is per
    ("euros per kilometre", "€180 a night", "€40/day"), if said."""

    value: str
    unit: str
    per: str = ""

    def measures_like(self, other: "Figure") -> bool:
        """The same unit, per the same thing where both say what they are per ("210 EUR" is like "€180 per
        night"; "0.42 euros per kilometre" is not like "45 euros per day")."""
        return self.unit == other.unit and (not self.per or not other.per or self.per == other.per)


def value_of(number: str) -> str:
    """One spelling per value: thousands separators out, a decimal comma read as a point, trailing zeros of a
    fraction and a time's leading zero dropped ("1 500" and "1,500" are "1500"; "0,30" and "0.30" are "0.3";
    "07:00" is "7:00"; "٣" is "3")."""
    number = "".join(str(unicodedata.decimal(c)) if c.isdecimal() else c for c in number)
    if re.fullmatch(r"\d{1,3}(?:[ ,]\d{3})+", number):
        return re.sub(r"[ ,]", "", number)
    if ":" in number:
        hours, _, rest = number.partition(":")
        return f"{hours.lstrip('0') or '0'}:{rest}"
    number = re.sub(r"^(\d+),(\d{1,2})$", r"\1.\2", number)
    if re.fullmatch(r"\d+\.\d+", number):
        return number.rstrip("0").rstrip(".")
    return number


def figure_unit(sign: str | None, number: str, word: str) -> str | None:
    """A figure's unit: its currency sign's, a clock time's, or the word after it (one spelling per unit); None
    when the word is a stop word and nothing else gives one."""
    low = word.lower()
    if sign:
        return CURRENCY[sign]
    if re.fullmatch(r"\d{1,2}:\d{2}", number) or (low in ("am", "pm") and re.fullmatch(r"\d{1,2}", number)):
        return CLOCK
    if low == "%" or typed_content_words(low):
        return UNITS.get(low, UNITS.get(stem(low), stem(low)))
    return None


def clock(value: str, word: str) -> str:
    """A clock time on the 24-hour clock: "9" before "am" is 9:00, "2:30" before "pm" 14:30, "12 am" 0:00."""
    hours, _, minutes = (value if ":" in value else f"{value}:00").partition(":")
    hour = int(hours[-2:] or 0)  # figure_unit read one or two digits as the hour
    if word.lower() == "pm" and hour < 12:
        hour += 12
    elif word.lower() == "am" and hour == 12:
        hour = 0
    return f"{hour}:{minutes}"


def sentence_figures(sentence: str) -> list[Figure]:
    """The sentence's numbers that have a unit ("… at €0.30 per km": value "0.3", unit "euro")."""
    out = []
    for match in _FIGURE.finditer(sentence):
        sign, number, word = match.groups()
        unit, value = figure_unit(sign, number, word or ""), value_of(number)
        if unit is not None:
            rest = sentence[match.end(2) if sign else match.end(3) :]
            each = _PER.match(rest) if unit != CLOCK else None  # "9 am" is not "per m"
            per = stem(UNITS.get(each.group(1).lower(), each.group(1).lower())) if each else ""
            out.append(Figure(clock(value, word or "") if unit == CLOCK else value, unit, per))
    return out


def differs(mine: Figure, found: list[Figure], said: set[tuple[str, str]]) -> bool:
    """Whether another sentence gives another number of the figure's unit where it does not give the figure's own;
    a figure the answer states anyway is no disagreement."""
    alike = [f for f in found if f.measures_like(mine)]
    return mine.value not in {f.value for f in alike} and any((f.value, f.unit) not in said for f in alike)


def codes(text: str) -> set[str]:
    """The codes and years of a text, lower-cased."""
    return {c.lower() for c in _CODE.findall(text)}


def names(text: str) -> set[str]:
    """Capitalised words not opening a sentence ("France", "Saturdays"), stemmed, and codes."""
    return {stem(n.lower()) for n in NAME.findall(text)} | codes(text)


def words(text: str) -> set[str]:
    """Every word of a text, lower-cased and stemmed, and its codes."""
    return {stem(w) for w in re.findall(r"[a-z]+", text.lower())} | codes(text)


def same_subject(question: str, mine: str, other: str) -> bool:
    """The question's words, names and codes that the claim's sentence holds are in the other sentence too (words
    by their first PREFIX letters), and where both sentences name codes or years, they share one."""
    if not {n for n in names(question) if n in words(mine)} <= words(other):
        return False
    if not _prefixes(question) & _prefixes(mine) <= _prefixes(other):  # "annual leave" is not "sick leave"
        return False
    return not (codes(mine) and codes(other)) or bool(codes(mine) & codes(other))


def _prefixes(text: str) -> set[str]:
    return {w[:PREFIX] for w in content_words(text)}


def stated_figures(claim: str, sentence: str) -> list[Figure]:
    """The figures of the passage's sentence that the claim states: its value with its unit, or its value alone
    when the claim gives none ("The rate is 0.30 [S1].")."""
    claimed = sentence_figures(claim)
    bare = {value_of(n) for _, n, unit in _FIGURE.findall(claim) if not unit}
    return [
        f
        for f in sentence_figures(sentence)
        if f.value in bare or any(f.value == c.value and f.measures_like(c) for c in claimed)
    ]


def masked(sentence: str) -> str:
    """The sentence with its numbers as "#", so two that differ only there read alike."""
    return _MASK.sub(" # ", sentence)


@dataclass(frozen=True)
class Candidate:
    """A claim, its passage's sentence stating the figure, and another document's sentence giving another one."""

    claim: str
    cited: str
    sentence: str
    source: str
    other: str


def candidates(
    claims: list[SentenceSupport], passages: Mapping[str, str], documents: Mapping[str, str], answer: str, question: str
) -> list[Candidate]:
    """Pairs whose figures disagree and whose subjects agree, before their wording is compared; each passage's
    sentences and their figures read once."""
    said = {(f.value, f.unit) for f in sentence_figures(answer)}
    read = {
        source: [(s, found) for s in passage_sentences(unwrapped(text)) if (found := sentence_figures(s))]
        for source, text in passages.items()
    }
    out = []
    for claim in (c for c in claims if c.best in passages and c.best in documents):
        for sentence, _ in read[claim.best]:
            stated = stated_figures(claim.sentence, sentence)
            for source in read if stated else ():
                if documents.get(source) in (None, documents[claim.best]):
                    continue
                out += [
                    Candidate(claim.sentence, claim.best, sentence, source, other)
                    for other, found in read[source]
                    if any(differs(f, found, said) for f in stated) and same_subject(question, sentence, other)
                ]
    return out[:MOST_PAIRS]


def conflicts(
    claims: list[SentenceSupport],
    passages: Mapping[str, str],
    documents: Mapping[str, str],
    answer: str,
    embed: Embed,
    question: str = "",
) -> list[Conflict]:
    """For the supported claims with a figure: sentences of other documents' passages among those given that state
    it differently; at most MOST, one per document (the most similar)."""
    pairs = candidates(claims, passages, documents, answer, question)
    if not pairs:
        return []
    texts = sorted({masked(t) for p in pairs for t in (p.sentence, p.other)})
    vectors = np.asarray(embed(texts), dtype=np.float32)
    vectors /= np.maximum(np.linalg.norm(vectors, axis=1, keepdims=True), 1e-12)
    sims, at = vectors @ vectors.T, {t: i for i, t in enumerate(texts)}
    scored = sorted(
        ((float(sims[at[masked(p.sentence)], at[masked(p.other)]]), i, p) for i, p in enumerate(pairs)),
        key=lambda x: (-x[0], x[1]),
    )
    out: list[Conflict] = []
    quoted: set[str] = set()
    for similarity, _, p in scored:
        if similarity >= MIN_SIMILARITY and documents[p.source] not in quoted and len(out) < MOST:
            out.append(Conflict(sentence=p.claim, cited=p.cited, source=p.source, says=p.other))
            quoted.add(documents[p.source])
    return out


def conflict_note(found: list[Conflict], documents: Mapping[str, str]) -> str:
    """The paragraph the answer ends with: each other document's sentence, quoted with its marker."""
    quoted = " ".join(f"{documents[c['source']]} says: “{c['says'].strip()}” [{c['source']}]" for c in found)
    return f"{CONFLICT_NOTE}{quoted}"
