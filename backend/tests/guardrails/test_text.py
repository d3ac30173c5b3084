"""Sentence and code splitting shared by the tone and grounding validators."""

from backend.contract.text import content_words
from backend.guardrails.text import citations, numbers, split_code, split_sentences


def test_split_sentences_keeps_citations_and_ignores_abbreviations_and_numbering() -> None:
    line = "1. Request the trip, e.g. via the app. It costs 2.5 euros [S1]. Done? Yes [S2] [S3]."
    assert split_sentences(line) == [
        "1. Request the trip, e.g. via the app.",
        "It costs 2.5 euros [S1].",
        "Done?",
        "Yes [S2] [S3].",
    ]


def test_split_code_marks_fenced_blocks() -> None:
    pieces = split_code("Intro.\n```\ncode. more?\n```\nOutro.")
    assert pieces == [("Intro.\n", False), ("```\ncode. more?\n```\n", True), ("Outro.", False)]


def test_words_numbers_and_citations() -> None:
    assert citations("Two months [S1], see [S12].") == ["S1", "S12"]
    assert numbers("1,500 euros at 10:00 on 2.5 days [S3]") == {"1500", "10:00", "2.5"}
    assert content_words("The services were serviced [S1]") == {"servic"}
