"""Citation repair: every supported claim cites a passage that supports it, and no unsupported claim cites any.

For each claim of a grounding result (grounding.py):
- supported, no marker          -> add the marker of its best passage;
- supported, a marker that does not support it -> re-point that marker to its best passage
  (markers that do support it are kept);
- unsupported                   -> remove its markers; the sentence is listed with its span.
A documents answer with claims of which none is supported is not presented at all: `not_found_reply` says the
documents do not contain it and names the closest passages instead.
"""

import re
from collections.abc import Mapping
from dataclasses import dataclass, field

from backend.contract.citations import CITATION_RE, group_ids, marker, tidy
from backend.guardrails.grounding import SUBJECT_MARKER, GroundingResult, SentenceSupport

# The prompt's own markup, which small models sometimes quote ("According to the <knowledge_base> block, …").
_MARKUP = re.compile(r"(?:\bthe\s+)?</?(?:knowledge_base|conversation_index)>(?:\s+(?:block|section))?", re.IGNORECASE)
_TRAILING_PUNCT = re.compile(r"([.!?]+[\"')\]\u201d\u2019]*)$")
_LEFT_AFTER_END = re.compile(r"(?<=[.!?])[\s,;]+$")  # what stood between two trailing markers ("… badge. [S2], [S2]")


@dataclass(frozen=True)
class Change:
    """One citation change and why it was made."""

    kind: str  # add | repoint | remove
    sentence: str
    before: list[str]
    after: list[str]
    reason: str

    def as_dict(self) -> dict:
        """JSON-friendly form for the validation record."""
        return {
            "kind": self.kind,
            "sentence": self.sentence,
            "before": self.before,
            "after": self.after,
            "reason": self.reason,
        }


@dataclass(frozen=True)
class Repaired:
    """The answer with repaired citations, what changed, and the claims no passage supports."""

    text: str
    changes: list[Change] = field(default_factory=list)
    unsupported: list[str] = field(default_factory=list)
    merged: list[str] = field(default_factory=list)  # sentences whose repeated marker was written once


def repair(answer: str, result: GroundingResult, names: Mapping[str, str]) -> Repaired:
    """Apply the repair rules to the answer; `names` maps passage ids to document names (for the reasons)."""
    pieces: list[str] = []
    changes: list[Change] = []
    merged: list[str] = []  # sentences citing a passage twice, written with each marker once (not a change of source)
    cursor = 0
    for s in result.sentences:
        pieces.append(answer[cursor : s.start])
        new_ids, change = _decide(s, names)
        doubled = not change and _cites_twice(s.sentence)
        fixed = _with_markers(s.sentence, new_ids, names) if change else s.sentence
        pieces.append(_cited_once(fixed) if doubled else fixed)
        changes += [change] if change else []
        merged += [s.sentence] if doubled else []
        cursor = s.end
    pieces.append(answer[cursor:])
    unsupported = [s.sentence for s in result.claims if s.best is None]
    bare = [tidy(CITATION_RE.sub("", _names_for_nouns(u, names))) for u in unsupported]  # as the text has them
    return Repaired(tidy("".join(pieces)), changes, bare, merged)


def _cited_once(sentence: str) -> str:
    """The sentence with every marker after a passage's first one dropped; the first ones stay where the model put
    them ("… 140 euros [S1] and meals 30 euros [S2]. [S2]" keeps [S1] on the hotels)."""
    seen: set[str] = set()

    def first_time(ids: list[str]) -> list[str]:
        new = [i for i in ids if i not in seen]
        seen.update(ids)
        return new

    return _LEFT_AFTER_END.sub("", tidy(CITATION_RE.sub(lambda m: marker(first_time(group_ids(m.group(1)))), sentence)))


def _cites_twice(sentence: str) -> bool:
    """The sentence cites one passage more than once ("… 180 euros [S5]. [S5]", which small models write)."""
    ids = [i for m in CITATION_RE.finditer(sentence) for i in group_ids(m.group(1))]
    return len(ids) != len(set(ids))


def _decide(s: SentenceSupport, names: Mapping[str, str]) -> tuple[list[str], Change | None]:
    """The ids the sentence should cite, and the change (None when it stays as it is)."""
    if not s.claim:
        return s.cited, None
    if s.best is None:
        why = f"no source contains {', '.join(s.missing_facts)}" if s.missing_facts else "no source supports it"
        return [], Change("remove", s.sentence, s.cited, [], why) if s.cited else None
    good = [c for c in s.cited if s.support.get(c, 0.0) >= s.support[s.best] * 0.8 and s.support[c] > 0]
    if not s.cited:
        return [s.best], Change("add", s.sentence, [], [s.best], f"supported by {names.get(s.best, s.best)}")
    if len(good) == len(s.cited):
        return s.cited, None
    after = good or [s.best]
    wrong = [c for c in s.cited if c not in good]
    why = f"{', '.join(wrong)} does not support it; {names.get(after[0], after[0])} does"
    return after, Change("repoint", s.sentence, s.cited, after, why)


