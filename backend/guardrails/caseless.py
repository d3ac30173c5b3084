"""Case-insensitive patterns that read a document chunk fast: folded text, and a literal gate before the regex.

The injection rules are some eighty patterns, most of them alternations of words behind a word boundary
("\\b(ignore|disregard|forget|…)"). Python's re tries such a pattern at every position of the text, and with
re.IGNORECASE three to four times more slowly, so a chunk of 1 KB cost about 6 ms. Two things cut that, neither of
which changes what a pattern matches:

- A pattern with no capital letter of its own is compiled case-sensitively and matched against the folded text
  (lower case, "İ" read as "i" as re.IGNORECASE reads it); one that names capitals ("(?-i:DAN mode)") keeps
  re.IGNORECASE on the text as written.
- Every match of a pattern contains one of a few literal strings that the pattern itself requires (its
  "factors": "ignore", "disregard", … for the rule above), found by walking the parsed pattern. When none of them
  is in the folded text, which is a substring test in C, the pattern cannot match and is not run. A pattern made
  of alternatives at its top level ("A|B|C") is gated alternative by alternative for a yes/no answer (`found`),
  since one alternative's rare words say nothing about another's.
"""

import re
from collections.abc import Iterator
from typing import Any

try:  # the parser behind re.compile (Python 3.11+); without it the patterns run ungated
    from re import _constants as sre_constants
    from re import _parser as sre_parse
except ImportError:  # pragma: no cover
    sre_parse = sre_constants = None  # type: ignore[assignment]
try:  # the letters re.IGNORECASE reads as one beyond lower(): "ı" and "i", "ᲃ" and "т", "ς" and "σ"…
    from re._casefix import _EXTRA_CASES
except ImportError:  # pragma: no cover
    _EXTRA_CASES = {}


def _one_of(letters: tuple[int, ...]) -> int:
    """The letter a set of them is spelt as: a word character (so that \\b and \\w read it as before), the lowest."""
    return min(letters, key=lambda code: (not chr(code).isalnum(), code))


# each such letter as one of its set, applied to the folded text and to the patterns alike
_SAME_LETTER = {
    code: _one_of((code, *others)) for code, others in _EXTRA_CASES.items() if _one_of((code, *others)) != code
}
# an inline flag that turns case-insensitivity off ("(?-i:…)", "(?s-i:…)"): that pattern reads the text as written
_CASE_SENSITIVE_PART = re.compile(r"\(\?[a-zA-Z]*-[a-zA-Z]*i")
# a character written as an escape ("\u0041"), which the check for capitals cannot see
_CHARACTER_ESCAPE = re.compile(r"\\[uUxN0-7]")
# what makes a pattern's alternatives depend on each other: a group reference, a global flag
_NOT_SPLIT = re.compile(r"\\[1-9]|\(\?P=|^\(\?[a-zA-Z]+\)")

MIN_FACTOR = 3  # a gate of shorter strings ("i", "as") passes almost any text: not worth its test
MAX_FACTORS = 64


def fold(text: str) -> str:
    """The text in lower case, as the patterns read it: as re.IGNORECASE reads each letter ("İ" as "i", not the
    "i̇" of lower(); the letters it pairs beyond lower() as one)."""
    return text.replace("İ", "i").lower().translate(_SAME_LETTER)


class Caseless:
    """A case-insensitive, multi-line pattern; callers pass the text and its folded copy (fold)."""

    __slots__ = ("alternatives", "folded", "needs", "regex")

    def __init__(self, pattern: str) -> None:
        own = re.sub(r"\\.", "", pattern)
        self.folded = (
            own == own.lower() and not _CASE_SENSITIVE_PART.search(pattern) and not _CHARACTER_ESCAPE.search(pattern)
        )
        if self.folded:
            pattern = pattern.translate(_SAME_LETTER)  # as the folded text spells them
        self.regex = re.compile(pattern, re.MULTILINE if self.folded else re.IGNORECASE | re.MULTILINE)
        self.needs = required_factors(pattern) if self.folded else None
        self.alternatives = _alternatives(pattern) if self.folded else []

    def _subject(self, text: str, folded: str) -> str | None:
        """The text this pattern reads, or None when its gate shows it cannot match."""
        if not self.folded:
            return text
        return folded if _passes(self.needs, folded) else None

    def found(self, text: str, folded: str) -> bool:
        """Whether the pattern matches somewhere (the same answer as search, sooner)."""
        if not self.alternatives:
            return self.search(text, folded) is not None
        return any(_passes(needs, folded) and regex.search(folded) is not None for needs, regex in self.alternatives)

    def search(self, text: str, folded: str) -> re.Match[str] | None:
        subject = self._subject(text, folded)
        return None if subject is None else self.regex.search(subject)

    def match(self, text: str, folded: str) -> re.Match[str] | None:
        subject = self._subject(text, folded)
        return None if subject is None else self.regex.match(subject)

    def finditer(self, text: str, folded: str) -> Iterator[re.Match[str]]:
        subject = self._subject(text, folded)
        return iter(()) if subject is None else self.regex.finditer(subject)


