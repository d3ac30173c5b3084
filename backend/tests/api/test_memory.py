import re

import httpx
from asgi_lifespan import LifespanManager
from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import BaseMessage

from backend.llm.fake import ScriptedChatModel, asks_answered, best_sentence, prompt_entries, scripted_reply
from backend.main import create_app
from backend.tests.conftest import fake_settings
from bench.lib.sse import parse_sse


async def ask(client, message: str, thread_id: str | None = None, **extra) -> list[tuple[str, dict]]:
    body = {"message": message, "thread_id": thread_id, **extra}
    events = parse_sse(await client.post("/api/chat/stream", json=body))
    assert events[-1][0] == "done", events[-1]
    return events


def status(events, node: str, phase: str = "end") -> dict:
    return next(d for n, d in events if n == "status" and d["node"] == node and d["phase"] == phase)


def sources(events) -> list[dict]:
    return next((d["sources"] for n, d in events if n == "sources"), [])


async def test_clarification_reuses_last_sources_with_the_same_ledger_ids(client):
    first = await ask(client, "@employee-handbook how many days of annual leave?")
    thread_id = first[0][1]["thread_id"]
    given = (await client.get(f"/api/threads/{thread_id}/memory")).json()["ledger"]  # shown or not (the intro)
    again = await ask(client, "Are you sure?", thread_id)
    assert status(again, "rewriter")["label"] == "Follow-up: reusing the last answer's sources"
    assert "retriever" in [d["node"] for n, d in again if n == "status"]
    first_ids = {s["id"]: s["snippet"] for s in given}
    second_ids = {s["id"]: s["snippet"] for s in sources(again)}
    assert second_ids and all(first_ids.get(sid) == snip for sid, snip in second_ids.items())


async def test_mention_scope_carries_into_follow_up_until_topic_changes(client):
    first = await ask(client, "@employee-handbook what is the notice period?")
    thread_id = first[0][1]["thread_id"]
    follow = await ask(client, "and during probation?", thread_id)
    assert "keeping the scope employee-handbook.md" in status(follow, "router")["detail"]
    searched = "Searching employee-handbook.md for “what is the notice period, during probation?”…"
    assert status(follow, "retriever", "progress")["label"] == searched  # what the follow-up was searched as
    assert {s["document"] for s in sources(follow)} == {"employee-handbook.md"}
    switch = await ask(client, "What does the IT Security Policy require for passwords?", thread_id)
    assert status(switch, "retriever", "start")["label"] == "Searching documents…"
    assert not [d for n, d in switch if n == "status" and d["node"] == "retriever" and d["phase"] == "progress"]
    assert status(switch, "rewriter")["label"] == "New question: searching afresh"


def done(events) -> dict:
    return events[-1][1]


async def test_a_turn_says_which_documents_it_searched_and_keep_scope_false_leaves_the_scope(client):
    first = await ask(client, "@employee-handbook what is the notice period?")
    thread_id = first[0][1]["thread_id"]
    handbook = ["employee-handbook.md"]
    assert done(first)["scope"] == {"documents": handbook, "source": "mention"}
    assert (await client.get(f"/api/threads/{thread_id}")).json()["scope"] == handbook
    follow = await ask(client, "and during probation?", thread_id)
    assert done(follow)["scope"] == {"documents": handbook, "source": "carried"}

    left = await ask(client, "and during probation?", thread_id, keep_scope=False)
    assert "keeping the scope" not in status(left, "router")["detail"]
    assert status(left, "retriever", "start")["label"] == "Searching documents…"
    searched = "Searching documents for “what is the notice period, during probation?”…"
    assert status(left, "retriever", "progress")["label"] == searched  # every document, not the handbook
    assert done(left)["scope"] is None
    detail = (await client.get(f"/api/threads/{thread_id}")).json()
    assert detail["scope"] == [] and (await client.get(f"/api/threads/{thread_id}/memory")).json()["scope"] == []
    scopes = [m["scope"] for m in detail["messages"] if m["role"] == "assistant"]
    assert scopes == [done(first)["scope"], done(follow)["scope"], None]  # what each turn searched, after a reload
    assert detail["messages"][3]["route_reason"] == "follow-up; keeping the scope employee-handbook.md"
    again = await ask(client, "and for managers?", thread_id)  # the scope stays ended for later follow-ups
    assert done(again)["scope"] is None


