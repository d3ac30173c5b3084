"""Citation repair with fixed passages: add, re-point, remove, grouped markers, wrong numbers, not-found reply."""

import pytest

from backend.guardrails.grounding import check_grounding
from backend.guardrails.repair import QUOTE_CHARS, not_found_explained, not_found_reply, reason, repair, strip_markup

PASSAGES = {
    "S1": "Full-time employees receive 28 days of paid annual leave per year. Up to 5 unused days can be carried "
    "over to the next year and must be taken by 31 March.",
    "S2": "Visitors sign in at reception, show photo ID and receive a visitor badge.",
    "S3": "A standard service of a Zephyr-9 costs 240 euros per unit, including filters and labour.",
}
NAMES = {"S1": "employee-handbook.md", "S2": "office-guide.html", "S3": "zephyr-9-service-manual.md"}


def fixed(answer: str):
    return repair(answer, check_grounding(answer, PASSAGES), NAMES)


def test_a_supported_sentence_without_a_marker_gets_its_best_passage():
    out = fixed("Full-time employees receive 28 days of paid annual leave per year.")
    assert out.text == "Full-time employees receive 28 days of paid annual leave per year [S1]."
    assert [(c.kind, c.after) for c in out.changes] == [("add", ["S1"])]


def test_a_marker_to_a_passage_that_does_not_support_it_is_re_pointed():
    out = fixed("Up to 5 unused days can be carried over to the next year [S2].")
    assert out.text == "Up to 5 unused days can be carried over to the next year [S1]."
    change = out.changes[0]
    assert (change.kind, change.before, change.after) == ("repoint", ["S2"], ["S1"])
    assert "employee-handbook.md" in change.reason
    assert reason([change.as_dict()]).startswith("citation S2 → S1:")


def test_a_marker_on_a_claim_no_passage_supports_is_removed_and_the_claim_listed():
    out = fixed("A service costs 240 euros [S3]. The office has a rooftop pool and a gym [S3].")
    assert out.text == "A service costs 240 euros [S3]. The office has a rooftop pool and a gym."
    assert out.unsupported == ["The office has a rooftop pool and a gym."]
    assert [(c.kind, c.before) for c in out.changes] == [("remove", ["S3"])]


def test_a_number_one_digit_off_is_not_supported_so_its_marker_goes():
    out = fixed("A standard service of a Zephyr-9 costs 250 euros per unit [S3].")
    assert out.text == "A standard service of a Zephyr-9 costs 250 euros per unit."
    assert out.unsupported == [out.text] and "250" in out.changes[0].reason


def test_grouped_markers_keep_the_supporting_ids_and_drop_the_others():
    out = fixed("Unused days, up to 5, must be taken by 31 March [S1, S2].")
    assert out.text == "Unused days, up to 5, must be taken by 31 March [S1]."
    assert (out.changes[0].before, out.changes[0].after) == (["S1", "S2"], ["S1"])
    assert fixed("Up to 5 unused days can be carried over [S1][S3].").text.endswith("carried over [S1].")


def test_a_correct_answer_is_left_exactly_as_it_was():
    answer = "Visitors sign in at reception and receive a visitor badge [S2]. Thanks for asking."
    out = fixed(answer)
    assert out.text == answer and out.changes == [] and out.unsupported == []


@pytest.mark.parametrize(
    ("answer", "repaired"),
    [
        ("A standard service costs 240 euros per unit [S3]. [S3]", "A standard service costs 240 euros per unit [S3]."),
        ("Visitors sign in at reception [S2]. [S2] Thanks.", "Visitors sign in at reception [S2]. Thanks."),
        ("A service costs 240 euros [S3] per unit [S3].", "A service costs 240 euros [S3] per unit."),  # first stays
        ("Visitors receive a visitor badge [S2]. [S2], [S2]", "Visitors receive a visitor badge [S2]."),
    ],
)
def test_a_passage_cited_twice_in_one_sentence_is_cited_once(answer, repaired):
    out = fixed(answer)
    assert (out.text, out.changes, out.merged) == (repaired, [], [answer.removesuffix(" Thanks.")])


def test_not_found_reply_names_the_closest_passages():
    reply = not_found_reply([("zephyr-9-service-manual.md", "Warranty"), ("zephyr-9-quick-start.pdf", None)])
    assert reply.startswith("I could not find this in the documents.")
    assert "zephyr-9-service-manual.md (Warranty) and zephyr-9-quick-start.pdf" in reply