# A marker the model wrote as a noun: the subject opening a sentence before a verb of saying ("[S4] states that
# taxis …"), or the end of a phrase that names documents after a word that needs one ("The documents that mention
# it are [S3] and [S4].", "as stated in [S1],"). Removed, it left "are and [S2]" (tester); it becomes its document's
# name instead. Any other marker cites the claim ("Up to 5 days [S2] are allowed", "Visitors sign in [S1] and …").
_NOUN_BEFORE = re.compile(
    r"(?:\b(?:and|or|nor|are|is|were|was|see|both|between)"
    r"|\b(?:stated|listed|mentioned|described|given|set out|explained|found|according)\s+(?:in|by|to))$",
    re.IGNORECASE,
)
_PHRASE_END = re.compile(r"^\s*(?:[.,;:!?]|$|(?:and|or)\s*\[S[0-9])", re.IGNORECASE)
_ADJACENT = re.compile(r"\]\s*\[(?=S[0-9])")  # "[S1][S2]": one group, "[S1, S2]", named as one


def _names_for_nouns(sentence: str, names: Mapping[str, str]) -> str:
    """The sentence with every marker used as a noun replaced by its documents' names (markers that cite the claim
    are left to the repair)."""

    def name(m: re.Match[str]) -> str:
        before, after = sentence[: m.start()].strip(), sentence[m.end() :]
        subject = not before and SUBJECT_MARKER.match(sentence)  # as grounding.attributed reads it
        named = before and _NOUN_BEFORE.search(before) and _PHRASE_END.search(after)
        return _document_names(m, names) if subject or named else m.group(0)

    sentence = _ADJACENT.sub(", ", sentence)
    return CITATION_RE.sub(name, sentence)


def _document_names(m: re.Match[str], names: Mapping[str, str]) -> str:
    docs = list(dict.fromkeys(names[i] for i in group_ids(m.group(1)) if i in names))
    return " and ".join(docs) if docs else m.group(0)


def _with_markers(sentence: str, ids: list[str], names: Mapping[str, str]) -> str:
    """The sentence with its markers replaced by `ids`, placed before its final punctuation; a marker used as a noun
    becomes its document's name first."""
    bare = tidy(CITATION_RE.sub("", _names_for_nouns(sentence, names)))
    bare = _LEFT_AFTER_END.sub("", bare)
    if not ids:
        return bare
    tail = _TRAILING_PUNCT.search(bare)
    if tail:
        return f"{bare[: tail.start()].rstrip()} {marker(ids)}{tail.group(1)}"
    return f"{bare} {marker(ids)}"


def strip_markup(answer: str) -> str:
    """The answer with the prompt's markup tags read as "the documents" (the reader never saw the tags)."""
    if "<" not in answer:
        return answer
    return tidy(replace_markup(answer))


def has_markup(text: str) -> bool:
    """Whether the text holds one of the prompt's markup tags."""
    return "<" in text and _MARKUP.search(text) is not None


def replace_markup(text: str) -> str:
    """The tags alone replaced by "the documents", every other character as it was (code keeps its indentation)."""
    return _MARKUP.sub(lambda m: "The documents" if m.group(0)[0] == "T" else "the documents", text)


def reason(changes: list[dict]) -> str:
    """One line for the `replace` event: what changed in the citations and why."""
    parts = []
    for c in changes:
        if c["kind"] == "repoint":
            parts.append(f"citation {', '.join(c['before'])} → {', '.join(c['after'])}: {c['reason']}")
        elif c["kind"] == "add":
            parts.append(f"citation {', '.join(c['after'])} added: {c['reason']}")
        else:
            parts.append(f"citation {', '.join(c['before'])} removed: {c['reason']}")
    return "; ".join(parts)


NOT_FOUND_OPENING = "I could not find this in the documents"
QUOTE_CHARS = 200  # at most this much of a closest sentence is quoted


def not_found_reply(closest: list[tuple[str, str | None]]) -> str:
    """The answer when the documents do not contain one: say so and name the closest passages found."""
    if not closest:
        return f"{NOT_FOUND_OPENING}."
    where = [f"{doc} ({section})" if section else doc for doc, section in dict.fromkeys(closest)]
    listed = where[0] if len(where) == 1 else ", ".join(where[:-1]) + f" and {where[-1]}"
    return f"{NOT_FOUND_OPENING}. The closest passages I found are in {listed}."


def not_found_explained(question: str, closest: list[tuple[str, str | None, str]]) -> str:
    """The not-found answer when the reader asks again ("why?", "are you sure?"): the closest passages' sentences
    nearest the question, quoted, so the reader sees what the documents do say instead of the same reply."""
    if not closest:
        return f"{NOT_FOUND_OPENING}: no passage I found states it."
    lines = []
    for doc, section, sentence in closest:
        quoted = sentence if len(sentence) <= QUOTE_CHARS else sentence[: QUOTE_CHARS - 1].rsplit(" ", 1)[0] + "…"
        lines.append(f"- {doc} ({section}): “{quoted}”" if section else f"- {doc}: “{quoted}”")
    return (
        f"{NOT_FOUND_OPENING}: none of the passages I found for “{question}” states it. The closest sentences are:\n\n"
        + "\n".join(lines)
    )
