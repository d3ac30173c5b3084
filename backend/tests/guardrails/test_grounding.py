"""Grounding: each claim against every passage; exact facts; not-found statements are not claims."""

import numpy as np
import pytest

from backend.contract.text import CONFLICT_NOTE
from backend.guardrails.grounding import answer_spans, check_grounding, claim_kind, facts, figures, says_not_found

SOURCES = {
    "S1": "The notice period for permanent employees is 2 months, given in writing to the line manager. "
    "During probation the notice period is 2 weeks.",
    "[S2]": "A standard service of a Zephyr-9 costs 240 euros per unit. Trips above 1,500 euros need finance approval.",
}


def test_grounded_answer_names_the_best_passage_of_each_claim() -> None:
    result = check_grounding(
        "The notice period is 2 months, given in writing [S1]. A Zephyr-9 service costs 240 euros [S2]. "
        "Trips above 1500 euros need finance approval [S2].",
        SOURCES,
    )
    assert result.grounded and result.issues == [] and result.unsupported_sentences == []
    assert [s.best for s in result.claims] == ["S1", "S2", "S2"]


def test_a_number_that_differs_by_one_digit_is_not_support() -> None:
    result = check_grounding("The notice period is 3 months [S1].", SOURCES)
    assert not result.grounded and result.unsupported_sentences == ["The notice period is 3 months [S1]."]
    assert result.claims[0].missing_facts == ["3"] and result.claims[0].support == {"S1": 0.0, "S2": 0.0}
    assert not check_grounding("A standard service costs 250 euros per unit.", SOURCES).grounded


def test_a_code_or_name_no_passage_contains_is_not_support() -> None:
    result = check_grounding("The Zephyr-9 uses R-410A refrigerant [S2].", SOURCES)
    assert not result.grounded and "r-410a" in result.claims[0].missing_facts
    assert facts("The Zephyr-9 from Northwind Climate Systems uses R-410A [S1].") >= {
        "zephyr-9",
        "r-410a",
        "northwind climate systems",
    }


def test_a_bare_code_is_a_claim_its_passage_must_contain() -> None:
    """A one-word answer naming a code ("F7 [S1]", copied from the question) states a fact like a sentence does."""
    result = check_grounding("F7 [S1].", SOURCES, question="Which filter class (for example F7) does it use?")
    assert [c.sentence for c in result.claims] == ["F7 [S1]."]
    assert result.unsupported_sentences == ["F7 [S1]."] and result.claims[0].missing_facts == ["f7"]


def test_a_claim_is_matched_against_every_passage_not_only_the_cited_one() -> None:
    result = check_grounding("A Zephyr-9 service costs 240 euros per unit [S1].", SOURCES)
    assert result.grounded and result.claims[0].best == "S2" and result.claims[0].cited == ["S1"]


def test_grouped_markers_are_read_as_citations() -> None:
    result = check_grounding("The notice period is 2 months [S1, S2]. Probation notice is 2 weeks [S1][S2].", SOURCES)
    assert [s.cited for s in result.claims] == [["S1", "S2"], ["S1", "S2"]]


def test_unrelated_claim_is_unsupported_and_non_claims_and_not_found_statements_are_skipped() -> None:
    result = check_grounding("Here you go. Employees get a company car and free lunch every day [S1].", SOURCES)
    assert result.unsupported_sentences == ["Employees get a company car and free lunch every day [S1]."]
    said = check_grounding("The documents do not mention the refrigerant of the Zephyr-9.", SOURCES)
    assert said.grounded and said.claims == [] and said.sentences[0].not_found
    echoed = check_grounding("No document in the knowledge base matched this question.", SOURCES)  # the prompt, echoed
    assert echoed.claims == [] and echoed.sentences[0].not_found


@pytest.mark.parametrize(
    "sentence",
    [
        "The warranty does not cover damage caused by blocked air intakes or power surges [S1].",
        "Breakfast is not included in the hotel limit.",
        "Damage from power surges is not covered by the warranty.",
        "The portal does not list hotels above the limit [S2].",
        "According to the documents, the warranty does not cover damage caused by power surges [S1].",
        "Heat sources are not covered by the warranty [S1].",
        "Contact information is not provided to contractors [S2].",
    ],
)
def test_a_negative_fact_is_a_claim_not_the_model_saying_it_found_nothing(sentence) -> None:
    """Tester, 1.5B: "What does the Zephyr-9 warranty not cover?" was answered word for word from the manual, and
    "does not cover" read as the model finding nothing: the correct answer became the not-found reply, 3 times in 3."""
    assert claim_kind(sentence) == (True, False) and not says_not_found(sentence)