def _passes(needs: tuple[str, ...] | None, folded: str) -> bool:
    """Whether the folded text holds one of a pattern's factors (always, for a pattern without them)."""
    return needs is None or any(n in folded for n in needs)


def _alternatives(pattern: str) -> list[tuple[tuple[str, ...] | None, re.Pattern[str]]]:
    """Each top-level alternative with its factors, or [] for a pattern of one (or one that does not split: an
    alternative referring to another's group)."""
    parts = top_alternatives(pattern)
    if len(parts) < 2 or _NOT_SPLIT.search(pattern):
        return []
    try:
        return [(required_factors(p), re.compile(p, re.MULTILINE)) for p in parts]
    except re.error:
        return []


def top_alternatives(pattern: str) -> list[str]:
    """The pattern split at its top-level "|" (outside groups, classes and escapes)."""
    parts, depth, start, i = [], 0, 0, 0
    while i < len(pattern):
        ch = pattern[i]
        if ch == "\\":
            i += 2
            continue
        if ch == "[":  # a class: to its closing bracket ("[]…]" and "[^]…]" hold a literal one)
            i += 2 if pattern[i + 1 : i + 2] == "^" else 1
            i += 1 if pattern[i : i + 1] == "]" else 0
            while i < len(pattern) and pattern[i] != "]":
                i += 2 if pattern[i] == "\\" else 1
        elif ch == "(":
            depth += 1
        elif ch == ")":
            depth -= 1
        elif ch == "|" and depth == 0:
            parts.append(pattern[start:i])
            start = i + 1
        i += 1
    parts.append(pattern[start:])
    return parts


def required_factors(pattern: str) -> tuple[str, ...] | None:
    """Literal strings one of which every match of the (case-sensitive) pattern contains, or None when the
    pattern guarantees none of at least MIN_FACTOR characters."""
    if sre_parse is None:
        return None
    try:
        factors = _sequence(list(sre_parse.parse(pattern, re.MULTILINE)))
    except (re.error, RecursionError, TypeError, ValueError):
        return None
    if not factors or min(map(len, factors)) < MIN_FACTOR or len(factors) > MAX_FACTORS:
        return None
    return tuple(sorted(factors))


def _sequence(items: list[tuple[Any, Any]]) -> set[str] | None:
    """The best factor set of a sequence: from its runs of literals and its parts that each guarantee one."""
    candidates: list[set[str]] = []
    run = ""
    for op, arg in items:
        if op is sre_constants.LITERAL:
            run += chr(arg)
            continue
        if run:
            candidates.append({run})
            run = ""
        if (inner := _item(op, arg)) is not None:
            candidates.append(inner)
    if run:
        candidates.append({run})
    return max(candidates, key=_quality, default=None)


def _item(op: Any, arg: Any) -> set[str] | None:
    """The factors one element guarantees: a group, an alternation, a repeat of at least once, a lookahead."""
    c = sre_constants
    if op is c.SUBPATTERN:
        return None if arg[1] & re.IGNORECASE else _sequence(list(arg[-1]))
    if op is c.BRANCH:
        sets = [_sequence(list(branch)) for branch in arg[1]]
        return None if any(s is None for s in sets) else set().union(*sets)  # type: ignore[arg-type]
    if op in (c.MAX_REPEAT, c.MIN_REPEAT, c.POSSESSIVE_REPEAT) and arg[0] >= 1:
        return _sequence(list(arg[2]))
    if op is c.ASSERT:  # a lookahead or lookbehind: what it requires is in the text there
        return _sequence(list(arg[1]))
    return None


def _quality(factors: set[str]) -> tuple[int, int]:
    """Longer shortest strings first (fewer texts pass), then fewer strings."""
    return (min(map(len, factors)) if factors else 0, -len(factors))
