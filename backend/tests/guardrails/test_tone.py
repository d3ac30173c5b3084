"""Tone rules rewrite the answer: emoji, "As an AI", banned phrases, trailing questions; code untouched."""

from backend.guardrails.tone import ToneConfig, check_tone


def test_check_tone_when_answer_is_plain_then_appropriate_and_unchanged() -> None:
    result = check_tone("The notice period is 2 months [S1].", "What is the notice period?")
    assert result.appropriate and result.adjustments == [] and result.text == result.original_text


def test_check_tone_strips_emoji_and_banned_phrases() -> None:
    result = check_tone("Great question! 😊 The notice period is 2 months [S1]. I hope this helps!")
    assert result.text == "The notice period is 2 months [S1]."
    assert not result.appropriate
    assert result.adjustments == [
        "removed phrase: Great question",
        "removed emoji",
        "removed phrase: I hope this helps",
    ]


def test_check_tone_drops_as_an_ai_disclaimers_but_keeps_the_facts() -> None:
    answer = "As an AI language model, I cannot give legal advice. As an AI, the handbook says 2 months [S1]."
    result = check_tone(answer)
    assert result.text == "The handbook says 2 months [S1]."
    assert "removed 'As an AI' phrasing" in result.adjustments


def test_check_tone_removes_trailing_questions_unless_options_were_asked() -> None:
    answer = "The notice period is 2 months [S1]. Would you like to know more? Anything else?"
    assert check_tone(answer, "What is the notice period?").text == "The notice period is 2 months [S1]."
    kept = check_tone(answer, "Can you suggest options for leaving early?")
    assert kept.text == answer and kept.appropriate


def test_check_tone_keeps_a_lone_clarifying_question() -> None:
    assert check_tone("Which document do you mean?").appropriate


def test_check_tone_leaves_code_blocks_and_lists_alone() -> None:
    answer = "Steps:\n1. Switch off the unit 🔌.\n2. Replace both filters.\n```\nprint('ok? 😀')\n```"
    result = check_tone(answer)
    assert result.text == "Steps:\n1. Switch off the unit.\n2. Replace both filters.\n```\nprint('ok? 😀')\n```"


def test_check_tone_respects_config() -> None:
    config = ToneConfig(strip_emoji=False, banned_phrases=("Certainly",))
    result = check_tone("Certainly! The unit is fine 👍", config=config)
    assert result.text == "The unit is fine 👍"
    assert result.adjustments == ["removed phrase: Certainly"]