def test_not_found_explained_quotes_each_closest_sentence_and_cuts_a_long_one_at_a_word():
    long = "Guests " + "park in the four visitor spaces next to the entrance and " * 6 + "sign in."
    reply = not_found_explained(
        "How long can guests park?",
        [("office-guide.html", "Parking", long), ("travel-policy.pdf", None, "Taxis are reimbursed late at night.")],
    )
    opening, quotes = reply.split("\n\n")
    assert opening.startswith("I could not find this in the documents: none of the passages I found for “How long")
    first, second = quotes.split("\n")
    quoted = first.removeprefix("- office-guide.html (Parking): “").removesuffix("…”")
    assert long.startswith(quoted + " ") and len(quoted) < QUOTE_CHARS  # cut between two words
    assert second == "- travel-policy.pdf: “Taxis are reimbursed late at night.”"


@pytest.mark.parametrize(
    ("answer", "expected"),
    [
        (
            "According to the information in <knowledge_base>, it is 2 years [S1].",
            "According to the information in the documents, it is 2 years [S1].",
        ),
        ("According to the <knowledge_base> block, yes.", "According to the documents, yes."),
        ("The <knowledge_base> does not say.", "The documents does not say."),
        ("Plain answer with a < sign [S2].", "Plain answer with a < sign [S2]."),
    ],
)
def test_the_prompts_markup_reads_as_the_documents(answer, expected):
    assert strip_markup(answer) == expected


def test_a_marker_written_as_a_noun_becomes_its_documents_name_when_the_sentence_is_repaired():
    """Tester: "The documents that mention Zephyr-9 service tools are [S3] and [S4]." became "… are and [S2].":
    the repair removed the markers the sentence named its documents with."""
    passages = {
        "S2": "Taxis are reimbursed when carrying heavy equipment such as Zephyr-9 service tools.",
        "S3": "A standard service of a Zephyr-9 costs 240 euros per unit, including filters and labour.",
        "S4": "Visitors sign in at reception, show photo ID and receive a visitor badge.",
    }
    names = {"S2": "travel-policy.pdf", "S3": "zephyr-9-service-manual.md", "S4": "office-guide.html"}
    answer = (
        "The documents that mention Zephyr-9 service tools are [S3] and [S4]. "
        "[S4] states that taxis are reimbursed when carrying heavy equipment such as Zephyr-9 service tools."
    )
    result = check_grounding(answer, passages, None, 0.5, "", names)
    out = repair(answer, result, names)
    assert "are and" not in out.text and " states that" in out.text
    assert "are zephyr-9-service-manual.md and office-guide.html" in out.text
    # the second sentence credits the office guide (S4) with the travel policy's rule: named, and not in the sources
    assert "office-guide.html states that taxis are reimbursed when carrying heavy equipment" in out.text
    assert out.unsupported == [
        "office-guide.html states that taxis are reimbursed when carrying heavy equipment such as Zephyr-9 service "
        "tools."
    ]
    right = answer.replace("[S4] states", "[S2] states")  # the travel policy's own rule: supported, left as written
    fixed_right = repair(right, check_grounding(right, passages, None, 0.5, "", names), names)
    assert (
        fixed_right.text.endswith(
            ". [S2] states that taxis are reimbursed when carrying heavy equipment such as Zephyr-9 service tools."
        )
        and fixed_right.unsupported == []
    )


@pytest.mark.parametrize(
    ("answer", "repaired"),
    [
        (
            "Up to 5 unused days can be carried over [S2] and must be taken by 31 March [S2].",
            "Up to 5 unused days can be carried over and must be taken by 31 March [S1].",
        ),
        # review: markers mid-sentence before a verb, or after a preposition, cite the claim
        (
            "Up to 5 unused days [S2] can be carried over to the next year.",
            "Up to 5 unused days can be carried over to the next year [S1].",
        ),
        ("Visitors sign in [S1] and show photo ID.", "Visitors sign in and show photo ID [S2]."),
        ("A standard service [S1] costs 240 euros per unit.", "A standard service costs 240 euros per unit [S3]."),
        (
            "Up to 5 unused days can be carried over to [S3] the next year.",
            "Up to 5 unused days can be carried over to the next year [S1].",
        ),
    ],
)
def test_a_marker_that_cites_the_claim_is_not_taken_for_a_noun(answer, repaired):
    assert fixed(answer).text == repaired
