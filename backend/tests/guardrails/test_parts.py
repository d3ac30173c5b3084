import pytest

from backend.guardrails.parts import question_parts, unanswered_parts


@pytest.mark.parametrize(
    ("question", "parts"),
    [
        (
            "What is the notice period for permanent employees and is there a gym in the office?",
            ["What is the notice period for permanent employees?", "is there a gym in the office?"],
        ),
        (
            "How many days of annual leave do I get, and what refrigerant does the Zephyr-9 use?",
            ["How many days of annual leave do I get?", "what refrigerant does the Zephyr-9 use?"],
        ),
        ("What is the hotel limit? How much for meals?", ["What is the hotel limit?", "How much for meals?"]),
        ("Is the Zephyr-9 quiet and does it need servicing?", ["Is the Zephyr-9 quiet?", "does it need servicing?"]),
    ],
)
def test_a_question_asking_two_things_is_cut_into_its_questions(question, parts):
    assert question_parts(question) == parts


@pytest.mark.parametrize(
    "question",
    [
        # a second verb of one question (a SQuAD tune question), not a second question
        "What two resources are uncommonly consumed by alternate models and are typically known to vary?",
        "Thanks, and what about contractors?",  # thanks is no question
        "Which cars and bikes can I use for a business trip?",
        "What is the notice period?",
    ],
)
def test_a_question_asking_one_thing_is_one_part(question):
    assert question_parts(question) == [question]


def test_the_parts_no_supported_claim_answers_are_named_when_another_part_is_answered():
    question = "What is the notice period for permanent employees and is there a gym in the office?"
    claim = "The notice period for permanent employees is 2 months, given in writing [S1]."
    assert unanswered_parts(question, [claim], judged_unanswered=True) == ["is there a gym in the office?"]
    assert unanswered_parts(question, [claim]) == []  # without the model's verdict a yes-or-no part is not named:
    # "Yes, there is a fitness room" answers it in other words (review)
    assert unanswered_parts(question, [], judged_unanswered=True) == []  # nothing answered: the not-found reply
    both = [claim, "The office has a gym on the ground floor [S2]."]
    assert unanswered_parts(question, both, judged_unanswered=True) == []  # every part answered
    assert unanswered_parts("What is the notice period for permanent employees?", [claim]) == []


def test_a_part_answered_in_other_words_by_what_it_asks_for_is_answered():
    question = "How long must passwords be, and how often must they be changed?"
    length = "Passwords must be at least 14 characters long [S1]."
    assert unanswered_parts(question, [length]) == ["how often must they be changed?"]  # a tester's: length alone
    assert unanswered_parts(question, [length, "They expire every 90 days [S1]."]) == []  # a frequency answers it


def test_with_the_models_verdict_against_it_a_part_is_answered_only_with_all_its_words():
    question = "What is the notice period for contractors and is there a gym?"
    permanent = "The notice period for permanent employees is 2 months [S1]."
    assert unanswered_parts(question, [permanent], judged_unanswered=True) == []  # both missing: the not-found reply
    assert unanswered_parts(question, [permanent]) == []  # no verdict against it: no wh-part missing either


def test_a_completed_follow_ups_note_is_no_part_and_a_part_may_open_with_and():
    completed = "What about contractors? (asked after: How many days of annual leave do employees get?)"
    assert question_parts(completed) == [completed]  # review: the note was cut off as a second part
    assert question_parts("How many days can I carry over? And can I carry them into April?") == [
        "How many days can I carry over?",
        "can I carry them into April?",
    ]
