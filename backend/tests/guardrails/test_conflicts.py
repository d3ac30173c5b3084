"""conflicts: a figure of the answer that another document's passage states differently (with the offline
MiniLM, as the product compares the wording)."""

import pytest

from backend.contract.text import CONFLICT_NOTE
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
MILEAGE = "Private cars are reimbursed at 0.30 euros per kilometre [S1]."


@pytest.fixture
def find(minilm):
    def run(said: str, passages: dict, question: str = "", answer: str | None = None, names=NAMES, best="S1"):
        claim = SentenceSupport(said, 0, len(said), [best], True, False, {best: 0.9}, best)
        return conflicts([claim], passages, names, answer or said, minilm, question)

    return run


def test_another_documents_rate_for_the_same_thing_is_a_conflict_whatever_its_wording(find):
    [found] = find(MILEAGE, {"S1": POLICY, "S2": RULES})
    assert found == {"sentence": MILEAGE, "cited": "S1", "source": "S2", "says": RULES}
    assert conflict_note([found], NAMES) == f"{CONFLICT_NOTE}expense-rules.txt says: “{RULES}” [S2]"


def test_a_newer_document_in_other_words_and_units_is_a_conflict(find):
    said = "Hotel stays in Paris are reimbursed up to €180 per night [S1]."
    mine = "Hotel accommodation in Paris, London and Amsterdam is reimbursed up to €180 per night."
    other = "From 1 March 2024, the nightly hotel cap for Paris, London and Amsterdam is 210 EUR."
    assert find(said, {"S1": mine, "S2": other}, "What is the hotel limit per night in Paris?")[0]["says"] == other


def test_a_figure_for_another_subject_the_question_names_is_no_conflict(find):
    said = "You get 25 days of annual leave per calendar year [S1]."
    mine = "Employees receive 25 days of annual leave per calendar year."
    question = "How many days of annual leave do I get?"
    sick = "Employees receive 10 days of paid sick leave per calendar year."
    assert find(said, {"S1": mine, "S2": sick}, question) == []
    newer = "From 2026, employees receive 28 days of annual leave per calendar year."
    assert find(said, {"S1": mine, "S2": newer}, question)[0]["says"] == newer


def test_a_pdf_line_break_inside_the_sentence_does_not_hide_it(find):
    broken = "time. Private cars used for business trips are reimbursed at 0.30\neuros per kilometre.\nMeals while"
    assert find(MILEAGE, {"S1": broken, "S2": RULES})[0]["says"] == RULES


def test_the_same_figure_in_another_document_is_no_conflict(find):
    same = "Mileage is reimbursed at 0.30 euros per kilometre when a technician uses a private car."
    assert find(MILEAGE, {"S1": POLICY, "S2": same}) == []


def test_one_documents_own_passages_are_not_compared(find):
    assert find(MILEAGE, {"S1": POLICY, "S3": RULES}) == []


def test_an_answer_that_states_the_other_figure_too_gets_no_conflict(find):
    answer = f"{MILEAGE} Technicians get 0.42 euros per kilometre [S2]."
    assert find(MILEAGE, {"S1": POLICY, "S2": RULES}, answer=answer) == []


def test_a_figure_the_answer_states_with_another_unit_still_disagrees(find):
    answer = f"{MILEAGE} The scheme started 0.42 years ago."
    assert [c["source"] for c in find(MILEAGE, {"S1": POLICY, "S2": RULES}, answer=answer)] == ["S2"]


def test_a_sentence_about_something_else_is_no_conflict(find):
    said = "Meals while travelling are reimbursed up to 45 euros per day [S1]."
    other = "The annual parking permit costs 300 euros per year and is paid by the employee."
    assert find(said, {"S1": POLICY, "S2": other}) == []


def test_a_figure_for_another_place_or_code_is_no_conflict(find):
    said = "The daily allowance in France is €40 [S1]."
    assert find(said, {"S1": "In France the daily allowance is €40.", "S2": "In Belgium the daily allowance is €45."},
                "What is the daily allowance in France?") == []  # fmt: skip
    said = "The Zephyr-9 must be serviced every 12 months [S1]."
    other = "Zephyr-7 units must be serviced every 6 months."
    assert find(said, {"S1": "Zephyr-9 units must be serviced every 12 months.", "S2": other}) == []
    said = "Revenue grew by 12% in 2024 [S1]."
    assert find(said, {"S1": "Group revenue grew by 12% in 2024.", "S2": "Group revenue grew by 8% in 2025."}) == []


