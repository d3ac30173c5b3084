"""Resolve @mentions against document names: case-insensitive, extension optional, fuzzy when unambiguous."""

import difflib
import re
from dataclasses import dataclass, field

FUZZY_CUTOFF = 0.75
DETERMINERS = "the|our|your|this|that|my"


def _norm(name: str) -> str:
    return " ".join(re.sub(r"[^0-9a-z]+", " ", name.lower()).split())


def _stem(name: str) -> str:
    return _norm(name.rsplit(".", 1)[0]) if "." in name else _norm(name)


@dataclass
class Resolution:
    """Which documents the mentions name, and which mentions did not resolve to exactly one."""

    documents: list[str] = field(default_factory=list)
    ambiguous: dict[str, list[str]] = field(default_factory=dict)
    unknown: list[str] = field(default_factory=list)

    def notes(self) -> list[str]:
        """Human sentences about mentions that could not be resolved."""
        out = [f'"@{m}" matches several documents: {", ".join(c)}' for m, c in self.ambiguous.items()]
        return out + [f'No document matches "@{m}"' for m in self.unknown]


def resolve_one(mention: str, names: list[str]) -> list[str]:
    """Candidate documents for one mention, best rule first: exact, same stem, contained, fuzzy."""
    exact = [n for n in names if n.lower() == mention.lower()]
    if exact:
        return exact
    key = _stem(mention) if "." in mention and mention.rsplit(".", 1)[1].isalpha() else _norm(mention)
    if not key:
        return []
    same = [n for n in names if _stem(n) == key]
    if same:
        return same
    contained = [n for n in names if key in _stem(n)]
    if contained:
        return contained
    stems = {_stem(n): n for n in names}
    return [stems[s] for s in difflib.get_close_matches(key, list(stems), n=3, cutoff=FUZZY_CUTOFF)]


def resolve(mentions: list[str], names: list[str]) -> Resolution:
    """Resolve every mention; only names from `names` can ever come out (no paths, no files)."""
    result = Resolution()
    for mention in mentions:
        candidates = resolve_one(mention, names)
        if len(candidates) == 1:
            if candidates[0] not in result.documents:
                result.documents.append(candidates[0])
        elif candidates:
            result.ambiguous[mention] = candidates
        else:
            result.unknown.append(mention)
    return result


def named_documents(question: str, names: list[str]) -> list[str]:
    """Documents a question names in plain words, without an @: its whole name ("the travel policy" for
    travel-policy.pdf) or the end of it that no other document's name ends with ("the handbook" for
    employee-handbook.md, not "the policy" when two policies exist); a one-word name or end only after a determiner.
    In the order the question names them."""
    text = f" {_norm(question)} "
    ends: dict[str, list[str]] = {}
    for name in names:
        words = _stem(name).split()
        for i in range(len(words)):
            ends.setdefault(" ".join(words[i:]), []).append(name)
    found: dict[str, int] = {}
    for phrase, owners in ends.items():
        whole = phrase == _stem(owners[0])
        # one word counts after a determiner only ("the manual", not "a manual reset"; "the faq", not "it must")
        pattern = f" {phrase} " if " " in phrase else f" (?:{DETERMINERS}) {phrase} "
        at = re.search(pattern, text)
        if len(owners) == 1 and at and (whole or len(phrase) >= 4):
            found[owners[0]] = min(at.start(), found.get(owners[0], at.start()))
    return sorted(found, key=found.__getitem__)