class QuotesTheClosestPassage(ScriptedChatModel):
    """Fake model that quotes only the passage sharing most words with the question (the default fake quotes every
    passage, the @mentioned document's opening lines included, which a model answering the question does not)."""

    def reply(self, messages: list[BaseMessage]) -> str:
        last = messages[-1].text
        if asks_answered(last) or "<knowledge_base>" not in last:
            return scripted_reply(messages)
        question = set(last.rsplit("Question:", 1)[-1].lower().split())
        entries = [(sid, text) for sid, _, text in prompt_entries(last)]
        sid, text = max(entries, key=lambda e: len(question & set(e[1].lower().split())))
        return f"{best_sentence(text, ' '.join(question)).rstrip('.')} [{sid}]."


async def test_a_follow_up_on_a_subject_its_carried_scope_does_not_cover_searches_every_document(app, client):
    app.state.services.deps.chat_model = QuotesTheClosestPassage()
    first = await ask(client, "@employee-handbook what is the notice period?")
    thread_id = first[0][1]["thread_id"]
    other = await ask(client, "and how often must passwords be changed?", thread_id)
    assert "keeping the scope employee-handbook.md" in status(other, "router")["detail"]  # a follow-up, by its words
    labels = [d["label"] for n, d in other if n == "status" and d["node"] == "retriever" and d["phase"] == "progress"]
    assert labels == [
        "Searching employee-handbook.md…",
        "Nothing on this in employee-handbook.md: searching every document…",
    ]
    assert "it-security-policy.md" in {s["document"] for s in sources(other)}
    assert done(other)["scope"] is None
    reason = "; nothing in employee-handbook.md matched, so every document was searched"
    assert done(other)["route_reason"].endswith(reason)
    assert (await client.get(f"/api/threads/{thread_id}")).json()["scope"] == []  # the topic moved on


async def test_a_follow_up_naming_two_other_documents_searches_each_of_them_not_the_kept_scope(client):
    """Tester: after "@office-guide when is reception staffed?", "Compare the meal allowance in the employee
    handbook and the travel policy…" ("and the" reads as a follow-up) kept the office guide's scope, found nothing
    there, and the answer came from one page of one of the two."""
    first = await ask(client, "@office-guide when is reception staffed?")
    thread_id = first[0][1]["thread_id"]
    question = "Compare the meal allowance in the employee handbook and the travel policy for a short travel day"
    other = await ask(client, question, thread_id)
    assert "keeping the scope" not in status(other, "router")["detail"]
    assert done(other)["scope"] is None and "nothing in office-guide.html matched" not in done(other)["route_reason"]
    ledger = (await client.get(f"/api/threads/{thread_id}/memory")).json()["ledger"]  # every passage the turns saw
    assert {"employee-handbook.md", "travel-policy.pdf"} <= {s["document"] for s in ledger}
    kept = (await ask(client, "@office-guide when is reception staffed?"))[0][1]["thread_id"]
    same = await ask(client, "and what does the office guide say about visitors?", kept)  # its own document: kept
    assert "keeping the scope office-guide.html" in status(same, "router")["detail"]
    manual = (await ask(client, "@zephyr-9-service-manual how often must it be serviced?"))[0][1]["thread_id"]
    guide = await ask(client, "and what does the guide say about resetting it?", manual)  # "guide": not a name
    assert "keeping the scope zephyr-9-service-manual.md" in status(guide, "router")["detail"]


async def test_a_qualifier_after_a_new_subject_asks_about_that_subject(client):
    """The tester's dialogue: "and on a short travel day?" after "what about meals?" was searched as the hotel
    question of the turn before ("What is the hotel limit per night, on a short travel day?") and answered "not
    found" although the meals answer had just given the figure."""
    thread_id = (await ask(client, "What is the hotel limit per night?"))[0][1]["thread_id"]
    meals = (await ask(client, "what about meals?", thread_id))[-1][1]
    hotel = "(asked after: What is the hotel limit per night?)"
    assert meals["rewritten_query"] == f"What about meals? {hotel}"
    short_day = (await ask(client, "and on a short travel day?", thread_id))[-1][1]
    assert short_day["rewritten_query"] == f"What about meals, on a short travel day? {hotel}"


class AnswersE7(ScriptedChatModel):
    """Fake model whose answer names E7 only, as the 1.5B model's did."""

    def reply(self, messages: list[BaseMessage]) -> str:
        return "Yes" if asks_answered(messages[-1].text) else "Error code E7 means the refrigerant pressure is low."


async def test_a_bare_code_after_and_is_the_last_question_with_the_code_swapped(app, client):
    """ "and E4?" after an E7 question was taken for a new topic (E4 is a name the conversation had not used),
    searched as it stands, and answered "not found" (tester)."""
    app.state.services.deps.chat_model = AnswersE7()
    thread_id = (await ask(client, "@zephyr-9-service-manual what does error code E7 mean?"))[0][1]["thread_id"]
    events = await ask(client, "and E4?", thread_id)
    assert events[-1][1]["rewritten_query"] == "what does error code E4 mean?"
    assert status(events, "rewriter")["label"] != "New question: searching afresh"


