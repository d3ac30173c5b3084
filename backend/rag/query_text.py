"""What a search reads of a question: its words, without the decoration a chat message may carry.

A citation marker the user pasted ("[S9]"), Markdown emphasis and emoji say nothing a passage could match, but they
move the question's embedding: "<script>alert(1)</script> **bold** [S9] what is the notice period? 🙂" fell just
under the relevance floor and found no passage, while the question without them was answered (tester). A tag's
angle brackets go and its name stays ("What does <br> do?" searches "br"); symbols other than emoji stay
("20°C", "x^2", "C#"), and so do a word's own underscores and tildes ("__init__.py", "~/.bashrc").
"""

import re

from backend.contract.citations import CITATION_RE

_TAG = re.compile(r"<(/?[A-Za-z][\w-]*)((?:\s[^<>]{0,200})?)/?>")
_EMPHASIS = re.compile(r"(?<![\w*])(\*{1,2})(?=\S)(.+?)(?<=\S)\1(?![\w*])")  # **bold**, *word*: the words stay
# emoji: pictographs, dingbats and the like, with their variation selector, joiner and skin tones
_EMOJI = re.compile("[\U0001f000-\U0001faff\u2600-\u27bf\u2b00-\u2bff\ufe0f\u200d]")


def search_text(question: str) -> str:
    """The question's words for searching, or the question itself when nothing else is left."""
    text = _TAG.sub(lambda m: f" {m.group(1).lstrip('/')} {m.group(2)} ", CITATION_RE.sub(" ", question))
    text = _EMOJI.sub(" ", _EMPHASIS.sub(r"\2", text))
    return " ".join(text.split()) or question
