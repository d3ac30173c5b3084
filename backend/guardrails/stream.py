"""Redact PII in a token stream without ever emitting a match unredacted, even when it is split across tokens.

Text is emitted only up to a *barrier*: the end of a complete word (followed by whitespace) across which no
PII pattern can continue. Spaced patterns (phone, card, IBAN, SSN, NINO) only join short digit or letter
groups, so a word ending in punctuation other than ")" or in a run of five or more letters ends any such
match; unspaced patterns (email, IP, a card without separators) never contain whitespace. A word of letters
only that follows a barrier (or opens the answer) is one too: no match can start before it, none starts inside
a word, and the only pattern that starts with letters and goes on past a space is a NINO ("QQ 12 34 56 C"), so
any such word but two capitals ends the match. An answer's first word thus goes out with the next token, not
after the first word of five letters. Everything after the
last barrier is held back; when no barrier comes for MAX_HOLD characters the text is cut FORCED_HOLD characters
from the end, which is longer than any pattern plus the context it reads. The concatenated output therefore
equals ``redact(full_text)`` (with the same allow-list).

One exception, for the time to first token: an answer's first token that is a common opening word ("The", "I",
"Yes", OPENERS) or the start of a word or a number of the question or the sources ("Pass" of "Passwords", "4" of
"40 spaces"; at most MAX_DIGITS digits) goes out at once, without waiting a whole generation step (or, for a
number read digit by digit, several) for the next token to show where it ends. An address, an IBAN, a phone
number or an ID could still grow from it ("The.team@…", "De" + "89 3704 …", "4" + "15 555 0100"); if one does,
the rest of it is redacted ("The[EMAIL]", "De[IBAN]", "4[PHONE]"), so what can reach the reader is that one token,
common or already in front of them, never the match.
"""

import re
from collections.abc import Iterable

from backend.contract.citations import CITATION_PATTERN
from backend.guardrails.pii import PII_TYPES, PiiMatch, find_pii, pii_key, placeholder

MAX_PREFIX = 24  # longest word start kept from the question and sources (a first token is shorter)
# most digits a first token may let out at once: a tokenizer that emits a whole digit run could otherwise send a phone
# number that merely begins like a longer number of the sources ("4155550100" of invoice 41555501009)
MAX_DIGITS = 2
MAX_HOLD = 256  # characters held back at most while waiting for a barrier
FORCED_HOLD = 112  # > longest valid spaced match (about 50) + the 12 characters a phone rule reads after it
LEFT_CONTEXT = 64  # characters kept before the emitted point: phone and SSN rules read 40 to the left

_WORD_THEN_SPACE = re.compile(r"(\S+)(\s+)")
_LETTERS_THEN_STOP = re.compile(r"\s*[^\W\d_]+[,;!?]")  # "No," at the end: no pattern contains these marks
_TRAILING_LETTERS = re.compile(r"[^\W\d_]+$")
_LETTER_WORD = re.compile(r"[^\W\d_]+|\d+")  # a word of letters, or a number's digits
# the words small models open most answers with (bench.answers' dumps: "The" 90 of 188), all carrying no identity
# fmt: off
OPENERS = frozenset((
    "a", "according", "all", "an", "and", "any", "as", "at", "based", "both", "but", "by", "each", "every",
    "for", "from", "here", "i", "if", "in", "it", "its", "no", "not", "of", "on", "only", "our", "so", "some",
    "sorry", "that", "the", "their", "there", "these", "they", "this", "those", "to", "unfortunately", "up",
    "we", "when", "yes", "you", "your"
))
# fmt: on