def test_one_value_written_two_ways_is_no_conflict(find):
    for mine, other in [
        ("Cars are reimbursed at 0.3 euros per kilometre.", "Cars are reimbursed at 0.30 euros per kilometre."),
        ("Cars are reimbursed at 0.30 euros per kilometre.", "Cars are reimbursed at 0,30 euros per kilometre."),
        ("Meals are reimbursed up to 45.00 euros per day.", "Meals are reimbursed up to 45 euros per day."),
        ("The training budget is 1,500 euros per employee.", "The training budget is 1 500 euros per employee."),
        ("On Fridays, lessons end at 14:30.", "On Fridays, lessons end at 2:30 pm."),
    ]:  # fmt: skip
        assert find(f"{mine[:-1]} [S1].", {"S1": mine, "S2": other}) == [], mine
    figures = sentence_figures("opens at 07:00, 1 500 euros, 0,30 EUR, €12, 9 am, 2:30 pm, 30 to 45 days")
    assert [(f.value, f.unit) for f in figures] == [
        ("7:00", "time"), ("1500", "euro"), ("0.3", "euro"), ("12", "euro"), ("9:00", "time"), ("14:30", "time"),
        ("45", "day"),
    ]  # fmt: skip


def test_a_figure_per_another_thing_is_no_conflict(find):
    said = "Field technicians get 0.42 euros per kilometre [S2]."
    meals = "Meals while travelling are reimbursed up to 45 euros per day. A short day's limit is 20 euros a day."
    assert find(said, {"S2": RULES, "S1": meals}, best="S2") == []
    said = "A parking permit costs 18 euros per month [S1]."
    yearly = "A parking permit costs 180 euros per year, paid in January."
    assert find(said, {"S1": "A parking permit costs 18 euros per month.", "S2": yearly}) == []
    figures = sentence_figures("€180 per night, 210 EUR, 45 euros a day, €12/month, 0.30 euros per km")
    assert [(f.value, f.unit, f.per) for f in figures] == [
        ("180", "euro", "night"), ("210", "euro", ""), ("45", "euro", "day"), ("12", "euro", "month"),
        ("0.3", "euro", "kilometr"),
    ]  # fmt: skip


def test_the_passages_sentence_must_state_the_claims_figure_with_its_unit(find):
    said = "Helpdesk tickets are answered within 4 hours [S1]."
    mine = "Helpdesk tickets are answered within 4 hours. Company laptops are replaced every 4 years."
    assert find(said, {"S1": mine, "S2": "Company laptops are replaced every 3 years."}) == []


def test_a_document_is_quoted_once_though_two_of_its_passages_disagree(find):
    names = {**NAMES, "S4": "expense-rules.txt"}
    assert [c["source"] for c in find(MILEAGE, {"S1": POLICY, "S2": RULES, "S4": RULES}, names=names)] == ["S2"]


def test_claims_or_sources_missing_from_the_mappings_are_left_out(find):
    assert find(MILEAGE, {"S1": POLICY, "S2": RULES}, best="S7") == []
    assert find(MILEAGE, {"S1": POLICY, "S2": RULES}, names={"S1": "travel-policy.pdf"}) == []


def test_odd_numbers_neither_crash_nor_count():
    long = "7" * 4301
    assert sentence_figures(f"Serial {long}:00 euros. Key {long} euros.") == []
    clocks = sentence_figures("at 12 am, 12 pm, 9 am, 0:00 pm and 25:99")
    assert [f.value for f in clocks] == ["0:00", "12:00", "9:00", "12:00", "25:99"]
    assert all(f.per == "" for f in clocks)  # "9 am" is not "per m"
    assert [f.value for f in sentence_figures("٣ euros, ５ euros")] == ["3", "5"]


def test_a_price_list_against_another_is_compared_in_bounded_time(find):
    prices = " ".join(f"Item {k} costs {k + 10} euros per unit." for k in range(400))
    others = " ".join(f"Item {k} costs {k + 11} euros per unit." for k in range(400))
    said = "Item 5 costs 15 euros per unit [S1]."
    assert len(find(said, {"S1": prices, "S2": others}, "How much does item 5 cost?")) <= 1
