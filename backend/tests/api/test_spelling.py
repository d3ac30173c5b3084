"""A misspelt question, one in French and one naming a code of the documents, through the API: routed to the
documents, searched respelt or by an English translation (the fake model's), and saying what was searched."""

import pytest

from backend.tests.api.test_memory import ask, done, sources, status

TYPED = "how mny dayz of anual leeve do i get"  # a tester's question: it went to chat, whose model said "The
# documents do not say"


async def test_a_misspelt_question_is_searched_respelt_and_answered_from_the_passage_it_names(client):
    events = await ask(client, TYPED)
    assert done(events)["intent"] == "rag"
    assert done(events)["route_reason"].startswith("close to a document chunk")
    assert done(events)["rewritten_query"] == "how mny days of annual leave do i get"
    searched = "Searching documents for “how mny days of annual leave do i get”…"
    assert status(events, "retriever", "progress")["label"] == searched  # the user sees what was searched
    assert any("28 days of paid annual leave" in s["snippet"] for s in sources(events))


async def test_a_question_in_french_is_searched_by_its_english_translation_and_answered_from_the_passage(client):
    events = await ask(client, "Combien de jours de congé annuel ai-je ?")
    assert done(events)["route_reason"] == "in another language than the documents: searched by an English translation"
    searched = "Searching documents for “How many days of annual leave do I get?”…"
    assert status(events, "retriever", "progress")["label"] == searched
    assert any("28 days of paid annual leave" in s["snippet"] for s in sources(events))


async def test_a_question_naming_a_code_of_the_documents_is_searched_in_them(client):
    events = await ask(client, "What does error code E5 mean on the Zephyr-9?")  # a tester's: sent to chat
    assert done(events)["route_reason"] == "names a term of the documents (“Zephyr-9”)"
    assert any("zephyr-9" in s["document"] for s in sources(events))


@pytest.fixture
def settings(settings, request):
    """The default settings, with RAG_RESPELL as a test's parameter sets it."""
    return settings.model_copy(update={"respell": getattr(request, "param", True)})


@pytest.mark.parametrize("settings", [False], indirect=True)
async def test_with_respelling_off_the_misspelt_question_finds_no_passage(client):
    events = await ask(client, TYPED)
    assert done(events)["rewritten_query"] in ("", None, TYPED)
    assert not any("28 days of paid annual leave" in s["snippet"] for s in sources(events))
