"""Citation markers: [S1], and the groups models write, [S1, S2], [S1; S2] and [S1][S2]. One format for all.

The ledger, the grounding check and citation repair read markers with `cited_ids`/`CITATION_RE` and write them
with `marker`; the UI splits answers with the same pattern (generated into frontend/lib/contract.gen.ts).
"""

import re
from collections.abc import Callable

# [0-9], not \d: Python's \d also matches other scripts' digits, JavaScript's does not (the UI compiles this too)
CITATION_PATTERN = r"\[(S[0-9]+(?:\s*[,;]\s*S[0-9]+)*)\]"
CITATION_RE = re.compile(CITATION_PATTERN)
# A verb a model writes after a marker it uses as a noun ("[S4] mentions taxis"): that marker opens its sentence and
# names its document, it does not cite the sentence before (the UI reads markers the same way).
SAYING_VERB = (
    r"(?:mentions?|says?|states?|covers?|lists?|describes?|explains?|notes?|gives?|contains?|shows?|sets? out|"
    r"is|are|has|have|also)\b"
)
_ID_SPLIT = re.compile(r"\s*[,;]\s*")


def group_ids(group: str) -> list[str]:
    """The ids inside one bracket group's body ("S1, S2" -> ["S1", "S2"])."""
    return _ID_SPLIT.split(group.strip())


def cited_ids(text: str) -> list[str]:
    """Ids cited in a text, distinct, in order of first citation."""
    return list(dict.fromkeys(i for m in CITATION_RE.finditer(text) for i in group_ids(m.group(1))))


def marker(ids: list[str]) -> str:
    """The marker for ids: "[S1]", or "[S1][S2]" for several."""
    return "".join(f"[{i}]" for i in dict.fromkeys(ids))


def rewrite_markers(text: str, change: Callable[[list[str]], list[str]]) -> str:
    """The text with each marker's ids replaced by change(ids); a marker left with no ids disappears."""
    out = CITATION_RE.sub(lambda m: marker(change(group_ids(m.group(1)))), text)
    return tidy(out)


def tidy(text: str) -> str:
    """Spaces a removed marker leaves behind: doubled spaces and spaces before punctuation."""
    return re.sub(r"[ \t]+([.,;:!?])", r"\1", re.sub(r"[ \t]{2,}", " ", text)).strip()
