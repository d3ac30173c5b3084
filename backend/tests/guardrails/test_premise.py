import pytest

from backend.guardrails.grounding import check_grounding
from backend.guardrails.premise import MIN_SHARED, YES_NO_QUESTION, echoes_question, premises, unstated_premise

SERVICE = "A standard service of a Zephyr-9 costs 240 euros per unit, including filters and labour."
WALL = "The Zephyr-9 unit is mounted on a wall that must carry 40 kilograms."


def judge(question: str, answer: str, passages: dict[str, str]) -> list[str] | None:
    result = check_grounding(answer, passages, None, 0.5, question)
    return unstated_premise(question, result.claims, passages)


def test_a_service_price_stated_as_the_purchase_price_is_caught_with_the_words_the_passage_lacks():
    question = "What is the purchase price of a new Zephyr-9 unit?"
    answer = "The purchase price of a new Zephyr-9 unit is 240 euros per unit [S1]."
    assert judge(question, answer, {"S1": SERVICE}) == ["new", "price", "purchase"]


def test_a_wall_load_stated_as_the_units_weight_is_caught():
    question = "How much does the Zephyr-9 unit itself weigh?"
    answer = "The Zephyr-9 unit itself weighs 40 kilograms [S1]."
    assert judge(question, answer, {"S1": WALL}) == ["itself", "weigh"]


def test_an_answer_in_the_passages_words_is_kept():
    question = "What does a standard Zephyr-9 service cost?"
    assert judge(question, "A standard service of a Zephyr-9 costs 240 euros per unit [S1].", {"S1": SERVICE}) is None


def test_a_paraphrase_that_keeps_most_of_the_questions_words_in_the_passage_is_kept():
    question = "How long does the review of a new software request take?"
    passage = "New software must be requested through the helpdesk; the review of a request takes 5 working days."
    answer = "The review of a new software request takes 5 working days [S1]."
    [premise] = premises(
        question, check_grounding(answer, {"S1": passage}, None, 0.5, question).claims, {"S1": passage}
    )
    assert premise.missing == set() and judge(question, answer, {"S1": passage}) is None


def test_a_claim_repeating_fewer_question_words_than_min_shared_is_not_judged():
    question = "When is the annual bonus paid?"
    answer = "It is paid at the end of the year together with the December salary [S1]."
    passage = "Salaries are paid at the end of each month; the December salary is paid at the end of the year."
    result = check_grounding(answer, {"S1": passage}, None, 0.5, question)
    assert all(len(p.shared) < MIN_SHARED for p in premises(question, result.claims, {"S1": passage}))
    assert judge(question, answer, {"S1": passage}) is None


def test_an_answer_whose_passages_use_the_questions_words_is_kept():
    question = "What is the purchase price of a new Zephyr-9 unit?"
    price = "A new Zephyr-9 unit has a purchase price of 4,900 euros."
    answer = "A new Zephyr-9 unit has a purchase price of 4,900 euros [S2]. A service costs 240 euros per unit [S1]."
    assert judge(question, answer, {"S1": SERVICE, "S2": price}) is None


def test_a_question_word_that_another_passage_uses_does_not_count_as_unstated():
    question = "How much does the Zephyr-9 unit itself weigh?"
    answer = "The Zephyr-9 unit itself weighs 40 kilograms [S1]."
    other = "Each Zephyr-9 weighs 32 kilograms itself, without the mounting frame."
    assert judge(question, answer, {"S1": WALL}) == ["itself", "weigh"]
    assert judge(question, answer, {"S1": WALL, "S2": other}) is None


def echoes(question: str, answer: str, passage: str) -> bool:
    return echoes_question(question, answer, check_grounding(answer, {"S1": passage}, None, 0.5, question).claims)


ACCEPTS = "A Turing machine accepts an input string when it halts in an accepting state; the answer is then yes."


def test_an_answer_that_only_restates_a_wh_question_is_caught():
    """SQuAD tune half, 1.5B, an unanswerable question answered with itself (its words are in the passage)."""
    question = "What answer denotes that a solution has accepted an input string?"
    assert echoes(question, "The answer denotes that a solution has accepted an input string [S1].", ACCEPTS)
    passage = "The time taken can be expressed as a function of n."
    assert echoes(
        "How is time taken expressed as a function of x?",
        "The time taken can be expressed as a function of x. [S1]",
        passage,
    )


POLICY = (
    "You are responsible for keeping your password secret. All employees can work remotely two days a week. "
    "You must not share your password with a colleague. There is no dress code on Fridays. Lost laptops are "
    "handled by IT. Each expense needs a receipt. The first aid kit is here, at reception. Your manager approves "
    "leave. For onboarding you need these documents: passport, tax card, bank details."
)


@pytest.mark.parametrize(
    ("question", "answer"),
    [
        ("What does a Turing machine accept?", "A Turing machine accepts an input string [S1]."),  # a new word
        ("How many states does it need?", "It needs 2 states [S1]."),  # a number the question lacks
        ("Does a Turing machine accept an input string?", "A Turing machine accepts an input string [S1]."),  # yes/no
        ("Which is the answer, simple or complex?", "The answer is complex [S1]."),  # a choice: its words answer it
        # review: the words that answer who, which, how and where are often short ones
        (
            "Who is responsible for keeping my password secret?",
            "You are responsible for keeping your password secret [S1].",
        ),
        ("Which employees can work remotely?", "All employees can work remotely [S1]."),
        ("How can I share my password with a colleague?", "You must not share your password with a colleague [S1]."),
        ("What is the dress code on Fridays?", "There is no dress code on Fridays [S1]."),
        ("Who handles lost laptops?", "Lost laptops are handled by IT [S1]."),
        ("Which expenses need a receipt?", "Each expense needs a receipt [S1]."),
        ("Where is the first aid kit?", "The first aid kit is here [S1]."),
        ("Who approves leave, my manager?", "Your manager approves leave [S1]."),
        (  # a list answers it, under a lead-in that repeats the question
            "Which documents do I need for onboarding?",
            "For onboarding you need these documents [S1]:\n- passport\n- tax card\n- bank details",
        ),
    ],
)
def test_an_answer_that_adds_to_the_question_or_answers_yes_no_or_a_choice_is_kept(question, answer):
    assert not echoes(question, answer, ACCEPTS + " It needs 2 states. The answer is complex. " + POLICY)


def test_a_yes_no_answer_in_the_questions_words_needs_two_words_no_passage_uses():
    remote = {"S1": "Employees may work remotely up to three days per week after completing their probation period."}
    answer = "Yes, you can work from home up to three days per week after your probation period [S1]."
    assert judge("Can I work from home?", answer, remote) is None  # a correct answer was replaced for "home"
    assert judge("Hi, can I work from home?", answer, remote) is None  # openings and "am" (review)
    assert YES_NO_QUESTION.search("Am I covered when I work from home?") and YES_NO_QUESTION.search("So can I go?")
    assert judge("Where can I work from home?", answer, remote) == ["home"]  # a wh-question: one word is enough
    rooftop = "Yes, you can work from the rooftop garden up to three days per week [S1]."
    assert judge("Can I work from the rooftop garden?", rooftop, remote) == ["garden", "rooftop"]
