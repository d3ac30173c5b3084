"""Grounding: per-sentence lexical support, exact numbers, citations mapped to passages, optional embeddings."""

import numpy as np

from backend.guardrails.grounding import check_grounding

SOURCES = {
    "S1": "The notice period for permanent employees is 2 months, given in writing to the line manager. "
    "During probation the notice period is 2 weeks.",
    "[S2]": "A standard service of a Zephyr-9 costs 240 euros per unit. Trips above 1,500 euros need finance approval.",
}


def test_grounded_answer_with_citations() -> None:
    result = check_grounding(
        "The notice period is 2 months, given in writing [S1]. A Zephyr-9 service costs 240 euros [S2]. "
        "Trips above 1500 euros need finance approval [S2].",
        SOURCES,
    )
    assert result.as_dict() == {"grounded": True, "confidence": 1.0, "issues": [], "unsupported_sentences": []}


def test_wrong_number_is_unsupported_even_with_matching_words() -> None:
    result = check_grounding("The notice period is 3 months [S1].", SOURCES)
    assert not result.grounded and result.confidence == 0.0
    assert result.unsupported_sentences == ["The notice period is 3 months [S1]."]
    assert result.issues == ["sentence 1: numbers not in its sources: 3"]


def test_sentence_is_checked_against_its_cited_passage_only() -> None:
    result = check_grounding("A Zephyr-9 service costs 240 euros per unit [S1].", SOURCES)
    assert not result.grounded


def test_unknown_citation_is_reported() -> None:
    result = check_grounding("The notice period is 2 months [S7].", SOURCES)
    assert not result.grounded and "cites unknown source(s): S7" in result.issues[0]


def test_unrelated_claim_is_unsupported_and_non_claims_are_skipped() -> None:
    result = check_grounding("Here you go. Employees get a company car and free lunch every day [S1].", SOURCES)
    assert result.unsupported_sentences == ["Employees get a company car and free lunch every day [S1]."]
    assert check_grounding("That is not in the documents.", SOURCES).grounded


def test_no_sources_means_claims_are_not_grounded() -> None:
    result = check_grounding("The notice period is 2 months.", {})
    assert not result.grounded and result.issues == ["no sources to check the answer against"]


def test_embedding_similarity_blends_into_support() -> None:
    calls: list[list[str]] = []

    def embed(texts: list[str]) -> list[np.ndarray]:
        calls.append(texts)
        return [np.ones(3) for _ in texts]  # every text identical: cosine 1

    paraphrase = "Staff who resign must tell their manager on paper, eight weeks ahead [S1]."
    assert not check_grounding(paraphrase, SOURCES).grounded
    result = check_grounding(paraphrase, SOURCES, embed=embed)
    assert result.grounded and len(calls) == 1
    assert result.sentences[0].semantic == 1.0
