"""Respelling of misspelt question words against the documents' vocabulary (rag/spelling.py)."""

from backend.rag.spelling import Speller, edits_within, respelt

ENGLISH = frozenset({"timer", "time", "leave", "annual", "handle", "restate", "receive", "days", "quantitative"})
DOCS = [
    "Annual leave: full-time employees receive 28 days of annual leave.",
    "The timer switches the unit off. Handle the filter with care. Quantitative results follow.",
]


def fixes(text: str, docs: list[str] = DOCS, readable=None) -> dict[str, str]:
    return Speller(ENGLISH).fixes(text, 1, lambda: docs, readable)


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


def test_the_vocabulary_is_read_again_when_the_documents_change():
    speller, reads = Speller(ENGLISH), []

    def texts(docs):
        return lambda: reads.append(1) or docs

    assert speller.fixes("the purchse price", 1, texts(DOCS)) == {}
    assert speller.fixes("the purchse price", 1, texts(["The purchase price is 10."])) == {}  # same version: cached
    assert speller.fixes("the purchse price", 2, texts(["The purchase price is 10."])) == {"purchse": "purchase"}
    assert len(reads) == 2


def test_without_an_english_vocabulary_nothing_is_respelt():
    assert Speller(frozenset()).fixes("anual leeve", 1, lambda: DOCS) == {}


def test_the_documents_own_words_and_codes_in_a_question_are_its_terms():
    docs = ["The Zephyr-9 by Northwind shows E4 and E7. The car park at Lindenhof has six charging bays."]
    speller = Speller(ENGLISH | {"code", "error", "mean", "park"})
    terms = speller.terms("What does error code E5 mean on the Zephyr-9 at Lindenhof?", 1, lambda: docs)
    assert terms == ["Zephyr-9", "Lindenhof"]  # E5 is no code of the documents; English words are no terms
    assert speller.terms("What time is it in Oslo?", 1, lambda: docs) == []


def test_a_capitalised_word_inside_a_sentence_is_a_name_the_user_means_and_is_not_respelt():
    docs = ["Pietro leads the team. Annual leave is 28 days."]
    assert fixes("Who is Pietra?", docs) == {}  # review: it became the documents' Pietro
    assert fixes("Pietra leeve", docs) == {"pietra": "pietro", "leeve": "leave"}  # opening a sentence: any word


def test_a_question_typed_with_decomposed_accents_is_read_as_its_letters():
    assert fixes("Combien de jours de conge\u0301 ?", ["The Congo basin."]) == {}  # not "conge" -> "congo"


def test_two_words_are_too_few_to_call_a_question_foreign():
    speller = Speller(ENGLISH | {"what", "explain"})
    assert not speller.foreign("What is ChatGPT?", 1, lambda: DOCS)
    assert not speller.foreign("Explain Terraform", 1, lambda: DOCS)
    assert speller.foreign("Combien de jours de congé annuel ai-je ?", 1, lambda: DOCS)
    assert speller.foreign("年假有多少天？", 1, lambda: DOCS)


def test_a_term_only_a_document_the_reader_cannot_read_holds_is_not_named():
    docs = ["The ZX-41 is made by Zephyrcorp."]
    speller = Speller(ENGLISH)
    assert speller.terms("Is the ZX-41 by Zephyrcorp?", 1, lambda: docs) == ["ZX-41", "Zephyrcorp"]
    assert speller.terms("Is the ZX-41 by Zephyrcorp?", 1, lambda: docs, readable=lambda t: False) == []
