"""Spelling: a question's misspelt words read as the documents spell them, before it is searched.

"how mny dayz of anual leeve do i get" found no passage: MiniLM put it far from every chunk (0.77), BM25 found none
of its words, and the router sent it to chat, whose model said "The documents do not say" (tester). A word is
respelt only when
- it is not in the documents, nor a whole word of the MiniLM tokenizer's English vocabulary (about 21,700 words:
  "timer" is not made "time", "louvre" stays), nor one of those with an ending added ("handlers", "restated"),
  nor a stopword;
- it has four letters or more, all ASCII (a French "congé" is left alone), and is not capitalised inside a
  sentence (a name the user means: "Who is Pietra?" is not the documents' "Pietro"), and
- a word of the documents of the same first letter is one edit away (a swap of two neighbouring letters is one
  edit), the most frequent of them kept.
A question most of whose words are neither English nor the documents' ("Combien de jours de congé annuel ai-je ?")
is `foreign` (three such words at least): the offline MiniLM reads English only, so it is searched by an English
translation (graph/nodes/rewriter.py).

Two edits respelt real words into others on SQuAD's tune questions ("qualitative" → "quantitative", "restated" →
"related", "calculator" → "calculated"); one edit still mends "comninatorial" and "anual leeve".
The vocabulary is the active documents' words, counted once per document version; for a reader limited to some
documents (accounts), a respelling or a term is kept only when a document they may read holds the word, and a
question is foreign by English words alone, so nothing names or turns on a word of a document they cannot see.
"""

import json
import re
import threading
import unicodedata
from array import array
from collections import Counter, defaultdict
from collections.abc import Callable, Container, Iterable
from pathlib import Path

from backend.rag.terms import STOPWORDS

MIN_LETTERS = 4
EDITS = 1
# endings an English word may carry beyond its dictionary form: such a word is no misspelling of another
_ENDINGS = re.compile(r"(?:s|es|ed|d|ing|er|ers|or|ors|ly|al|ally|ness|ment|ments|able|ation|ations|ity|ize|izes)$")
_WORD = re.compile(r"(?<![\w-])[^\W\d_]+(?![\w-])")  # letters, not part of a code ("Zephyr-9"), path or identifier
# a code: letters and digits in one token, perhaps joined by hyphens ("Zephyr-9", "E4", "R-410A", "ISO-9001")
_CODE = re.compile(r"(?<![\w-])(?=[\w-]*\d)(?=[\w-]*[^\W\d_])[^\W_]+(?:-[^\W_]+)*(?![\w-])")
UNSPACED = 0x2E80  # CJK and later scripts: a "word" may be a whole question
FOREIGN_SHARE = 0.5
FOREIGN_MIN_WORDS = 3  # a question is foreign when fewer than half its words are English or the documents'
NAMES_SLACK, NAMES_FLOOR = 2, 1024  # words numbered beyond twice those counted (and 1,024) are renumbered


def english_words(tokenizer_json: Path) -> frozenset[str]:
    """The whole, alphabetic words of a WordPiece tokenizer's vocabulary; empty when the file is missing."""
    try:
        vocab = json.loads(tokenizer_json.read_text())["model"]["vocab"]
    except (OSError, ValueError, KeyError):
        return frozenset()
    return frozenset(t for t in vocab if t.isascii() and t.isalpha())


def edits_within(a: str, b: str, limit: int) -> int | None:
    """Edit distance (insert, delete, substitute, swap of neighbours) when at most `limit`, else None."""
    if abs(len(a) - len(b)) > limit:
        return None
    before: list[int] = []
    row = list(range(len(b) + 1))
    for i in range(1, len(a) + 1):
        current = [i] + [0] * len(b)
        for j in range(1, len(b) + 1):
            cost = a[i - 1] != b[j - 1]
            current[j] = min(row[j] + 1, current[j - 1] + 1, row[j - 1] + cost)
            if i > 1 and j > 1 and a[i - 1] == b[j - 2] and a[i - 2] == b[j - 1]:
                current[j] = min(current[j], before[j - 2] + 1)
        if min(current) > limit:
            return None
        before, row = row, current
    return row[-1] if row[-1] <= limit else None


class Vocabulary:
    """The documents' words with their counts, bucketed by first letter and length for lookup, and their codes."""

    def __init__(self, counts: Counter[str], codes: frozenset[str] = frozenset()) -> None:
        self.counts, self.codes = counts, codes
        self._buckets: dict[tuple[str, int], list[str]] = defaultdict(list)
        for word in counts:
            self._buckets[(word[0], len(word))].append(word)

    def holds(self, word: str) -> bool:
        """Whether the documents use the word, or it with an ending added."""
        return word in self.counts or _inflected(word, self.counts)

    def nearest(self, word: str, limit: int = EDITS) -> str | None:
        """The most frequent document word nearest to `word` within `limit` edits, if any."""
        best: tuple[int, int, str] | None = None
        for length in range(len(word) - limit, len(word) + limit + 1):
            for candidate in self._buckets.get((word[0], length), ()):
                if (d := edits_within(word, candidate, limit)) is not None:
                    key = (d, -self.counts[candidate], candidate)
                    best = key if best is None or key < best else best
        return best[2] if best else None


