"""What a search reads of a question: decoration out, words in."""

import pytest

from backend.rag.query_text import search_text


@pytest.mark.parametrize(
    ("question", "searched"),
    [
        (
            "<script>alert(1)</script> **bold** [S9] what is the notice period? 🙂",
            "script alert(1) script bold what is the notice period?",
        ),
        ("What is the *hotel* limit per night? [S1, S2]", "What is the hotel limit per night?"),
        ("Is the café open? ☕️", "Is the café open?"),
        ("👩\u200d💻 how do I set up the VPN?", "how do I set up the VPN?"),
        ("👍", "👍"),  # nothing else left: searched as typed
    ],
)
def test_decoration_is_dropped(question, searched):
    assert search_text(question) == searched


@pytest.mark.parametrize(
    ("question", "searched"),
    [
        ("What does <br> do?", "What does br do?"),  # a tag's name is a word of the question
        ("Is List<int> allowed in C#?", "Is List int allowed in C#?"),
        ("what does RAG_DATA_DIR do?", "what does RAG_DATA_DIR do?"),
        ("what is __init__.py for?", "what is __init__.py for?"),
        ("where is ~/.bashrc?", "where is ~/.bashrc?"),
        ("is 2 ** 10 the limit?", "is 2 ** 10 the limit?"),
        ("above 20°C or x^2?", "above 20°C or x^2?"),
        ("C++ or C#?", "C++ or C#?"),
    ],
)
def test_what_technical_questions_type_is_kept(question, searched):
    assert search_text(question) == searched
