"""Respelling of misspelt question words against the documents' vocabulary (rag/spelling.py)."""

from collections.abc import Callable

from backend.rag.spelling import Speller, edits_within, respelt

ENGLISH = frozenset({"timer", "time", "leave", "annual", "handle", "restate", "receive", "days", "quantitative"})
DOCS = [
    "Annual leave: full-time employees receive 28 days of annual leave.",
    "The timer switches the unit off. Handle the filter with care. Quantitative results follow.",
]


def corpus(docs: list[str]) -> tuple[dict[str, int], Callable[[list[str]], list[tuple[str, int, str]]]]:
    """The texts as documents d0, d1, … at version 1, and the reader of their texts."""
    return {f"d{i}": 1 for i in range(len(docs))}, lambda ids: [(d, 1, docs[int(d[1:])]) for d in ids]


def reader(texts: dict[str, tuple[int, str]], reads: list[list[str]]) -> Callable[[list[str]], list]:
    """The reader of the documents' texts ({id: (version, text)}, read when called), noting the ids each read asks."""

    def read(ids: list[str]) -> list[tuple[str, int, str]]:
        reads.append(sorted(ids))
        return [(d, *texts[d]) for d in ids]

    return read


def fixes(text: str, docs: list[str] = DOCS, readable=None) -> dict[str, str]:
    return Speller(ENGLISH).fixes(text, *corpus(docs), readable)


def test_a_misspelt_word_is_respelt_as_the_documents_spell_it():
    assert fixes("how many dayz of anual leeve do I get?") == {"dayz": "days", "anual": "annual", "leeve": "leave"}
    assert respelt("How many dayz of Anual leeve?", {"dayz": "days", "anual": "annual", "leeve": "leave"}) == (
        "How many days of Annual leave?"  # capitalised as typed
    )


def test_two_neighbouring_letters_swapped_count_as_one_edit():
    assert edits_within("recieve", "receive", 1) == 1
    assert fixes("when do I recieve it") == {"recieve": "receive"}
    assert fixes("when do I recieev it") == {}  # two swaps


def test_an_english_word_the_documents_lack_is_not_respelt_into_one_they_have():
    assert fixes("Does it have a timer or a time switch?", ["Set the tame switch."]) == {}
    assert fixes("Does the unit have a timer?", ["The time is shown."]) == {}


def test_a_word_with_an_ending_added_to_a_known_word_is_not_a_misspelling():
    assert fixes("Which handlers restated it?", ["The handles were related."]) == {}


def test_two_edits_are_too_many_even_for_a_long_word():
    assert edits_within("qualitative", "quantitative", 1) is None
    assert fixes("What is the qualitativ answer?") == {}


def test_short_words_non_ascii_words_and_parts_of_codes_are_left_alone():
    docs = ["The Zephyr-9 serves the congress hall; the fan runs hot."]
    assert fixes("Does the fna of the Zephyr-8 serve the congé hall?", docs) == {}
    assert fixes("Is the Zephyx-9 fine?", docs) == {}


def test_a_word_only_a_document_the_reader_cannot_read_holds_is_not_offered():
    assert fixes("anual leeve", readable=lambda word: word != "annual") == {"leeve": "leave"}


def test_only_documents_changed_since_the_last_read_are_read_again():
    speller, reads = Speller(ENGLISH), []
    texts = {"price": (1, "The purchase price is 10."), "leave": (1, "Annual leave is 28 days.")}
    read = reader(texts, reads)

    assert speller.fixes("the purchse price", {"leave": 1}, read) == {}
    assert speller.fixes("the purchse price", {"leave": 1}, read) == {}  # same versions: nothing read
    assert speller.fixes("the purchse price", {"leave": 1, "price": 1}, read) == {"purchse": "purchase"}
    texts["price"] = (2, "The sale price is 10.")
    assert speller.fixes("the purchse price", {"leave": 1, "price": 2}, read) == {}  # version 1's words are gone
    assert speller.fixes("the anual leeve", {"leave": 1, "price": 2}, read) == {"anual": "annual", "leeve": "leave"}
    assert speller.fixes("the anual leeve", {"price": 2}, read) == {}  # a removed document's words are gone too
    assert reads == [["leave"], ["price"], ["price"]]


def test_a_document_changed_while_it_is_read_is_counted_at_the_version_read_and_read_again_next_time():
    # review: the texts of version 2 were counted as version 1's and that vocabulary kept for the state the
    # question saw, so later questions missed the words of documents counted under no key
    speller, reads = Speller(ENGLISH), []
    texts = {"price": (2, "The sale price is 10."), "leave": (1, "Annual leave is 28 days.")}
    read = reader(texts, reads)

    assert speller.fixes("the anual leeve", {"leave": 1, "price": 1}, read) == {"anual": "annual", "leeve": "leave"}
    assert speller.fixes("the sael price", {"leave": 1, "price": 1}, read) == {}  # not remembered: read again
    assert speller.fixes("the sael price", {"leave": 1, "price": 2}, read) == {"sael": "sale"}
    assert speller.fixes("the sael price", {"leave": 1, "price": 2}, read) == {"sael": "sale"}
    assert reads == [["leave", "price"], ["price"], ["price"]]