async def test_follow_up_keeps_earlier_ids_and_numbers_new_sources_after_them(client):
    first = await ask(client, "@zephyr-9-service-manual how often is servicing?")
    thread_id = first[0][1]["thread_id"]
    await ask(client, "How long is the warranty on the Zephyr-9?", thread_id)
    memory = (await client.get(f"/api/threads/{thread_id}/memory")).json()
    ids = [e["id"] for e in memory["ledger"]]
    assert ids == [f"S{n}" for n in range(1, len(ids) + 1)]
    keys = [(e["document"], tuple(e["chunks"])) for e in memory["ledger"]]
    assert len(keys) == len(set(keys))  # one id per source


async def test_memory_endpoint_summarises_exchanges_once_they_leave_the_history_window(tmp_path):
    app = create_app(fake_settings(tmp_path / "data", history_turns=1))
    async with (
        LifespanManager(app),
        httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://t", timeout=60) as client,
    ):
        model = app.state.services.deps.chat_model
        first = await ask(client, "How often must the Zephyr-9 be serviced?", mode="rag")
        thread_id = first[0][1]["thread_id"]
        await app.state.services.runner.summaries.wait(thread_id)
        assert not [c for c in model.calls if "running summary" in c[-1].text]  # still inside the window
        await ask(client, "Not the Zephyr-9 in general, only units in server rooms.", thread_id, mode="rag")
        await ask(client, "And the Zephyr-7?", thread_id, mode="rag")
        await app.state.services.runner.summaries.wait(thread_id)
        memory = (await client.get(f"/api/threads/{thread_id}/memory")).json()
    assert [e["id"] for e in memory["qa_index"]] == [1, 2, 3]
    assert memory["qa_index"][0]["question"] == "How often must the Zephyr-9 be serviced?"
    assert "Zephyr-9" in memory["qa_index"][0]["topics"]
    assert "only units in server rooms" in memory["summary"] and memory["summarized_upto"] == 2


async def test_what_did_we_discuss_is_answered_from_the_qa_index(client):
    first = await ask(client, "How often must the Zephyr-9 be serviced?", mode="rag")
    thread_id = first[0][1]["thread_id"]
    recap = await ask(client, "What did we discuss earlier?", thread_id)
    assert recap[-1][1]["intent"] == "chat"
    assert "How often must the Zephyr-9 be serviced?" in recap[-1][1]["answer"]


async def test_use_memory_false_skips_memory_read_and_write_but_records_the_turn(client):
    first = await ask(client, "How often must the Zephyr-9 be serviced?", mode="rag")
    thread_id = first[0][1]["thread_id"]
    private = await ask(client, "how much does it cost?", thread_id, use_memory=False, mode="rag")
    assert private[-1][1]["rewritten_query"] == "how much does it cost?"  # no history read
    memory = (await client.get(f"/api/threads/{thread_id}/memory")).json()
    assert [e["question"] for e in memory["qa_index"]] == ["How often must the Zephyr-9 be serviced?"]
    messages = (await client.get(f"/api/threads/{thread_id}")).json()["messages"]
    assert [m["content"] for m in messages if m["role"] == "user"][-1] == "how much does it cost?"


async def test_citation_to_unknown_source_is_removed_and_replace_event_sent(client, app):
    app.state.services.deps.chat_model = GenericFakeChatModel(messages=iter(["Two months [S1] and [S42]."]))
    events = await ask(client, "@employee-handbook notice period?")
    replace = next(d for n, d in events if n == "replace")
    assert replace["text"] == events[-1][1]["answer"] == "Two months [S1] and."
    assert "S42" in replace["reason"]
    assert [s["id"] for s in sources(events)] == ["S1"]


async def test_memory_survives_restart(settings):
    app = create_app(settings)
    async with (
        LifespanManager(app),
        httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://t") as c,
    ):
        thread_id = (await ask(c, "Hello there"))[0][1]["thread_id"]
        await app.state.services.runner.summaries.wait(thread_id)
    again = create_app(settings)
    async with (
        LifespanManager(again),
        httpx.AsyncClient(transport=httpx.ASGITransport(app=again), base_url="http://t") as c,
    ):
        memory = (await c.get(f"/api/threads/{thread_id}/memory")).json()
    assert memory["qa_index"][0]["question"] == "Hello there"


