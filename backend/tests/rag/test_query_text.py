"""What a search reads of a question: decoration out, words in."""

import pytest

from backend.rag.query_text import search_text


@pytest.mark.parametrize(
    ("question", "searched"),
    [
        (
            "<script>alert(1)</script> **bold** [S9] what is the notice period? 🙂",
            "alert(1) bold what is the notice period?",
        ),
        ("What is the *hotel* limit per night? [S1, S2]", "What is the hotel limit per night?"),
        ("Is the café open? ☕️", "Is the café open?"),
        ("what does RAG_DATA_DIR do?", "what does RAG_DATA_DIR do?"),  # a word's own underscores stay
        ("C++ or C#?", "C++ or C#?"),
        ("👍", "👍"),  # nothing else left: searched as typed
    ],
)
def test_decoration_is_dropped_and_words_are_kept(question, searched):
    assert search_text(question) == searched
