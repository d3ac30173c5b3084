"""What a search reads of a question: its words, without the decoration a chat message may carry.

A citation marker the user pasted ("[S9]"), HTML tags, Markdown emphasis and emoji say nothing a passage could
match, but they move the question's embedding: "<script>alert(1)</script> **bold** [S9] what is the notice period?
🙂" fell just under the relevance floor and found no passage, while the question without them was answered
(tester). The words inside tags stay ("alert(1)"); a word's own underscores stay ("RAG_DATA_DIR").
"""

import re
import unicodedata

from backend.contract.citations import CITATION_RE

_TAG = re.compile(r"</?[A-Za-z][^<>]{0,200}>")
_EMPHASIS = re.compile(r"(?<![\w*_~`])[*_~`]+|[*_~`]+(?![\w*_~`])")
_SYMBOLS = {"So", "Sk", "Cs", "Co"}  # emoji and other symbols, surrogates, private use


def search_text(question: str) -> str:
    """The question's words for searching, or the question itself when nothing else is left."""
    text = _EMPHASIS.sub(" ", _TAG.sub(" ", CITATION_RE.sub(" ", question)))
    text = "".join(" " if unicodedata.category(ch) in _SYMBOLS or ch == "\ufe0f" else ch for ch in text)
    return " ".join(text.split()) or question
