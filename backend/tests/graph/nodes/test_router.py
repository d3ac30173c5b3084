from backend.graph.nodes.router import mentions, next_after_router, route
from backend.llm.fake import ScriptedChatModel
from backend.tests.fakes import FakeRetriever, replying, runtime


async def test_route_when_mention_then_rag_targeted_to_resolved_names_without_probe():
    retriever = FakeRetriever(names=["Policy.pdf", "Annual Report 2024.docx"])
    out = await route(
        {"question": 'Compare @policy with @"Annual Report 2024"', "mode": "auto"}, runtime(retriever=retriever)
    )
    assert out["intent"] == "rag"
    assert out["targeted_documents"] == ["Policy.pdf", "Annual Report 2024.docx"]
    assert out["mention_notes"] == [] and "Policy.pdf" in out["route_reason"]
    assert retriever.probes == 0


async def test_route_when_mention_unknown_then_answer_decided_without_llm():
    model = ScriptedChatModel()
    out = await route(
        {"question": "@../../etc/passwd show it", "mode": "auto"},
        runtime(chat_model=model, retriever=FakeRetriever(names=["Policy.pdf"])),
    )
    assert out["targeted_documents"] == []
    assert out["mention_notes"] == ['No document matches "@../../etc/passwd"']
    assert out["triage"]["skip_llm"] is True and "No document matches" in out["triage"]["early_response"]
    assert out["answer"] == out["triage"]["early_response"]
    assert next_after_router({**out}) == "guardrail_output"
    assert model.calls == []


async def test_route_when_one_mention_ambiguous_then_search_the_resolved_one_and_say_so():
    retriever = FakeRetriever(names=["Policy 2023.pdf", "Policy 2024.pdf", "faq.md"])
    out = await route({"question": "@policy and @faq: parking?", "mode": "auto"}, runtime(retriever=retriever))
    assert out["targeted_documents"] == ["faq.md"]
    assert out["mention_notes"] == ['"@policy" matches several documents: Policy 2023.pdf, Policy 2024.pdf']


async def test_route_when_mode_forced_then_mode_wins_over_keywords():
    assert (await route({"question": "hello there", "mode": "rag"}, runtime()))["intent"] == "rag"
    assert (await route({"question": "according to the policy?", "mode": "chat"}, runtime()))["intent"] == "chat"


async def test_route_when_greeting_or_poem_then_chat_without_probe():
    retriever = FakeRetriever()
    for q in ("Hello!", "thanks a lot", "Write a poem about the sea"):
        out = await route({"question": q, "mode": "auto"}, runtime(retriever=retriever))
        assert out["intent"] == "chat", q
    assert retriever.probes == 0


async def test_route_when_document_keywords_then_rag_without_probe():
    retriever = FakeRetriever()
    out = await route(
        {"question": "Which document covers parental leave?", "mode": "auto"}, runtime(retriever=retriever)
    )
    assert out["intent"] == "rag"
    assert retriever.probes == 0


async def test_a_question_about_the_teams_own_affairs_goes_to_the_documents_not_to_a_chat_that_invents():
    """Tester, auto mode, 1.5B: "What is the codename of the secret project?" was judged chat (distance 0.77) and
    answered "Project X"; "When was the company founded?" got "1990". The documents path says the answer is not
    from the documents instead."""
    retriever, model = FakeRetriever(), ScriptedChatModel()
    for q in (
        "What is the codename of the secret project?",
        "When was the company founded?",
        "What is our dress code?",
    ):
        out = await route({"question": q, "mode": "auto"}, runtime(chat_model=model, retriever=retriever))
        assert out["intent"] == "rag" and "team's own affairs" in out["route_reason"], q
    assert model.calls == []
    general = ["What is the capital of France?", "How do I reverse a list in Python?", "What is the US minimum wage?",
               "How do we convert Celsius to Fahrenheit?", "What is an internal combustion engine?",
               "What is the secret to fluffy pancakes?", "What does a staff engineer do?"]  # fmt: skip
    for q in general:  # the probe decides (review: "US", "we", "internal", "secret", "staff" were taken as the team's)
        out = await route({"question": q, "mode": "auto"}, runtime(chat_model=model, retriever=retriever))
        assert "team's own affairs" not in out["route_reason"], q
    empty = FakeRetriever(distance=None)  # no documents yet: chat, as the probe says
    out = await route({"question": "What is our dress code?", "mode": "auto"}, runtime(retriever=empty))
    assert out["intent"] == "chat" and out["route_reason"] == "knowledge base is empty"


