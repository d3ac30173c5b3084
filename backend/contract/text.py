"""Text formats every layer and the UI agree on: titles, snippets, @mentions, ids in URLs."""

import re

TITLE_CHARS = 60  # a thread title made from its first question
SNIPPET_CHARS = 240  # a source's preview text
# @name or @"name with spaces"; a bare name ends before trailing punctuation. Valid in Python and JavaScript.
MENTION_PATTERN = r"""(?<![A-Za-z0-9_@])@(?:"([^"]+)"|([^\s"'@,;!?()]*[^\s"'@,;!?().:]))"""
MENTION_RE = re.compile(MENTION_PATTERN)
# a thread id the client may choose: it must survive a round trip through a URL path, so not "." or ".."
THREAD_ID_PATTERN = (
    r"^(?:[A-Za-z0-9_:\-][A-Za-z0-9_.:\-]{0,127}"
    r"|\.[A-Za-z0-9_:\-][A-Za-z0-9_.:\-]{0,126}"
    r"|\.\.[A-Za-z0-9_.:\-]{1,126})$"
)

# a name or a title: one line without control characters, not blank (the optional form may be empty)
NAME_PATTERN = r"^[^\x00-\x1f\x7f]*[^\s\x00-\x1f\x7f][^\x00-\x1f\x7f]*$"
OPTIONAL_NAME_PATTERN = r"^[^\x00-\x1f\x7f]*$"


def title_from(question: str) -> str:
    """A thread title from its first question: one line, at most TITLE_CHARS characters."""
    flat = " ".join(question.split())
    return flat if len(flat) <= TITLE_CHARS else flat[: TITLE_CHARS - 1].rstrip() + "…"


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
