"""Text formats every layer and the UI agree on: titles, snippets, @mentions, ids in URLs."""

import re
import unicodedata

from backend.contract.citations import CITATION_RE

TITLE_CHARS = 60  # a thread title made from its first question
# The paragraphs the checks may end a kept answer with (graph/nodes/validate_sources): the parts of the question it
# leaves, and another document's different figure (guardrails/conflicts). They are the checks' words, not claims of
# the answer; the UI sets them apart.
PART_NOT_FOUND = "I could not find the answer to the rest of the question in the documents: "
PART_NOT_COVERED = "This answer does not cover the rest of the question: "
CONFLICT_NOTE = "Another document gives a different figure for something similar; check which applies. "
CHECK_NOTES = (PART_NOT_FOUND, PART_NOT_COVERED, CONFLICT_NOTE)
SNIPPET_CHARS = 240  # a source's preview text
SHOWN_CHARS = 80  # of an id or a name an error repeats: a 3,000-character thread id came back whole (tester)
# @name or @"name with spaces"; a bare name ends before trailing punctuation. Valid in Python and JavaScript.
MENTION_PATTERN = r"""(?<![A-Za-z0-9_@])@(?:"([^"]+)"|([^\s"'@,;!?()]*[^\s"'@,;!?().:]))"""
MENTION_RE = re.compile(MENTION_PATTERN)
# a thread id the client may choose: it must survive a round trip through a URL path, so not "." or ".."
THREAD_ID_PATTERN = (
    r"^(?:[A-Za-z0-9_:\-][A-Za-z0-9_.:\-]{0,127}"
    r"|\.[A-Za-z0-9_:\-][A-Za-z0-9_.:\-]{0,126}"
    r"|\.\.[A-Za-z0-9_.:\-]{1,126})$"
)
THREAD_ID_RULE = "1 to 128 ASCII letters, digits and _ . : - (not '.' or '..')"  # THREAD_ID_PATTERN in words

# characters that show nothing but are not whitespace: zero-width and format characters, fillers (Hangul), the
# blank Braille pattern; a title of only these was an invisible row in the sidebar (tester). Python, Rust and JS read
# the \uXXXX escapes alike.
INVISIBLE = (
    r"\u00ad\u034f\u115f\u1160\u17b4\u17b5\u180e\u200b-\u200f\u202a-\u202e\u2060-\u206f"
    r"\u2800\u3164\ufe00-\ufe0f\ufeff\uffa0"
)
# characters that reorder the text around them (bidi embeddings, overrides, isolates): "\u202eevil" shows as "live"
BIDI_CONTROLS = r"\u202a-\u202e\u2066-\u2069"
# a name or a title: one line without control characters, not blank nor invisible (the optional form may be blank,
# which means none, but not invisible: a display name of zero-width spaces was a blank row in the user list)
NAME_PATTERN = rf"^[^\x00-\x1f\x7f{BIDI_CONTROLS}]*[^\s\x00-\x1f\x7f{INVISIBLE}][^\x00-\x1f\x7f{BIDI_CONTROLS}]*$"
OPTIONAL_NAME_PATTERN = rf"^(?:[^\S\x00-\x1f\x7f]*|{NAME_PATTERN[1:-1]})$"


def word_set(text: str) -> frozenset[str]:
    """The whitespace-separated words of a string, as a set (for word-list constants)."""
    return frozenset(text.split())


def title_from(question: str) -> str:
    """A thread title from its first question: one line, at most TITLE_CHARS characters."""
    flat = " ".join(question.split())
    return flat if len(flat) <= TITLE_CHARS else flat[: TITLE_CHARS - 1].rstrip() + "…"


def shown(value: str) -> str:
    """An id or a name as an error message repeats it: quoted, and cut after SHOWN_CHARS characters."""
    return repr(value if len(value) <= SHOWN_CHARS else f"{value[:SHOWN_CHARS]}…")


def snippet(text: str) -> str:
    """First SNIPPET_CHARS characters of a passage, cut at a word boundary."""
    flat = " ".join(text.split())
    if len(flat) <= SNIPPET_CHARS:
        return flat
    return flat[:SNIPPET_CHARS].rsplit(" ", 1)[0] + "…"


def mentions(text: str) -> list[str]:
    """Document names written as @name or @"name with spaces", in order, without duplicates."""
    found = [quoted or bare for quoted, bare in MENTION_RE.findall(text)]
    return list(dict.fromkeys(found))


def strip_mentions(text: str) -> str:
    """The text without @mentions, whitespace collapsed (the text itself when nothing else is left)."""
    return " ".join(MENTION_RE.sub(" ", text).split()) or text


