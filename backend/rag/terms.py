"""The content words of a text for keyword search: its distinct lower-cased words less the stopwords, and the
FTS5 query made of them. The stopwords also keep common words out of the speller's vocabulary (rag/spelling.py)."""

import re

STOPWORDS = frozenset(
    (
        "a",
        "an",
        "and",
        "are",
        "as",
        "at",
        "be",
        "but",
        "by",
        "can",
        "do",
        "does",
        "for",
        "from",
        "has",
        "have",
        "how",
        "i",
        "if",
        "in",
        "into",
        "is",
        "it",
        "its",
        "me",
        "my",
        "of",
        "on",
        "or",
        "our",
        "should",
        "so",
        "than",
        "that",
        "the",
        "their",
        "them",
        "then",
        "there",
        "these",
        "they",
        "this",
        "to",
        "was",
        "we",
        "were",
        "what",
        "when",
        "where",
        "which",
        "who",
        "why",
        "will",
        "with",
        "would",
        "you",
        "your",
        "about",
        "any",
        "all",
        "also",
    )
)
_TERM_RE = re.compile(r"\w+", re.UNICODE)


def content_terms(text: str) -> list[str]:
    """The text's distinct lower-cased words that are not stopwords, in order."""
    return [t for t in dict.fromkeys(w.lower() for w in _TERM_RE.findall(text)) if t not in STOPWORDS]


def fts_query(text: str) -> str | None:
    """An FTS5 OR-query of the text's content words (quoted, so user text can never be FTS syntax)."""
    return " OR ".join(f'"{t}"' for t in content_terms(text)) or None
