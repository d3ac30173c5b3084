"""Resolve @mentions against document names: case-insensitive, extension optional, fuzzy when unambiguous."""

import difflib
from dataclasses import dataclass, field

from backend.contract.text import fold_name, name_key, name_stem

FUZZY_CUTOFF = 0.75


@dataclass
class Resolution:
    """Which documents the mentions name, and which mentions did not resolve to exactly one."""

    documents: list[str] = field(default_factory=list)
    ambiguous: dict[str, list[str]] = field(default_factory=dict)
    unknown: list[str] = field(default_factory=list)
    waiting: dict[str, str] = field(default_factory=dict)  # mention -> the document not ingested yet that it names

    def notes(self) -> list[str]:
        """Human sentences about mentions that could not be resolved."""
        out = [f'"@{m}" matches several documents: {", ".join(c)}' for m, c in self.ambiguous.items()]
        out += [f"{name} is not ingested yet: ask again once it is ready" for name in self.waiting.values()]
        return out + [f'No document matches "@{m}"' for m in self.unknown]


def resolve_one(mention: str, names: list[str]) -> list[str]:
    """Candidate documents for one mention, best rule first: exact, same stem, contained, fuzzy."""
    exact = [n for n in names if fold_name(n) == fold_name(mention)]
    if exact:
        return exact
    key = name_stem(mention) if "." in mention and mention.rsplit(".", 1)[1].isalpha() else name_key(mention)
    if not key:
        return []
    same = [n for n in names if name_stem(n) == key]
    if same:
        return same
    contained = [n for n in names if key in name_stem(n)]
    if contained:
        return contained
    stems = {name_stem(n): n for n in names}
    return [stems[s] for s in difflib.get_close_matches(key, list(stems), n=3, cutoff=FUZZY_CUTOFF)]


def resolve(mentions: list[str], names: list[str], pending: list[str] | None = None) -> Resolution:
    """Resolve every mention; only names from `names` can ever come out (no paths, no files).

    Names alike but for case or composition are one: collections the reader may read can each hold a `notes.md`, and
    no mention could tell them apart, so it names them all (a search by name reads every document of that name).
    A mention of none of them that names one document of `pending` (uploaded, not ingested yet) is waiting."""
    result = Resolution()
    for mention in mentions:
        candidates = list({fold_name(n): n for n in resolve_one(mention, names)}.values())
        if len(candidates) == 1:
            if candidates[0] not in result.documents:
                result.documents.append(candidates[0])
        elif candidates:
            result.ambiguous[mention] = candidates
        elif len(waiting := resolve_one(mention, pending or [])) == 1:
            result.waiting[mention] = waiting[0]
        else:
            result.unknown.append(mention)
    return result