def test_a_turn_that_saw_an_older_state_does_not_leave_a_newer_one_without_its_words():
    # review: a turn on the older state took a document's new version off between another turn's two steps, and
    # that turn remembered a vocabulary without it for the newer state until the documents changed again
    speller = Speller(ENGLISH)
    texts = {"leave": (2, "Annual leave is 30 days."), "codes": (1, "The ZX-41 is made by Zephyrcorp.")}
    newer = {"leave": 2, "codes": 1}

    def read(ids: list[str]) -> list[tuple[str, int, str]]:
        return [(d, *texts[d]) for d in ids]

    def read_while_an_older_turn_runs(ids: list[str]) -> list[tuple[str, int, str]]:
        speller.fixes("the anual leeve", {"leave": 1}, lambda _: [("leave", 1, "Leave is 28 days.")])
        return read(ids)

    assert speller.fixes("the anual leeve", {"leave": 2}, read) == {"anual": "annual", "leeve": "leave"}
    assert speller.terms("Is the ZX-41 by Zephyrcorp?", newer, read_while_an_older_turn_runs) == ["ZX-41", "Zephyrcorp"]
    assert speller.fixes("the anual leeve", newer, read) == {"anual": "annual", "leeve": "leave"}


def test_words_of_versions_taken_off_are_not_kept_numbered_for_good():
    # second review: every word ever seen stayed numbered, so documents that change often grew the table without end
    speller = Speller(ENGLISH)
    for version in range(1, 1001):
        texts = [("log", version, f"Ticket entry{version}a and entry{version}b closed.")]
        speller.fixes("the ticcket", {"log": version}, lambda _, t=texts: t)
    assert len(speller._names) < 1100  # 2,001 words were seen; a handful are counted
    assert speller.fixes("the ticcket", {"log": 1000}, lambda _: []) == {"ticcket": "ticket"}


def test_a_document_with_no_text_at_its_version_is_not_read_on_every_question():
    reads = []

    def read(ids: list[str]) -> list[tuple[str, int, str]]:
        reads.append(sorted(ids))
        return [("leave", 1, "Annual leave is 28 days.")] if "leave" in ids else []

    speller = Speller(ENGLISH)
    for _ in range(3):
        assert speller.fixes("the anual leeve", {"leave": 1, "empty": 1}, read) == {"anual": "annual", "leeve": "leave"}
    assert reads == [["empty", "leave"]]


def test_without_an_english_vocabulary_nothing_is_respelt():
    assert Speller(frozenset()).fixes("anual leeve", *corpus(DOCS)) == {}


def test_the_documents_own_words_and_codes_in_a_question_are_its_terms():
    docs = ["The Zephyr-9 by Northwind shows E4 and E7. The car park at Lindenhof has six charging bays."]
    speller = Speller(ENGLISH | {"code", "error", "mean", "park"})
    terms = speller.terms("What does error code E5 mean on the Zephyr-9 at Lindenhof?", *corpus(docs))
    assert terms == ["Zephyr-9", "Lindenhof"]  # E5 is no code of the documents; English words are no terms
    assert speller.terms("What time is it in Oslo?", *corpus(docs)) == []


def test_a_capitalised_word_inside_a_sentence_is_a_name_the_user_means_and_is_not_respelt():
    docs = ["Pietro leads the team. Annual leave is 28 days."]
    assert fixes("Who is Pietra?", docs) == {}  # review: it became the documents' Pietro
    assert fixes("Pietra leeve", docs) == {"pietra": "pietro", "leeve": "leave"}  # opening a sentence: any word


def test_a_question_typed_with_decomposed_accents_is_read_as_its_letters():
    assert fixes("Combien de jours de conge\u0301 ?", ["The Congo basin."]) == {}  # not "conge" -> "congo"


def test_two_words_are_too_few_to_call_a_question_foreign():
    speller = Speller(ENGLISH | {"what", "explain"})
    assert not speller.foreign("What is ChatGPT?", *corpus(DOCS))
    assert not speller.foreign("Explain Terraform", *corpus(DOCS))
    assert speller.foreign("Combien de jours de congé annuel ai-je ?", *corpus(DOCS))
    assert speller.foreign("年假有多少天？", *corpus(DOCS))


def test_a_term_only_a_document_the_reader_cannot_read_holds_is_not_named():
    docs = ["The ZX-41 is made by Zephyrcorp."]
    speller = Speller(ENGLISH)
    assert speller.terms("Is the ZX-41 by Zephyrcorp?", *corpus(docs)) == ["ZX-41", "Zephyrcorp"]
    assert speller.terms("Is the ZX-41 by Zephyrcorp?", *corpus(docs), readable=lambda t: False) == []
