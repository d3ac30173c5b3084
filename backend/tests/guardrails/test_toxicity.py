"""Toxicity: threats, directed insults, harassment and slurs flagged; rough words about things are not."""

import pytest

from backend.guardrails import toxicity
from backend.guardrails.toxicity import score_toxicity, slur_hash


@pytest.mark.parametrize(
    "text",
    [
        "You are a useless idiot.",
        "I will kill you if the unit breaks again.",
        "Go kill yourself.",
        "fuck you",
        "Shut up and answer.",
        "Nobody likes you, you should be fired.",
        "Those people are vermin and should all be killed.",
        "I know where you live.",
    ],
)
def test_score_toxicity_when_abusive_then_flagged(text: str) -> None:
    result = score_toxicity(text)
    assert result.flagged and result.reasons


@pytest.mark.parametrize(
    "text",
    [
        "How do I kill a frozen process on my laptop?",
        "The fan is dead, is that covered by the warranty?",
        "This heat pump is killing me with the noise.",
        "Is it a stupid idea to book a hotel outside the portal?",
        "This damn unit keeps showing E4.",
        "Hang the unit on the bracket and shoot me an email when done.",
        "Did you trash the old files?",
    ],
)
def test_score_toxicity_when_rough_words_about_things_then_not_flagged(text: str) -> None:
    assert not score_toxicity(text).flagged


def test_slur_lookup_uses_hashes_and_folds_leetspeak(monkeypatch: pytest.MonkeyPatch) -> None:
    assert not score_toxicity("what a frobnicator").flagged
    monkeypatch.setattr(toxicity, "_SLUR_HASHES", frozenset({slur_hash("frobnicator")}))
    assert score_toxicity("what a fr0bn1cat0r").reasons == ["slur"]
    assert score_toxicity("what a frobnicators").flagged