@pytest.mark.parametrize(
    "sentence",
    [
        "The documents do not cover parking.",
        "The provided text does not include information about the refrigerant.",
        "The refrigerant is not provided in the context.",
        "This is not covered in the sources [S1].",
        "The documents do not say; they cover servicing [S1] and badges [S2].",
    ],
)
def test_the_same_phrases_said_of_the_documents_still_say_nothing_was_found(sentence) -> None:
    assert claim_kind(sentence) == (False, True) and says_not_found(sentence)


@pytest.mark.parametrize(
    "sentence",
    [
        "Yes, my answer is supported by the sources.",
        "Yes, the previous answer is correct based on the sources.",
        "I am sure: the sources confirm the answer [S1].",
    ],
)
def test_a_sentence_only_about_the_answer_and_its_sources_is_not_a_claim(sentence) -> None:
    """Tester, 1.5B, "Are you sure?" after an FAQ answer: "Yes, my answer is supported by the sources. The Zephyr-9
    warranty is 3 years … [S1]": the first sentence was underlined as not in the sources, grounded 0.52."""
    assert claim_kind(sentence) == (False, False)
    result = check_grounding(f"{sentence} The warranty lasts 3 years [S1].", {"S1": "The warranty lasts 3 years."})
    assert result.grounded and result.unsupported_sentences == [] and len(result.claims) == 1


@pytest.mark.parametrize(
    "sentence",
    [
        "The sources state that visitors must wear a badge.",
        "The answer is 3 years [S1].",
        "According to the documents, Anna Berg approves leave.",
        # review: policy sentences in words that also speak of sources are rules, not remarks about the reply
        "Supporting documents must be provided [S7].",
        "The information you provide must be true and correct [S1].",
        "All statements must be supported by documents.",
        "The documents are based on the sources above.",  # about sources, but not about this reply
    ],
)
def test_a_sentence_about_the_sources_that_also_states_a_fact_is_still_a_claim(sentence) -> None:
    assert claim_kind(sentence) == (True, False)


def test_no_sources_means_claims_are_not_grounded() -> None:
    result = check_grounding("The notice period is 2 months.", {})
    assert not result.grounded and result.issues == ["no sources to check the answer against"]


def test_spans_locate_each_sentence_in_the_answer() -> None:
    answer = "First claim here [S1]. Second one.\n\n```\ncode. here\n```\nThird."
    assert [answer[s:e] for _, s, e in answer_spans(answer)] == ["First claim here [S1].", "Second one.", "Third."]


def test_embedding_similarity_to_a_passage_sentence_blends_into_support() -> None:
    calls: list[list[str]] = []

    def embed(texts: list[str]) -> list[np.ndarray]:
        calls.append(texts)
        return [np.ones(3) for _ in texts]  # every text identical: cosine 1

    paraphrase = "Staff who resign must tell their manager on paper, eight weeks ahead [S1]."
    assert not check_grounding(paraphrase, SOURCES).grounded
    result = check_grounding(paraphrase, SOURCES, embed=embed)
    assert result.grounded and len(calls) == 1
    assert "During probation the notice period is 2 weeks." in calls[0]  # passages are compared sentence by sentence


def test_a_short_answer_is_matched_with_the_passage_about_what_was_asked() -> None:
    sources = {"S1": "The probation period lasts 6 months.", "S2": "Units in server rooms are serviced every 6 months."}
    question = "How often must a unit in a server room be serviced?"
    assert check_grounding("6 months.", sources, question=question).claims[0].best == "S2"
    assert check_grounding("8 months.", sources, question=question).claims[0].best is None  # facts still count


