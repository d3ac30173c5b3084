"""backend/contract/vectors.json against the Python functions; frontend/tests/unit/contract-vectors.test.ts checks the
UI's functions against the same file."""

import json
import re
from pathlib import Path

import pytest

from backend.contract.citations import CITATION_PATTERN, cited_ids
from backend.contract.text import MENTION_PATTERN, TITLE_CHARS, mentions, title_from

VECTORS = json.loads((Path(__file__).resolve().parents[1] / "contract" / "vectors.json").read_text(encoding="utf-8"))


def _id(text: str) -> str:
    return text[:40] or "(empty)"


@pytest.mark.parametrize("case", VECTORS["citations"], ids=lambda c: _id(c["text"]))
def test_cited_ids(case):
    assert cited_ids(case["text"]) == case["cited"]


@pytest.mark.parametrize("case", VECTORS["mentions"], ids=lambda c: _id(c["text"]))
def test_mentions(case):
    assert mentions(case["text"]) == case["names"]


def test_title_vectors_are_written_for_this_title_length():
    assert VECTORS["title_chars"] == TITLE_CHARS, "TITLE_CHARS changed: update the titles in vectors.json"


@pytest.mark.parametrize("case", VECTORS["titles"], ids=lambda c: _id(c["question"]))
def test_title_from(case):
    assert title_from(case["question"]) == case["title"]


@pytest.mark.parametrize("pattern", [CITATION_PATTERN, MENTION_PATTERN], ids=["citation", "mention"])
def test_patterns_mean_the_same_in_javascript(pattern):
    # the UI compiles these patterns too: \d, \w and \b are Unicode in Python's str patterns but ASCII in JavaScript,
    # and named groups (?P<…>) and inline flags (?i) are Python only. (\s differs only on U+001C-U+001F, U+0085 and
    # U+FEFF, which the vectors leave out.)
    assert not re.search(r"\\[dDwWbB]|\(\?P[<=]|\(\?[aiLmsux-]+[:)]", pattern)


@pytest.mark.parametrize("case", VECTORS["check_notes"], ids=lambda c: _id(c["answer"]))
def test_split_notes(case):
    from backend.guardrails.text import split_notes

    assert split_notes(case["answer"]) == (case["body"], case["notes"])
