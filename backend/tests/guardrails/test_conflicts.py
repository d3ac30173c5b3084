"""conflicts: a figure of the answer that another document's passage states differently."""

from backend.guardrails.conflicts import conflict_note, conflicts, sentence_figures
from backend.guardrails.grounding import SentenceSupport

POLICY = (
    "Booking rules\nHire cars are booked only when no public transport reaches the destination within a reasonable\n"
    "time. Private cars used for business trips are reimbursed at 0.30 euros per kilometre.\n"
    "Meals while travelling are reimbursed up to 45 euros per day. For a travel day shorter than 8\n"
    "hours the limit is 20 euros."
)
RULES = "Mileage is reimbursed at 0.42 euros per kilometre when a technician uses a private car."
NAMES = {"S1": "travel-policy.pdf", "S2": "expense-rules.txt", "S3": "travel-policy.pdf"}


def claim(sentence: str, best: str = "S1") -> SentenceSupport:
    return SentenceSupport(sentence, 0, len(sentence), [best], True, False, {best: 0.9}, best)


def test_another_documents_rate_for_the_same_thing_is_a_conflict_whatever_its_wording():
    said = "Private cars are reimbursed at 0.30 euros per kilometre [S1]."
    [found] = conflicts([claim(said)], {"S1": POLICY, "S2": RULES}, NAMES, said)
    assert found == {"sentence": said, "cited": "S1", "source": "S2", "says": RULES}
    assert (
        conflict_note([found], NAMES)
        == f"Another document gives a different figure. expense-rules.txt says: “{RULES}” [S2]"
    )


def test_a_pdf_line_break_inside_the_sentence_does_not_hide_it():
    said = "Private cars are reimbursed at 0.30 euros per kilometre [S1]."
    broken = "time. Private cars used for business trips are reimbursed at 0.30\neuros per kilometre.\nMeals while"
    [found] = conflicts([claim(said)], {"S1": broken, "S2": RULES}, NAMES, said)
    assert found["says"] == RULES


def test_the_same_figure_in_another_document_is_no_conflict():
    said = "Private cars are reimbursed at 0.30 euros per kilometre [S1]."
    same = "Mileage is reimbursed at 0.30 euros per kilometre when a technician uses a private car."
    assert conflicts([claim(said)], {"S1": POLICY, "S2": same}, NAMES, said) == []


def test_one_documents_own_passages_are_not_compared():
    said = "Private cars are reimbursed at 0.30 euros per kilometre [S1]."
    assert conflicts([claim(said)], {"S1": POLICY, "S3": RULES}, NAMES, said) == []


def test_an_answer_that_states_the_other_figure_too_gets_no_conflict():
    said = "Private cars are reimbursed at 0.30 euros per kilometre [S1]."
    answer = f"{said} Technicians get 0.42 euros per kilometre [S2]."
    assert conflicts([claim(said)], {"S1": POLICY, "S2": RULES}, NAMES, answer) == []


def test_another_figure_in_other_words_around_it_is_no_conflict():
    # both sentences are about what a line manager approves and count working days; the figures are not the same
    # thing (the case that set MIN_AROUND)
    said = "Remote work from abroad is allowed for at most 20 working days per calendar year [S1]."
    handbook = (
        "Remote work from abroad is allowed for at most 20 working days per calendar year and must be approved by "
        "the line manager in advance."
    )
    policy = "2. Your line manager approves or rejects the request within 3 working days."
    assert conflicts([claim(said)], {"S1": handbook, "S2": policy}, NAMES, said) == []


def test_a_short_days_limit_is_not_taken_for_the_daily_limit():
    said = "Meals while travelling are reimbursed up to 45 euros per day [S1]."
    other = "For a travel day shorter than 8 hours the limit is 20 euros."
    assert conflicts([claim(said)], {"S1": POLICY, "S2": other}, NAMES, said) == []


def test_an_unsupported_claim_and_a_claim_without_a_number_are_not_compared():
    said = "Private cars are reimbursed at 0.30 euros per kilometre."
    unsupported = SentenceSupport(said, 0, len(said), [], True, False, {}, None)
    words = "Private cars are reimbursed per kilometre [S1]."
    assert conflicts([unsupported, claim(words)], {"S1": POLICY, "S2": RULES}, NAMES, said + words) == []


def test_figures_have_a_unit_that_is_no_stop_word_and_numbers_read_as_numbers():
    figures = sentence_figures("Between 30 to 45 days, 1,500 euros and 10 % of it.")
    assert [(f.value, f.unit) for f in figures] == [("45", "day"), ("1500", "euro"), ("10", "%")]
    said = "A permit costs 1,500 euros per year [S1]."
    other = "A parking permit costs 1500 euros per year."
    assert conflicts([claim(said)], {"S1": said, "S2": other}, NAMES, said) == []