class StreamRedactor:
    """Feed generator tokens in, get redacted text out; call flush() once the stream ends."""

    def __init__(self, types: Iterable[str] | None = None, allowed: Iterable[str] = (), seen_text: str = "") -> None:
        """types: PII types to redact (default all); allowed: pii_key()s that may pass (from question and sources);
        seen_text: what the reader already has (the question and the sources): an opening token that begins one of
        its words goes out at once, like OPENERS ("Pass" of "Passwords")."""
        self._types = frozenset(PII_TYPES if types is None else types)
        self._allowed = frozenset(allowed)
        self._openers = OPENERS | word_prefixes(seen_text)
        self._buffer = ""  # text not yet dropped; _buffer[:_emitted] has already been returned
        self._emitted = 0
        self._at_barrier = True  # _buffer[:_emitted] ends at a barrier (not at a forced cut)
        self.redacted: list[str] = []  # types of the matches redacted so far, for logs

    def feed(self, token: str) -> str:
        """Add a token; return the redacted text that is now safe to send (possibly empty)."""
        self._buffer += token
        return self._drain(final=False)

    def flush(self) -> str:
        """Return the redacted remainder at the end of the stream."""
        return self._drain(final=True)

    def _drain(self, final: bool) -> str:
        """Emit redacted text up to the safe cut, then drop old text beyond the left context."""
        opener = not final and self._emitted == 0 and _is_opener(self._buffer, self._openers)
        cut = len(self._buffer) if final or opener else self._barrier_cut()
        forced = not final and len(self._buffer) - cut > MAX_HOLD
        if cut <= self._emitted and not forced:
            return ""  # nothing new to emit: skip the PII scan
        found = find_pii(self._buffer)  # all types, so cut points respect matches of allowed types too
        if forced:
            cut = self._forced_cut(cut, found)
        if cut <= self._emitted:
            return ""
        out: list[str] = []
        cursor = self._emitted
        for m in found:
            if m.end <= self._emitted or m.end > cut:
                continue
            if m.type in self._types and pii_key(m) not in self._allowed:
                # a match that began in text already out (an opening word) has its rest redacted
                out.append(self._buffer[cursor : max(m.start, cursor)] + placeholder(m.type))
                cursor = m.end
                self.redacted.append(m.type)
        out.append(self._buffer[cursor:cut])
        # after an opening word the next word is judged without it, which is safe only as the end of a word
        self._emitted, self._at_barrier = cut, not forced and not opener
        self._trim()
        return "".join(out)

    def _barrier_cut(self) -> int:
        """End of the last complete word after which no PII match can continue.

        A word of letters ending in "," ";" "!" or "?" at the very end of the text is complete too, without the
        space that has not arrived yet: no pattern contains those marks, so no match can run across them, and
        "No," or "Yes," goes out one token sooner (a whole token's generation time on the first token).
        """
        cut, after_barrier, end = self._emitted, self._at_barrier, self._emitted
        for word in _WORD_THEN_SPACE.finditer(self._buffer, self._emitted):
            after_barrier = _is_barrier(word.group(1)) or after_barrier and _starts_no_match(word.group(1))
            end = word.end()
            if after_barrier:
                cut = end
        if after_barrier and cut == end and _LETTERS_THEN_STOP.fullmatch(self._buffer, cut):
            cut = len(self._buffer)
        return cut

    def _forced_cut(self, cut: int, found: list[PiiMatch]) -> int:
        """A word start FORCED_HOLD characters from the end, moved before any match it would split."""
        cut = max(cut, self._word_start_before(len(self._buffer) - FORCED_HOLD))
        for m in found:
            if m.start < cut < m.end:
                cut = m.start
        return max(cut, self._emitted)

    def _word_start_before(self, limit: int) -> int:
        """Start of the last whitespace-preceded word starting at or before limit."""
        pos = max(self._buffer.rfind(" ", 0, limit), self._buffer.rfind("\n", 0, limit))
        return pos + 1 if pos >= 0 else 0

    def _trim(self) -> None:
        """Forget text more than LEFT_CONTEXT characters before the emitted point, starting at a word."""
        drop = self._word_start_before(self._emitted - LEFT_CONTEXT) if self._emitted > 2 * LEFT_CONTEXT else 0
        if drop > 0:
            self._buffer = self._buffer[drop:]
            self._emitted -= drop


def _is_barrier(word: str) -> bool:
    """True when no spaced PII pattern can continue past this complete word."""
    last = word[-1]
    if not last.isalnum():  # a lone dash is not: a phone rule reads "- mobile" after the number
        return last != ")" and word.strip("-\u2013\u2014") != ""
    letters = _TRAILING_LETTERS.search(word)
    return bool(letters) and len(letters.group()) >= 5 and letters.group().lower() != "extension"


def word_prefixes(text: str) -> frozenset[str]:
    """Every start of every word of letters and every number in the text, lowercased ("pass" for "Passwords", "4"
    and "40" for "40")."""
    words = {w.lower() for w in _LETTER_WORD.findall(text)}
    return frozenset(w[:i] for w in words for i in range(1, min(len(w), MAX_PREFIX) + 1))


def _is_opener(text: str, openers: frozenset[str]) -> bool:
    """True when the text so far is one opening word, or the start of a word or a number the reader has already
    seen; not two capitals, which may open a NINO."""
    word = text.lstrip()
    return word.lower() in openers and (_starts_no_match(word) or word.isdecimal() and len(word) <= MAX_DIGITS)


def _starts_no_match(word: str) -> bool:
    """True for a word of letters only that no PII match can start with and continue past: all but two capitals."""
    return word.isalpha() and not (len(word) == 2 and word.isupper())


# What may still become a citation marker (with the space before it) at the end of the text so far: spaces, or
# spaces then "[", "[S", "[S1", "[S1, S", … (CITATION_PATTERN, unfinished).
_MARKER_START = re.compile(r"[ \t]*\[(?:S[0-9]*(?:\s*[,;]\s*S?[0-9]*)*)?$|[ \t]+$")
_MARKER = re.compile(r"[ \t]*" + CITATION_PATTERN)
MAX_MARKER = 80  # characters held back at most for one unfinished marker (a group of about 15 ids)


class MarkerStripper:
    """Drop citation markers from a stream with no sources to cite (a chat answer): a small model writes "Bonjour!
    [S1]" after the system prompt's citation rule, and a client of /v1 keeps what streamed (tester). The stored
    answer drops them too (the ledger knows no S1). A marker split across tokens ("[", "S1", "]") is held back until
    it ends or can no longer be one; the space before it goes with it."""

    def __init__(self) -> None:
        self._held = ""

    def feed(self, token: str) -> str:
        """The part of the text so far that is safe to send: markers removed, an unfinished one held back."""
        text = _MARKER.sub("", self._held + token)
        start = _MARKER_START.search(text)
        cut = start.start() if start and len(text) - start.start() <= MAX_MARKER else len(text)
        self._held = text[cut:]
        return text[:cut]

    def flush(self) -> str:
        """What is held at the end: not a marker after all."""
        rest, self._held = self._held, ""
        return rest
