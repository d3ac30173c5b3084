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


def test_the_checks_notes_are_told_from_sentences_that_only_open_like_them():
    from backend.contract.text import CONFLICT_NOTE, PART_NOT_COVERED
    from backend.guardrails.text import is_check_note, split_notes

    conflict = f"{CONFLICT_NOTE}rules.txt says: “Mileage is 0.42 euros per kilometre.” [S2]"
    part = f"{PART_NOT_COVERED}“how often must they be changed?”"
    assert is_check_note(conflict) and is_check_note(part) and is_check_note(CONFLICT_NOTE)
    assert not is_check_note(f"{PART_NOT_COVERED}Paris has 2 million people.")
    assert not is_check_note(f"{CONFLICT_NOTE}It is 0.42 euros.")
    assert split_notes(f"Body [S1].\n\n{part}\n\n{conflict}\n\n") == ("Body [S1].", [part, conflict])
    assert split_notes(f"Body [S1].\n\n{conflict}\n\n{conflict}", 1) == (f"Body [S1].\n\n{conflict}", [conflict])
    assert split_notes(conflict) == (conflict, [])  # a note alone is no answer with a note


def test_a_code_fence_left_open_is_closed_before_a_note():
    from backend.guardrails.text import closed_fence

    assert closed_fence("Run:\n```bash\nmake") == "Run:\n```bash\nmake\n```"
    assert closed_fence("Run:\n```\nmake\n```") == "Run:\n```\nmake\n```"
