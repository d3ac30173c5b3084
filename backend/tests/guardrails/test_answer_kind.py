"""What a question asks for, by its opening, and whether an answer gives it."""

import pytest

from backend.guardrails.answer_kind import asked_kind, gives_kind


@pytest.mark.parametrize(
    ("question", "kind"),
    [
        ("How often must passwords be changed?", "a frequency"),
        ("how frequently is the unit serviced", "a frequency"),
        ("How many leave days can be carried over?", "a number or an amount"),
        ("Up to what amount are meals reimbursed?", "a number or an amount"),
        ("How long does probation last?", "a duration or a length"),
        ("Until when is reception staffed?", "a time or a date"),
        ("When must a lost badge be reported?", "a time or a date"),
        ("What time does the building open?", "a time or a date"),
    ],
)
def test_the_opening_of_a_question_says_what_it_asks_for(question: str, kind: str) -> None:
    assert asked_kind(question).name == kind  # type: ignore[union-attr]


@pytest.mark.parametrize(
    "question",
    [
        "Who approves a trip abroad?",
        "May I share my password with the IT helpdesk?",
        "When extensive time is required to sort integers, this represents what case complexity?",
        "What does error E4 mean?",
    ],
)
def test_other_questions_ask_for_no_particular_kind(question: str) -> None:
    assert asked_kind(question) is None


@pytest.mark.parametrize(
    ("question", "answer"),
    [
        ("How often must passwords be changed?", "Passwords never expire [S1]."),
        ("How often must passwords be changed?", "Only when they may have been disclosed [S1]."),
        ("How often is the Zephyr-9 serviced?", "Once a year, before the cooling season [S2]."),
        ("How often is the Zephyr-9 serviced?", "At 12-month intervals by a certified technician [S1]."),
        ("How many leave days can contractors carry over?", "None: their own agreements apply [S1]."),
        ("How much does the helpdesk charge?", "It is free for employees [S1]."),
        ("How long does probation last?", "Six months [S1]."),
        ("How long must passwords be?", "At least 14 characters [S1]."),
        ("How long do I have to submit expenses?", "Claims must be submitted within 30 days of the trip [S1]."),
        ("How long does a standard service take?", "90 minutes per unit [S1]."),
        ("How long can visitors stay?", "Until 18:00, when reception closes [S2]."),
        ("How long does the self-test take?", "The self-test takes about two minutes [S1]."),
        ("How long is a review?", "It takes 5 working days [S1]."),
        ("How long can a laptop be borrowed?", "There is no time limit [S1]."),
        ("Until when is reception staffed?", "Until 18:00 [S3]."),
        ("When must a lost badge be reported?", "Immediately, to reception [S2]."),
    ],
)
def test_answers_of_the_kind_asked_for_in_many_wordings_are_recognised(question: str, answer: str) -> None:
    assert gives_kind(asked_kind(question), answer, question)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("question", "answer"),
    [
        ("How often must passwords be changed?", "Passwords must be at least 14 characters long [S1]."),
        ("How many days of leave do contractors get?", "Contractors are covered by their own agreements [S1]."),
        ("When is the annual bonus paid?", "The bonus depends on the company's results [S4]."),
        # tester: any number was a duration; the spaces are the car park's, not how long guests may stay
        (
            "How long can guests of employees park for free?",
            "Guests can park for free in the car park, including 6 spaces with chargers for electric cars [S1].",
        ),
        ("How long can guests of employees park for free?", "Guests can park for free in the car park [S1]."),
    ],
)
def test_a_neighbouring_fact_that_is_not_of_the_kind_asked_for_is_caught(question: str, answer: str) -> None:
    assert not gives_kind(asked_kind(question), answer, question)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("question", "answer"),
    [
        # tester, 3 of 3 ("How long can guests of employees park for free?"): "free" is an amount, but here the
        # question's own word
        ("How many free parking spaces do guests get?", "Guests can park for free in the car park [S1]."),
        ("How much does the free trial cost?", "The free trial is offered by the vendor [S1]."),
    ],
)
def test_a_word_of_the_kind_that_the_answer_only_echoes_from_the_question_is_not_an_answer(question, answer) -> None:
    assert gives_kind(asked_kind(question), answer)  # type: ignore[arg-type]  # read without the question
    assert not gives_kind(asked_kind(question), answer, question)  # type: ignore[arg-type]


def test_the_same_word_answers_when_the_question_does_not_hold_it() -> None:
    assert gives_kind(asked_kind("How much is parking?"), "Parking is free for employees [S1].", "How much is parking?")  # type: ignore[arg-type]


def test_citation_markers_are_not_read_as_numbers() -> None:
    assert not gives_kind(asked_kind("How many parking spaces are there?"), "Visitors park at the front [S12].")  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("question", "answer"),
    [  # review: a question that offers the value, or a choice, is answered in its own words
        ("How long is the notice period, 30 days?", "Yes, the notice period is 30 days [S1]."),
        ("How much does parking cost, or is it free?", "Parking is free for employees [S1]."),
        ("How often are backups taken, daily or weekly?", "Backups are taken daily [S1]."),
        ("When must I submit expenses, before or after the trip?", "After the trip [S1]."),
        ("How many weeks of notice after 2 years, after 4 years?", "After 4 years the notice is 4 weeks [S1]."),
    ],
)
def test_a_number_or_a_choice_the_question_offers_still_answers_it(question: str, answer: str) -> None:
    assert gives_kind(asked_kind(question), answer, question)  # type: ignore[arg-type]
