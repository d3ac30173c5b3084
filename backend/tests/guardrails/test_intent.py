"""Small talk gets a canned reply; anything with a real question gets None."""

import pytest

from backend.guardrails.intent import DEFAULT_REPLIES, classify_intent


@pytest.mark.parametrize(
    ("message", "intent"),
    [
        ("hi", "greeting"),
        ("Hello there!", "greeting"),
        ("Good morning team", "greeting"),
        ("thanks!", "thanks"),
        ("Thank you so much, that helped", "thanks"),
        ("thanks for the help", "thanks"),
        ("bye", "goodbye"),
        ("hello, how are you?", "wellbeing"),
        ("what can you do?", "capabilities"),
        ("who are you?", "identity"),
        ("ok", "acknowledgement"),
    ],
)
def test_classify_intent_when_small_talk_then_intent_and_reply(message: str, intent: str) -> None:
    match = classify_intent(message)
    assert match is not None and match.intent == intent and match.reply == DEFAULT_REPLIES[intent]


@pytest.mark.parametrize(
    "message",
    [
        "hi, what is the notice period?",
        "thanks, and what about contractors?",
        "help me with my leave request",
        "What are the core hours?",
        "Is it OK to work on Fridays?",
        "How do I say hello in German?",
        "",
    ],
)
def test_classify_intent_when_real_question_then_none(message: str) -> None:
    assert classify_intent(message) is None


def test_classify_intent_uses_configured_replies() -> None:
    assert classify_intent("hi", {"greeting": "Hej!"}).reply == "Hej!"