async def test_a_turn_answered_without_the_model_leaves_the_prompts_window_where_it_was(tmp_path):
    app = create_app(fake_settings(tmp_path / "data", history_turns=3))
    async with (
        LifespanManager(app),
        httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://t") as c,
    ):
        thread_id = (await ask(c, "Write a poem about the sea", mode="chat"))[0][1]["thread_id"]
        for topic in ("the wind", "a harbour", "a lighthouse"):
            await ask(c, f"Write a poem about {topic}", thread_id, mode="chat")
        config = {"configurable": {"thread_id": thread_id}}
        cut = (await app.state.services.graph.aget_state(config)).values
        assert cut["window_start"] > 0 and cut["window_note"]  # the window was cut for length
        thanks = await ask(c, "Thanks!", thread_id)
        assert status(thanks, "triage_intent")["label"] != "Recognising small talk"  # answered without the model
        after = (await app.state.services.graph.aget_state(config)).values
        assert (after["window_start"], after["window_note"]) == (cut["window_start"], cut["window_note"])


async def test_a_follow_up_after_a_code_question_is_searched_with_the_product_too(client):
    """Tester: after "What does error code E7 mean on the Zephyr-9?", "How long is the warranty?" was searched as
    "… (E7)", the code alone; both names are noted now. (That question itself is answered by the FAQ.)"""
    thread_id = (await ask(client, "What does error code E7 mean on the Zephyr-9?"))[0][1]["thread_id"]
    events = await ask(client, "Is it covered by the warranty?", thread_id)
    assert done(events)["rewritten_query"] == "Is it covered by the warranty? (E7, Zephyr-9)"
    found = {(s["document"], "3-year warranty" in s["snippet"]) for s in sources(events)}
    assert ("zephyr-9-service-manual.md", True) in found


async def test_what_about_a_new_subject_finds_its_passages_after_an_unrelated_question(client):
    """Tester, 2 of 2: "what about meals?" after the annual-leave question was searched as "What about meals? (asked
    after: How many days of annual leave …?)", whose leave words set the floor, so no meals passage was found and the
    answer was "not found". The subject is searched too, and its passages pass the floor by its word."""
    thread_id = (await ask(client, "How many days of annual leave do employees get?"))[0][1]["thread_id"]
    meals = await ask(client, "what about meals?", thread_id)
    assert done(meals)["rewritten_query"].startswith("What about meals? (asked after:")
    ledger = (await client.get(f"/api/threads/{thread_id}/memory")).json()["ledger"]
    assert any("Meals while travelling" in e["snippet"] for e in ledger), [e["snippet"][:60] for e in ledger]


async def test_a_follow_ups_search_counts_what_it_found_apart_from_the_passages_it_carries(client):
    """Tester: "6 passages found · none cited" over "Sources (4)": the count held the passages carried from earlier
    turns, the list only this search's."""
    thread_id = (await ask(client, "What are the core hours on Fridays?"))[0][1]["thread_id"]
    follow = await ask(client, "and how much does it cost for a second unit?", thread_id)
    found = status(follow, "retriever")["detail"]
    assert re.fullmatch(r"\d+ passages?, and \d+ from earlier turns", found), found


async def test_a_follow_up_after_a_document_was_replaced_reads_its_new_version_not_the_passage_it_reused(app, client):
    ingest = app.state.services.knowledge.ingestor.ingest
    import asyncio

    await asyncio.to_thread(ingest, "expense-rules.md", b"# Mileage\n\nThe mileage rate is 0.42 euros per km.\n")
    first = await ask(client, "@expense-rules what is the mileage rate?")
    thread_id = first[0][1]["thread_id"]
    assert "0.42" in done(first)["answer"]
    await asyncio.to_thread(ingest, "expense-rules.md", b"# Mileage\n\nThe mileage rate is 0.38 euros per km.\n")
    again = await ask(client, "Are you sure?", thread_id)  # reuses the last answer's sources (a clarification)
    assert "0.38" in done(again)["answer"] and "0.42" not in done(again)["answer"]
    assert all("0.38" in s["snippet"] for s in sources(again))


async def test_the_scope_of_a_thread_leaves_out_a_document_deleted_since(app, client):
    import asyncio

    await asyncio.to_thread(app.state.services.knowledge.ingestor.ingest, "warehouse.md", b"# Safety\n\nWear boots.\n")
    first = await ask(client, "@warehouse what must I wear?")
    thread_id = first[0][1]["thread_id"]
    assert (await client.get(f"/api/threads/{thread_id}")).json()["scope"] == ["warehouse.md"]
    doc_id = next(d["id"] for d in (await client.get("/api/documents")).json() if d["name"] == "warehouse.md")
    assert (await client.delete(f"/api/documents/{doc_id}")).status_code in (200, 204)
    assert (await client.get(f"/api/threads/{thread_id}")).json()["scope"] == []  # no banner for a deleted file
    assert (await client.get(f"/api/threads/{thread_id}/memory")).json()["scope"] == []
