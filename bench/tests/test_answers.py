"""bench.answers scoring on fixed records: correctness, citation precision, abstention, repair and check off vs on."""

from bench.answers import Item, Record, abstains, aggregate, contains, own_items, score

PASSAGES = {"S1": "Hotels are reimbursed up to 140 euros per night.", "S2": "Visitors sign in at reception."}


def record(answerable: bool, raw: str, final: str, replaced: bool = False, reason: str | None = None) -> Record:
    item = Item("q", "What is the hotel limit?", answerable, ["140 euros"] if answerable else [], "travel.pdf", "own")
    validation: dict = {"sources": {"not_found": "replaced", "original_text": raw}} if replaced else {}
    if reason:
        validation["sources"]["not_found_reason"] = reason
    return Record(item, raw=raw, final=final, passages=dict(PASSAGES), validation=validation, ttft_s=1.0)


def test_gold_answers_match_whole_words_only():
    assert contains("The limit is 140 euros per night [S1].", "140 euros")
    assert not contains("The limit is 1140 euros.", "140 euros")
    assert contains("Reception closes at 18:00.", "18:00")


def test_a_wrong_citation_counts_against_precision_and_a_repaired_one_for_it():
    r = record(True, "Hotels cost up to 140 euros [S2].", "Hotels cost up to 140 euros [S1].")
    assert score(r, r.raw) == {"correct": True, "abstained": False, "cited": 1, "cited_good": 0}
    assert score(r, r.final)["cited_good"] == 1
    figures = aggregate([r])
    assert figures["raw"]["citation_precision"] == 0.0 and figures["final"]["citation_precision"] == 1.0


def test_an_invented_answer_to_an_unanswerable_question_is_false_until_replaced():
    reply = "I could not find this in the documents. The closest passages I found are in travel.pdf."
    r = record(False, "The refrigerant is R-410A [S1].", reply, replaced=True)
    figures = aggregate([r])
    assert figures["raw"]["false_answers_unanswerable"] == 1.0
    assert figures["final"]["false_answers_unanswerable"] == 0.0
    assert abstains(reply) and not abstains("It is 140 euros.")


def test_a_correct_answer_replaced_by_not_found_is_counted():
    r = record(True, "It is 140 euros [S1].", "I could not find this in the documents.", replaced=True)
    assert aggregate([r])["correct_wrongly_replaced"] == 1.0


def test_a_correct_answer_withheld_for_want_of_a_passage_is_counted_as_replaced():
    """No passage matched, and the answer stated a figure: validate_sources withheld it (not_found no_passages)."""
    r = record(True, "It is 140 euros.", "I could not find this in the documents: no passage matched the question.")
    r.validation = {"sources": {"not_found": "no_passages", "not_found_reason": "unsupported", "original_text": r.raw}}
    assert r.replaced_by == "unsupported" and aggregate([r])["correct_wrongly_replaced"] == 1.0
    led = record(True, "It is 140 euros.", "No document in the knowledge base matched this question, so …")
    led.validation = {"sources": {"not_found": "no_passages", "original_text": led.raw}}
    assert led.replaced_by is None  # only led by a disclaimer: nothing was replaced


def test_the_own_question_set_has_a_third_unanswerable_and_both_splits():
    items = own_items()
    assert len(items) >= 45 and sum(not i.answerable for i in items) * 3 >= len(items)
    assert {i.split for i in items} == {"tune", "report"}


def test_the_answerable_check_is_scored_side_by_side_with_the_answer_it_replaced():
    reply = "I could not find this in the documents."
    neighbour = record(False, "Visitors sign in at reception [S2].", reply, replaced=True, reason="unanswered")
    correct = record(True, "It is 140 euros [S1].", reply, replaced=True, reason="unanswered")
    figures = aggregate([neighbour, correct])
    assert figures["unchecked"]["false_answers_unanswerable"] == 1.0 and figures["unchecked"]["answer_correct"] == 1.0
    assert figures["final"]["false_answers_unanswerable"] == 0.0 and figures["final"]["answer_correct"] == 0.0
    assert figures["correct_replaced_unanswered"] == 1.0 and figures["correct_replaced_unsupported"] == 0.0
    unsupported = record(True, "It is 140 euros [S1].", reply, replaced=True, reason="unsupported")
    assert unsupported.unchecked == reply and aggregate([unsupported])["correct_replaced_unsupported"] == 1.0
