"""The fast pattern reader: folded text and literal gates must answer exactly as re.IGNORECASE does."""

import re

import pytest

from backend.guardrails.caseless import Caseless, fold, required_factors, top_alternatives
from backend.guardrails.injection_patterns import all_patterns
from backend.tests.guardrails.test_injection import (
    ATTACKS,
    BENIGN,
    EXTRACTION_NEAR_MISSES,
    RULE_ATTACKS,
)

PATTERNS = all_patterns()


def test_required_factors_are_the_words_every_match_contains() -> None:
    assert required_factors(r"\b(ignore|disregard)\s+(all|the)\s+rules\b") == ("disregard", "ignore")
    assert required_factors(r"\bos\.system\(") == ("os.system(",)
    # re's parser takes the common "d" out of "drop|ditch": what is left is still in every match
    assert required_factors(r"\b(?=(drop|ditch)\b)(?<!do i )(drop|ditch)\b") == ("itch", "rop")
    assert required_factors(r"a+bcd(e|f)") == ("bcd",)  # the longest guaranteed run
    # nothing guaranteed: an optional word, a class, or an alternative with no literal of 3 characters
    assert required_factors(r"(please )?[a-z]+") is None
    assert required_factors(r"\b(as|i'm)\b") is None
    assert required_factors(r"ignore|\w+") is None
    assert required_factors(r"ignore|\w+ing") == ("ignore", "ing")


def test_top_alternatives_split_only_outside_groups_classes_and_escapes() -> None:
    assert top_alternatives(r"a(b|c)|[|x]|d\|e|f") == ["a(b|c)", "[|x]", r"d\|e", "f"]
    assert top_alternatives(r"[]|]|[^]|]") == ["[]|]", "[^]|]"]


def test_alternatives_that_do_not_stand_alone_are_read_whole() -> None:
    backreference = Caseless(r"(ab)c|x\1")  # the second alternative refers to the first's group
    assert backreference.alternatives == []
    assert backreference.found("ABC", fold("ABC")) and not backreference.found("xab", fold("xab"))


def test_pattern_with_capitals_keeps_ignorecase_on_the_text_as_written() -> None:
    dan = Caseless(r"(?-i:\bDAN mode\b)")
    assert not dan.folded and dan.found("Enable DAN mode now", fold("Enable DAN mode now"))
    assert not dan.found("isi dan mode blob", fold("isi dan mode blob"))


def _variants(text: str) -> list[str]:
    return [text, text.upper(), text.title(), text.replace("i", "İ").replace("I", "İ")]


@pytest.mark.parametrize("pattern", PATTERNS)
def test_every_rule_answers_as_ignorecase_does(pattern: str) -> None:
    """Each rule of the injection tables, on the test sentences in four casings (upper case, title case, Turkish
    dotted capitals): found() and search() agree with the plain case-insensitive regex."""
    reference = re.compile(pattern, re.IGNORECASE | re.MULTILINE)
    caseless = Caseless(pattern)
    for sentence in ATTACKS + RULE_ATTACKS + BENIGN + EXTRACTION_NEAR_MISSES:
        for text in _variants(sentence):
            expected = reference.search(text) is not None
            assert caseless.found(text, fold(text)) == expected, text
            assert (caseless.search(text, fold(text)) is not None) == expected, text
