import pytest

from backend.memory.followup import (
    Completed,
    FollowUp,
    complete_ellipsis,
    decide,
    detect,
    entities,
    new_subject_search,
    new_terms,
    with_entity,
)

HISTORY = "How often must the Zephyr-9 be serviced? The Zephyr-9 must be serviced every 12 months [S1]."


def test_first_question_is_never_a_follow_up():
    assert detect("how much does it cost?", "") == FollowUp(False, "new", 1.0, "first question of the thread")


@pytest.mark.parametrize(
    "question",
    [
        "Are you sure?",
        "explain more",
        "Can you elaborate?",
        "what do you mean?",
        "Tell me more",
        "Is that right?",
        "Can you explain that in simpler words?",
        "why?",
        "Can you double-check that?",
        "How do you know?",
        "Can you check that?",
        "R u sure",
    ],
)
def test_clarifications(question):
    assert detect(question, HISTORY).kind == "clarification"


@pytest.mark.parametrize(
    "question",
    [
        "how much does it cost?",
        "and for contractors?",
        "What about the last one?",
        "Which one is cheaper?",
        "what about error code E7?",
    ],
)
def test_references_back(question):
    result = detect(question, HISTORY)
    assert (result.is_followup, result.kind) == (True, "reference")


def test_short_question_without_new_subject_is_a_follow_up():
    assert detect("the price?", HISTORY).reason.startswith("short question")


@pytest.mark.parametrize(
    "question",
    [
        "What does the IT Security Policy say about VPN passwords?",
        "How many days of annual leave do full-time employees get?",
    ],
)
def test_new_topics(question):
    assert detect(question, HISTORY).is_followup is False


def test_acronym_it_is_not_the_pronoun_it():
    assert detect("Which IT tools may I install on my laptop?", HISTORY).is_followup is False


def test_entities_products_codes_names_and_acronyms_without_citations():
    text = "Northwind Climate Systems sells the Zephyr-9; error E7 needs MFA [S1] [S12]. The Warranty Card"
    assert entities(text) == ["Northwind Climate Systems", "Zephyr-9", "E7", "MFA", "Warranty Card"]
    assert new_terms("Is the Zephyr-9 quiet? What about MFA?", HISTORY) == ["MFA"]


def test_decide_maps_kinds_and_new_mentions():
    assert decide(FollowUp(True, "clarification", 0.9, ""), False)[0] == "reuse"
    assert decide(FollowUp(True, "reference", 0.8, ""), False)[0] == "both"
    assert decide(FollowUp(False, "new", 0.8, ""), False)[0] == "fresh"
    assert decide(FollowUp(True, "clarification", 0.9, ""), True) == ("fresh", "a new document was mentioned")


def test_with_entity_adds_the_main_entities_only_when_every_one_was_dropped():
    assert with_entity("How much does it cost?", ["Zephyr-9", "E7", "VPN"]) == "How much does it cost? (Zephyr-9, E7)"
    # tester: after an E7 question the warranty was searched as "… (E7)", which finds the error table
    assert with_entity("How long is the warranty?", ["E7", "Zephyr-9"]) == "How long is the warranty? (E7, Zephyr-9)"
    assert with_entity("What does E7 mean?", ["Zephyr-9", "E7"]) == "What does E7 mean?"
    assert with_entity("How much?", []) == "How much?"


def test_questions_about_the_conversation_are_told_apart_from_document_questions_with_before():
    from backend.memory.followup import PAST_CONVERSATION_RE

    assert PAST_CONVERSATION_RE.search("What did we discuss earlier?")
    assert PAST_CONVERSATION_RE.search("Which topics have we covered so far?")
    assert not PAST_CONVERSATION_RE.search("How many days before departure must flights be booked?")


@pytest.mark.parametrize(
    ("question", "about"),
    [
        ("Disregard my previous question. What are the core hours?", False),
        ("ignore the last answer, how many leave days do I get?", False),
        ("Never mind my earlier question; where is the kitchen?", False),
        ("Forget previous question. What are the core hours?", False),
        ("What was my previous question?", True),
        ("what did you say about contractors earlier?", True),
        ("Forget it. What did we discuss so far?", True),
    ],
)
def test_a_question_that_sets_the_conversation_aside_is_not_about_it(question, about):
    from backend.memory.followup import about_conversation

    assert about_conversation(question) is about


