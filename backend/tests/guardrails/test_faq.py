"""FAQ: the curated file loads; near-verbatim questions match, related-but-different ones do not."""

from pathlib import Path

import pytest

from backend.guardrails.faq import load_faq, match_faq, parse_faq

FAQ_FILE = Path(__file__).resolve().parents[3] / "data" / "faq.yaml"


@pytest.fixture(scope="module")
def faq():
    return load_faq(FAQ_FILE)


def test_curated_faq_has_10_to_15_entries_with_sources_from_the_corpus(faq) -> None:
    documents = {p.name for p in FAQ_FILE.parent.joinpath("documents").iterdir()}
    assert 10 <= len(faq) <= 15
    assert len({e.id for e in faq}) == len(faq)
    for entry in faq:
        assert entry.questions and entry.answer and set(entry.sources) <= documents


@pytest.mark.parametrize(
    ("question", "entry_id"),
    [
        ("What's the notice period?", "notice-period"),
        ("what is the notise period", "notice-period"),  # a typo
        ("notice period?", "notice-period"),
        ("How many days of annual leave do I get?", "annual-leave"),
        ("How much does servicing a Zephyr-9 cost?", "zephyr-service-cost"),
        ("what does error e7 mean", "zephyr-error-e7"),
        ("How long must my password be?", "password-length"),
        ("Zephyr-9 warranty?", "zephyr-warranty"),
    ],
)
def test_match_faq_when_same_question_rephrased_then_matches(faq, question: str, entry_id: str) -> None:
    match = match_faq(question, faq)
    assert match is not None and match.entry.id == entry_id


@pytest.mark.parametrize(
    "question",
    [
        "When does my notice period start?",
        "What is the notice period for contractors?",
        "What does error E5 mean?",
        "How much do replacement filters cost?",
        "What is the Zephyr-9?",
        "Can I work remotely from abroad?",
        "How do I report a phishing email?",
        "Is the warranty extended?",
        "What is the hotel limit in capital cities?",
        "",
    ],
)
def test_match_faq_when_related_but_different_question_then_none(faq, question: str) -> None:
    assert match_faq(question, faq) is None


def test_parse_faq_rejects_entries_without_answer() -> None:
    with pytest.raises(ValueError, match="questions and an answer"):
        parse_faq("- id: x\n  questions: ['Hi?']\n")
    with pytest.raises(ValueError, match="not valid YAML"):
        parse_faq("- id: x\n  questions: [Hi?]\n")
    assert parse_faq("- id: x\n  questions: ['Hi?']\n  answer: Hello\n")[0].sources == ()