def test_a_list_items_number_is_not_a_fact_the_passage_must_hold():
    """A tester's case: an answer that renumbered the quick start's steps had its verbatim step flagged."""
    sources = {"S1": "4. Fill in the warranty card. 5. Write the installation date in the service log."}
    result = check_grounding("6. Write the installation date in the service log [S1].", sources)
    assert result.grounded and result.claims[0].best == "S1"
    assert facts("6. Write the installation date in the service log.") == set()
    assert facts("2. Set the timer to 45 minutes.") == {"45"}  # the item's own figures still count
    timer = {"S1": "6. Set the timer to 45 minutes."}
    assert not check_grounding("6. Set the timer to 40 minutes [S1].", timer).grounded


def test_figures_are_numbers_and_codes_not_names_nor_list_markers():
    """What makes a no-passage answer an invention to withhold (validate_sources): a figure, not a word."""
    assert figures("The visitor barrier code for the Heron garage is 12345.") == {"12345"}
    assert figures("The unit uses R-410A [S1].") == {"410", "r-410a"}
    for general in ("1. Reset the unit", "- Check the oil", "**Note:** Reset it.", "Shakespeare wrote Hamlet."):
        assert figures(general) == set(), general


def test_a_claim_that_names_a_document_is_supported_only_by_that_documents_passages() -> None:
    """Tester, 1.5B: "What do the travel policy and the IT security policy say about laptops?" got "The travel policy
    states that company laptops must use full-disk encryption [S1]", S1 being the IT security policy's: grounded."""
    passages = {
        "S1": "Company laptops must use full-disk encryption and lock automatically after 5 minutes.",
        "S2": "Hotels are reimbursed up to 140 euros per night.",
    }
    documents = {"S1": "it-security-policy.md", "S2": "travel-policy.pdf"}
    wrong = "The travel policy states that company laptops must use full-disk encryption [S1]."
    result = check_grounding(wrong, passages, documents=documents)
    assert result.unsupported_sentences == [wrong] and result.sentences[0].named == ["travel-policy.pdf"]
    assert "no passage of travel-policy.pdf, which it names, supports it" in result.issues[0]
    assert check_grounding(wrong, passages).grounded  # without the names, as before: S1 supports its words
    right = "The IT security policy states that company laptops must use full-disk encryption [S1]."
    assert check_grounding(right, passages, documents=documents).sentences[0].best == "S1"
    unnamed = "Company laptops must use full-disk encryption [S1]."
    assert check_grounding(unnamed, passages, documents=documents).grounded
    # a name that is not what the sentence is attributed to (review): "the travel policy" as a thing, not a source
    mentioned = "Laptops taken abroad under the travel policy must use full-disk encryption [S1]."
    assert check_grounding(mentioned, passages, documents=documents).grounded
    # a document none of the passages came from: the office guide was not searched at all (dialogues probe, 1.5B)
    elsewhere = "The office guide states that company laptops must use full-disk encryption [S1]."
    assert check_grounding(elsewhere, passages, documents=documents).grounded  # unknown name: not a name
    named = check_grounding(elsewhere, passages, documents=documents, names=["office-guide.html"])
    assert named.unsupported_sentences == [elsewhere] and named.sentences[0].named == ["office-guide.html"]


def test_a_name_from_the_opening_of_the_passages_document_is_support_but_not_a_number() -> None:
    bays = {"S1": "Electric vehicles\n\nSix charging bays are reserved for electric vehicles."}
    opening = {"S1": "Parking Policy\n\nThis policy covers the staff car park at the Lindenhof office since 2019."}
    claim = "Six charging bays are reserved for electric vehicles at Lindenhof [S1]."
    assert check_grounding(claim, bays).claims[0].missing_facts == ["lindenhof"]  # a tester's right answer, replaced
    assert check_grounding(claim, bays, openings=opening).claims[0].best == "S1"
    dated = "Since 2019, six charging bays are reserved for electric vehicles [S1]."
    assert check_grounding(dated, bays, openings=opening).claims[0].missing_facts == ["2019"]


def test_the_checks_own_notes_are_not_claims_when_a_model_repeats_them() -> None:
    assert claim_kind(CONFLICT_NOTE) == (False, False)
    assert claim_kind("This answer does not cover the rest of the question: “how often?”") == (False, False)
    assert claim_kind("Another document gives the price of the Zephyr-9 as 240 euros.")[0] is True