@pytest.mark.parametrize(
    ("question", "previous", "whole"),
    [
        (
            "and for capital cities?",
            "What is the hotel limit per night?",
            "What is the hotel limit per night, for capital cities?",
        ),
        (
            "Even during probation?",
            "How many days can employees work remotely?",
            "How many days can employees work remotely, even during probation?",
        ),
        ("And on Fridays?", "What are the core hours?", "What are the core hours, on Fridays?"),
        (
            "or by train?",
            "How much is refunded for a flight to Berlin?",
            "How much is refunded for a flight to Berlin, or by train?",
        ),
        ("And for IT staff?", "What is the VPN policy?", "What is the VPN policy, for IT staff?"),
        (
            "What about contractors?",
            "What is the notice period?",
            "What about contractors? (asked after: What is the notice period?)",
        ),
        ("and interns?", "What is the notice period?", "What about interns? (asked after: What is the notice period?)"),
        (
            "and a second unit?",
            "How much does it cost? (Zephyr-9)",
            "What about a second unit? (asked after: How much does it cost?) (Zephyr-9)",
        ),
        (
            "and the Zephyr-9?",
            "How much does it cost? (Zephyr-9)",
            "What about the Zephyr-9? (asked after: How much does it cost?)",
        ),
        (
            "and a second unit?",
            "How much does it cost? (Zephyr-9, E7)",
            "What about a second unit? (asked after: How much does it cost?) (Zephyr-9, E7)",
        ),
        (
            "and the Zephyr-9?",
            "How much does it cost? (Zephyr-9, E7)",
            "What about the Zephyr-9? (asked after: How much does it cost?)",
        ),
        ("and in", "What is the notice period?", "What is the notice period?"),  # "and in @hr.md?", mention stripped
        ("and for capital cities?", "@nosuch what is the hotel limit?", "what is the hotel limit, for capital cities?"),
    ],
)
def test_an_elliptical_follow_up_becomes_the_last_question_with_its_change(question, previous, whole):
    completed = complete_ellipsis(question, previous)
    assert completed is not None and completed.question == whole


@pytest.mark.parametrize(
    ("question", "previous", "whole"),
    [
        ("What about E7?", "What does error code E4 mean?", "What does error code E7 mean?"),
        ("what about e7?", "What does error code E4 mean?", "What does error code E7 mean?"),
        ("and in 2025?", "What was the hotel limit in 2024?", "What was the hotel limit in 2025?"),
        ("What about the Zephyr-12?", "How much does it cost? (Zephyr-9)", "How much does it cost? (Zephyr-12)"),
    ],
)
def test_a_code_model_or_year_of_the_same_form_is_swapped_and_the_result_is_the_next_base(question, previous, whole):
    assert complete_ellipsis(question, previous) == Completed(whole, whole)


def test_a_code_the_last_question_has_no_counterpart_for_is_not_completed():
    assert complete_ellipsis("What about E7?", "Explain the Zephyr-9 warranty in detail.") is None  # tester


def test_a_code_is_not_swapped_when_the_last_question_has_two_of_its_form():
    completed = complete_ellipsis("What about E7?", "What do E4 and E5 mean?")
    assert completed is not None and completed.question == "What about E7? (asked after: What do E4 and E5 mean?)"


def test_completions_are_made_from_the_base_so_they_do_not_pile_up():
    first = complete_ellipsis("and for contractors?", "What is the notice period?")
    assert first == Completed("What is the notice period, for contractors?", "What is the notice period?")
    second = complete_ellipsis("and for interns?", first.question, first.base)
    assert second is not None and second.question == "What is the notice period, for interns?"


def test_a_qualifier_after_a_new_subject_qualifies_it_and_a_second_subject_replaces_it():
    meals = complete_ellipsis("what about meals?", "What is the hotel limit per night?")
    hotel = "(asked after: What is the hotel limit per night?)"
    assert meals == Completed(f"What about meals? {hotel}", "What is the hotel limit per night? What about meals?")
    short = complete_ellipsis("and on a short travel day?", meals.question, meals.base)
    assert short is not None and short.question == f"What about meals, on a short travel day? {hotel}"
    taxis = complete_ellipsis("and taxis?", short.question, short.base)
    assert taxis is not None and taxis.question == f"What about taxis? {hotel}"


def test_a_code_swapped_after_a_new_subject_keeps_the_subject_and_later_fragments_stay_readable():
    """Review: the swap edited the "(asked after: …)" form, and later fragments nested it."""
    unit = complete_ellipsis("and a second unit?", "How much does it cost? (Zephyr-9)")
    model = complete_ellipsis("and the Zephyr-12?", unit.question, unit.base)
    cost = "(asked after: How much does it cost?)"
    assert model == Completed(
        f"What about a second unit? {cost} (Zephyr-12)", "How much does it cost? What about a second unit? (Zephyr-12)"
    )
    third = complete_ellipsis("and a third unit?", model.question, model.base)
    assert third is not None and third.question == f"What about a third unit? {cost} (Zephyr-12)"