DETERMINERS = "the|our|your|this|that|my"  # before a one-word document name said in plain words ("the handbook")


def fold_name(name: str) -> str:
    """A name as names are told apart: composed (NFC, as uploads are stored; "é" typed as e + accent too) and in
    lower case. Document, collection and group names are unique under it (store/database.same_name)."""
    return unicodedata.normalize("NFC", name).lower()


def name_key(name: str) -> str:
    """A name as compared: lower-case words of letters and digits without accents, single-spaced ("Travel_Policy":
    "travel policy", "Résumé équipe": "resume equipe"; before, letters outside a-z were dropped: "r sum quipe")."""
    bare = "".join(ch for ch in unicodedata.normalize("NFKD", name) if not unicodedata.combining(ch))
    return " ".join(re.sub(r"[\W_]+", " ", bare.lower()).split())


def name_stem(name: str) -> str:
    """A document name's key without its extension ("travel-policy.pdf" -> "travel policy")."""
    return name_key(name.rsplit(".", 1)[0]) if "." in name else name_key(name)


HEADING_MIN_WORDS = 2  # content words a heading needs to count as named: "First day", not "Probation" or "Purpose"
_NOTE = re.compile(r"\s*\([^()]*\)\s*$")  # a search text's note: "… (Zephyr-9)", "… (asked after: …)"


def without_note(query: str) -> str:
    """A search text without its trailing note: "What about taxis? (asked after: …)" -> "What about taxis?"."""
    return _NOTE.sub("", query)


def names_heading(question: str, heading: str | None, document: str = "") -> bool:
    """Whether the question (without a search text's trailing note) uses every content word of a section heading of
    HEADING_MIN_WORDS or more, other than the document's own title ("Onboarding Checklist" of
    onboarding-checklist.docx): "What should I do on my first day?" names the checklist's "First day"."""
    words = content_words(heading or "")
    if len(words) < HEADING_MIN_WORDS or (document and words <= content_words(name_stem(document))):
        return False
    return words <= content_words(without_note(question))


def named_documents(question: str, names: list[str]) -> list[str]:
    """Documents a question names in plain words, without an @: its whole name ("the travel policy" for
    travel-policy.pdf) or the end of it that no other document's name ends with ("the handbook" for
    employee-handbook.md, not "the policy" when two policies exist); a one-word name or end only after a determiner.
    In the order the question names them."""
    text = f" {name_key(question)} "
    ends: dict[str, list[str]] = {}
    for name in names:
        words = name_stem(name).split()
        for i in range(len(words)):
            ends.setdefault(" ".join(words[i:]), []).append(name)
    found: dict[str, int] = {}
    for phrase, owners in ends.items():
        whole = phrase == name_stem(owners[0])
        # one word counts after a determiner only ("the manual", not "a manual reset"; "the faq", not "it must")
        pattern = f" {phrase} " if " " in phrase else f" (?:{DETERMINERS}) {phrase} "
        at = re.search(pattern, text)
        if len(owners) == 1 and at and (whole or len(phrase) >= 4):
            found[owners[0]] = min(at.start(), found.get(owners[0], at.start()))
    return sorted(found, key=found.__getitem__)


# Words a question or an answer is about, for comparing texts by what they say (grounding, follow-ups, the FAQ).
_STOP = word_set(
    "a an the and or but of to in on at for with by from as is are was were be been being it its this "
    "that these those there here you your i we our they their he she his her them can could would should "
    "will shall may might must do does did not no yes if then than so such also only just about into over "
    "under per each any all some which what who whom when where why how"
)
_CONTENT = re.compile(r"[a-z][a-z0-9'-]*[a-z0-9]|[a-z]")


def stem(word: str) -> str:
    """Strip one -ing/-ed/-s ending, then a final e, from long enough words (service, serviced -> servic)."""
    for suffix in ("ing", "ed", "s"):
        if len(word) - len(suffix) >= 3 and word.endswith(suffix) and not word.endswith("ss"):
            word = word[: -len(suffix)]
            break
    return word[:-1] if len(word) > 3 and word.endswith("e") else word


def content_words(text: str) -> set[str]:
    """Stemmed lower-case words without stop words or citation markers."""
    return {stem(w) for w in typed_content_words(text)}


def typed_content_words(text: str) -> list[str]:
    """The lower-case words of content_words() as written (not stemmed), in order."""
    text = CITATION_RE.sub(" ", text).lower().replace("\u2019", "'")
    return [w for w in _CONTENT.findall(text) if w not in _STOP]