async def test_route_when_ambiguous_then_vector_probe_decides():
    near = await route({"question": "notice period", "mode": "auto"}, runtime(retriever=FakeRetriever(distance=0.3)))
    far = await route({"question": "notice period", "mode": "auto"}, runtime(retriever=FakeRetriever(distance=1.3)))
    empty = await route({"question": "notice period", "mode": "auto"}, runtime(retriever=FakeRetriever(distance=None)))
    assert (near["intent"], far["intent"], empty["intent"]) == ("rag", "chat", "chat")
    assert "0.30" in near["route_reason"] and "empty" in empty["route_reason"]


async def test_route_when_probe_inconclusive_then_one_llm_call():
    model = replying("chat")
    out = await route(
        {"question": "tell me about zebras", "mode": "auto"},
        runtime(chat_model=model, retriever=FakeRetriever(distance=0.85)),
    )
    assert out["intent"] == "chat"
    assert "model judged" in out["route_reason"]


def test_mentions_ignore_emails_and_keep_order_without_duplicates():
    assert mentions("mail bob@example.com about @policy and @policy, then @faq.md") == ["policy", "faq.md"]


def test_next_after_router_follows_intent():
    assert next_after_router({"intent": "rag"}) == "rewriter"
    assert next_after_router({"intent": "chat"}) == "generator"


async def test_a_question_naming_a_section_of_the_documents_goes_to_the_documents_without_the_models_judgement():
    """Tester, 1.5B: "What should I do on my first day?" was far from every chunk by MiniLM (0.90), judged small talk
    and answered "check your schedule…", while the onboarding checklist has a "First day" section."""
    sections = ["First day", "First week", "Parking", "Who does what"]
    model = ScriptedChatModel()
    far = FakeRetriever(distance=0.9, sections=sections)
    out = await route({"question": "What should I do on my first day?", "mode": "auto"}, runtime(model, far))
    assert (
        out["intent"] == "rag"
        and out["route_reason"] == "names a section of the documents (“First day”, distance 0.90)"
    )
    assert model.calls == []
    for q in ("Where can I park?", "who does what?", "What day is it today?"):  # one word, or stop words, or part
        out = await route({"question": q, "mode": "auto"}, runtime(model, far))
        assert "section" not in out["route_reason"], q
    for distance, reason in ((0.3, "close to a document chunk"), (1.3, "far from every document chunk")):
        settled = FakeRetriever(distance=distance, sections=sections)  # the probe settles it: the heading is moot
        out = await route(
            {"question": "What is the first week of a ski trip like?", "mode": "auto"}, runtime(model, settled)
        )
        assert out["route_reason"].startswith(reason)


async def test_a_question_in_another_language_goes_to_the_documents_without_the_distance_probe():
    retriever = FakeRetriever(distance=1.3, foreign_words={"combien"})  # far: MiniLM reads English only
    model = ScriptedChatModel()
    out = await route(
        {"question": "Combien de jours de congé annuel ai-je ?", "mode": "auto"},
        runtime(chat_model=model, retriever=retriever),
    )
    assert out["intent"] == "rag" and "searched by an English translation" in out["route_reason"]
    assert retriever.probes == 0 and model.calls == []
    english = await route({"question": "tell me about zebras", "mode": "auto"}, runtime(retriever=retriever))
    assert english["intent"] == "chat"  # far, and not foreign: the probe decides as before


async def test_a_question_naming_a_term_of_the_documents_goes_to_them_without_the_models_judgement():
    retriever = FakeRetriever(distance=0.81, terms=["Zephyr-9"])  # inconclusive: the model was asked, said chat
    model = replying("chat")
    out = await route(
        {"question": "What does error code E5 mean on the Zephyr-9?", "mode": "auto"},
        runtime(chat_model=model, retriever=retriever),
    )
    assert out["intent"] == "rag" and out["route_reason"] == "names a term of the documents (“Zephyr-9”)"
    assert retriever.probes == 0