@pytest.mark.parametrize(
    "question", ["and E4?", "or Zephyr-12?", "And a second unit?", "but contractors?", "and IT staff?"]
)
def test_a_bare_fragment_after_and_or_but_leans_on_the_last_question_even_when_its_name_is_new(question):
    assert (detect(question, HISTORY).kind, detect(question, HISTORY).is_followup) == ("reference", True)


@pytest.mark.parametrize(
    "question",
    [
        "and how much is it?",
        "and what's the deadline?",
        "and what’s the deadline?",
        "But the handbook says 150",
        "Also wie hoch ist das Limit?",
        "What about it?",
        "And then?",
        "and?",
        "Within how many hours?",
        "How much does it cost?",
        "Andrew?",
        "and thanks!",
        "And a second unit during the same visit of the technician?",  # after a bare "and": maybe a sentence
        "and for a trip to Berlin, Paris or Rome with a hire car and a train on Sundays?",  # over MAX_FRAGMENT_WORDS
    ],
)
def test_a_clause_of_its_own_or_a_pronoun_is_not_completed(question):
    assert complete_ellipsis(question, "What is the hotel limit per night?") is None


def test_without_a_previous_question_nothing_is_completed():
    assert complete_ellipsis("and for capital cities?", "") is None


NOTICE = "What is the notice period? The notice period for permanent employees is 2 months [S1]."
COST = "How much does a Zephyr-9 service cost? A standard service costs 240 euros; price lists are online [S1]."


@pytest.mark.parametrize(
    "question",
    [
        "Explain the Zephyr-9 warranty in detail.",
        "Explain the parking rules",
        "Explain in detail the Zephyr-9 warranty",
        "Explain more about the Zephyr-9 warranty",
        "Explain briefly the parking rules",
    ],
)
def test_explain_with_a_subject_of_its_own_is_not_a_clarification(question):
    assert detect(question, NOTICE).kind != "clarification"


@pytest.mark.parametrize(
    "question",
    ["Explain", "Explain in more detail", "explain that again", "Explain it briefly", "Are you sure about that rule?"],
)
def test_explain_alone_or_about_the_last_answer_is_a_clarification(question):
    assert detect(question, NOTICE).kind == "clarification"


def test_a_short_whole_question_about_words_never_used_is_a_new_topic():
    parental = detect("What is the parental leave policy?", COST)
    assert parental.is_followup is False and "parent" in parental.reason  # was searched as "… (Zephyr-9)"
    after_policy = "What is the Zephyr-9 return policy? Units can be returned within 30 days [S1]."
    assert detect("What is the parental leave policy?", after_policy).is_followup is False  # "policy" is generic


@pytest.mark.parametrize(
    "question",
    [
        "Even during probation?",  # a fragment, however new its words
        "Within how many hours?",
        "How much is a second service?",  # a whole question that reuses the conversation's words
        "What did we discuss earlier?",  # about the conversation itself
        "What if the trip is urgent?",  # a hypothetical on the last answer
        "What is the deadline?",  # one new word: its subject is the last answer's
        "What are the prices?",  # "price" and "prices" are one word
        "Is parking included?",  # "included" asks about a rule, whatever the topic
    ],
)
def test_a_short_question_that_leans_on_the_conversation_stays_a_follow_up(question):
    assert detect(question, COST).is_followup is True


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("What about meals? (asked after: How many days of annual leave?)", ("What about meals?", ["meal"])),
        ("What about meals, on a short travel day? (asked after: Hotels?)", ("What about meals?", ["meal"])),
        ("What about hire cars? (asked after: Q?) (Zephyr-9)", ("What about hire cars?", ["hir", "car"])),
        ("What is the hotel limit per night, for capital cities?", ("", [])),
        ("What about the Zephyr-12?", ("", [])),  # typed so: not a completion
    ],
)
def test_a_new_subject_is_searched_alone_too_and_its_words_anchor_its_passages(query, expected):
    assert new_subject_search(query) == expected


def test_a_new_subject_or_an_earlier_question_with_brackets_is_still_read_and_a_subject_naming_nothing_is_not():
    """Review: "(per night)" in the earlier question, or "(lunch)" in the subject, made the form unreadable."""
    assert new_subject_search("What about meals? (asked after: What is the hotel limit (per night)?)") == (
        "What about meals?",
        ["meal"],
    )
    assert new_subject_search("What about meals (lunch)? (asked after: Hotels?) (Zephyr-9)")[1] == ["meal", "lunch"]
    assert new_subject_search("What about the other? (asked after: Which badge?)") == ("", [])