def count_words(texts: Iterable[str]) -> tuple[Counter[str], Counter[str]]:
    """The texts' words (lower case, three letters or more, not stopwords) and codes, with their counts."""
    words: Counter[str] = Counter()
    codes: Counter[str] = Counter()
    for text in texts:
        words.update(w for w in (m.lower() for m in _WORD.findall(text)) if len(w) >= 3 and w not in STOPWORDS)
        codes.update(m.lower() for m in _CODE.findall(text))
    return words, codes


# the documents' texts, for the document ids asked: (document id, version, text) of each of their active chunks
ReadTexts = Callable[[list[str]], Iterable[tuple[str, int, str]]]
Versions = dict[str, int]  # the active version of each document, by id


class Speller:
    """Respells questions against the documents' vocabulary, rebuilt when the documents change."""

    def __init__(self, known: frozenset[str]) -> None:
        self.known = known
        self._lock = threading.Lock()
        self._vocabulary: tuple[Versions, Vocabulary] | None = None
        # each document version's word and code counts, and their sums: a change of the documents reads and counts
        # the changed documents only (a whole re-read cost about 0.25 s per MB of text after every upload). A
        # version's counts are kept packed, (word id, count) pairs of the words numbered in `_names`: as Counters
        # they took 12 times the memory of the sums (review: 18 MB for 5 MB of text).
        self._counted: dict[tuple[str, int], tuple[array, array]] = {}
        self._ids: dict[str, int] = {}
        self._names: list[str] = []
        self._words: Counter[str] = Counter()
        self._codes: Counter[str] = Counter()

    def fixes(
        self,
        text: str,
        versions: Versions,
        read_texts: ReadTexts,
        readable: Callable[[str], bool] | None = None,
    ) -> dict[str, str]:
        """Misspelt word (lower case) -> the documents' word. `versions` are the documents' active versions by id;
        `read_texts` gives the texts of the documents whose version was not read yet; `readable` says whether a
        document the reader may read holds a word (None: the reader reads every document)."""
        if not self.known:
            return {}  # without an English vocabulary every word not in the documents would look misspelt
        text = unicodedata.normalize("NFC", text)  # one text: `_named` reads it at the match's position
        asked = {m[0].lower() for m in _WORD.finditer(text) if not _named(text, m)}
        unknown = [w for w in asked if w.isascii() and self._unfamiliar(w)]
        if not unknown:
            return {}
        vocabulary = self._current(versions, read_texts)
        fixes = {}
        for word in unknown:
            if vocabulary.holds(word):
                continue
            right = vocabulary.nearest(word)
            if right and not _inflected(right, {word}) and (readable is None or readable(right)):  # not "summarises"
                fixes[word] = right
        return fixes

    def foreign(self, text: str, versions: Versions, read_texts: ReadTexts, documents_words: bool = True) -> bool:
        """Whether fewer than half the text's words (of three letters or more; three such words at least, or one of
        a script written without spaces: "年假有多少天？") are English words or, with `documents_words`, words of
        the documents (a German question to German documents is not foreign). Two words are too few to tell: "What
        is ChatGPT?" and "Explain Terraform" are English (review)."""
        if not self.known:
            return False
        words = [w.lower() for w in _WORD.findall(unicodedata.normalize("NFC", text)) if len(w) >= 3]
        if len(words) < FOREIGN_MIN_WORDS and not any(ord(c) >= UNSPACED for w in words for c in w):
            return False
        documents = self._current(versions, read_texts) if documents_words else Vocabulary(Counter())
        ours = [w for w in words if w in STOPWORDS or self._english(w) or documents.holds(w)]
        return len(ours) < FOREIGN_SHARE * len(words)

    def terms(
        self,
        text: str,
        versions: Versions,
        read_texts: ReadTexts,
        readable: Callable[[str], bool] | None = None,
    ) -> list[str]:
        """The text's words and codes, as typed, that the documents use and English does not: a code ("Zephyr-9",
        "R-410A") or a word of four letters or more ("Lindenhof"); for a reader of some documents only, those a
        document they may read holds (`readable`)."""
        if not self.known:
            return []
        vocabulary = self._current(versions, read_texts)
        codes = [c for c in _CODE.findall(text) if c.lower() in vocabulary.codes]
        words = [w for w in _WORD.findall(text) if self._unfamiliar(low := w.lower()) and low in vocabulary.counts]
        return [t for t in dict.fromkeys(codes + words) if readable is None or readable(t)]

    def _unfamiliar(self, word: str) -> bool:
        """A lower-case word long enough to judge that is neither a stopword nor English."""
        return len(word) >= MIN_LETTERS and word not in STOPWORDS and not self._english(word)

    def _english(self, word: str) -> bool:
        return word in self.known or _inflected(word, self.known)

    def _current(self, versions: Versions, read_texts: ReadTexts) -> Vocabulary:
        """The vocabulary of the documents at `versions`: the document versions not counted yet are read and
        counted outside the lock (other turns are not held up meanwhile), then added to the sums, and those no
        longer at `versions` taken off them. Counts are kept by the version the texts were read at, and the
        vocabulary is remembered for `versions` only when it holds every one of them: a document changed during the
        read, or a turn that read an older state meanwhile, leaves it to the next question to count again."""
        with self._lock:
            if self._vocabulary is not None and self._vocabulary[0] == versions:
                return self._vocabulary[1]
            missing = [doc_id for doc_id, version in versions.items() if (doc_id, version) not in self._counted]
        texts: dict[tuple[str, int], list[str]] = defaultdict(list)
        for doc_id, version, text in read_texts(missing) if missing else ():
            texts[(doc_id, version)].append(text)
        read = {doc_id for doc_id, _ in texts}
        for doc_id in missing:
            if doc_id not in read:  # no chunk (deleted meanwhile; uploads without text are refused): counted empty
                texts[(doc_id, versions[doc_id])] = []
        counted = {key: count_words(chunks) for key, chunks in texts.items()}
        with self._lock:
            for key, (words, codes) in counted.items():
                if key not in self._counted:  # another turn may have counted it meanwhile
                    self._counted[key] = (self._packed(words), self._packed(codes))
                    self._words.update(words)
                    self._codes.update(codes)
            for key in [k for k in self._counted if versions.get(k[0]) != k[1]]:
                words_packed, codes_packed = self._counted.pop(key)
                self._take_off(self._words, words_packed)
                self._take_off(self._codes, codes_packed)
            if len(self._names) > NAMES_SLACK * (len(self._words) + len(self._codes)) + NAMES_FLOOR:
                self._renumber()
            vocabulary = Vocabulary(Counter(self._words), frozenset(self._codes))
            if all(key in self._counted for key in versions.items()):
                self._vocabulary = (dict(versions), vocabulary)
        return vocabulary

    def _packed(self, counts: Counter[str]) -> array:
        """(word id, count) pairs, numbering new words (under the lock)."""
        packed = array("I")
        for word, n in counts.items():
            if (number := self._ids.get(word)) is None:
                number = self._ids[word] = len(self._names)
                self._names.append(word)
            packed.extend((number, n))
        return packed

    def _renumber(self) -> None:
        """Number only the words some counted version still holds (under the lock): words of versions taken off
        stayed numbered, and documents that change often would grow the table without end (review)."""
        names, self._ids, self._names = self._names, {}, []

        def renumbered(packed: array) -> array:
            return self._packed(Counter({names[packed[k]]: packed[k + 1] for k in range(0, len(packed), 2)}))

        self._counted = {key: (renumbered(w), renumbered(c)) for key, (w, c) in self._counted.items()}

    def _take_off(self, total: Counter[str], packed: array) -> None:
        """Subtract packed counts from a total, dropping what reaches zero (under the lock)."""
        for k in range(0, len(packed), 2):
            word = self._names[packed[k]]
            if (left := total[word] - packed[k + 1]) > 0:
                total[word] = left
            else:
                del total[word]


def _inflected(word: str, words: Container[str]) -> bool:
    """Whether the word is one of `words` with an ending added ("handlers", "restated", "analyzes")."""
    stem = _ENDINGS.sub("", word)
    if stem == word or len(stem) < 3:
        return False
    undoubled = stem[:-1] if stem[-1] == stem[-2] else stem  # "running" -> "runn" -> "run"
    return any(form in words for form in (stem, stem + "e", undoubled))


def _named(text: str, match: re.Match[str]) -> bool:
    """Whether the word is capitalised inside a sentence: a name the user means ("Who is Pietra?" must not become
    the documents' "Pietro"; review)."""
    before = text[: match.start()].rstrip()
    return match[0][:1].isupper() and bool(before) and before[-1] not in ".!?:¿¡\"'(«"


def respelt(text: str, fixes: dict[str, str]) -> str:
    """The text with each misspelt word replaced by its fix, capitalised as the word was."""
    if not fixes:
        return text

    def fix(m: re.Match[str]) -> str:
        right = fixes.get(m[0].lower())
        return m[0] if right is None else right.capitalize() if m[0][:1].isupper() else right

    return _WORD.sub(fix, unicodedata.normalize("NFC", text))
