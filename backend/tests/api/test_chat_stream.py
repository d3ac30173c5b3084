import uuid

import httpx

from backend.llm.fake import asks_answered
from bench.lib.sse import parse_sse

CHECKS_IN = ["guardrail_input", "triage_relevance", "triage_faq", "triage_intent"]
CHECKS_OUT = ["validate_answerable", "validate_sources", "validate_tone", "guardrail_output", "memory"]
NODES_RAG = [*CHECKS_IN, "router", "rewriter", "retriever", "generator", *CHECKS_OUT]


async def stream(client: httpx.AsyncClient, **body) -> tuple[httpx.Response, list[tuple[str, dict]]]:
    response = await client.post("/api/chat/stream", json=body)
    return response, parse_sse(response)


async def test_stream_rag_turn_emits_contract_sequence(client):
    response, events = await stream(client, message="How often must the Zephyr-9 be serviced in a server room?")
    assert response.status_code == 200
    assert response.headers["content-type"].startswith("text/event-stream")
    assert response.headers["x-accel-buffering"] == "no"
    names = [n for n, _ in events]
    assert names[0] == "metadata" and names[-1] == "done"
    assert names[-2] == "sources"
    thread_id = events[0][1]["thread_id"]
    assert uuid.UUID(thread_id).version == 4 and events[0][1]["run_id"]
    statuses = [(d["node"], d["phase"]) for n, d in events if n == "status"]
    assert statuses == [(node, phase) for node in NODES_RAG for phase in ("start", "end")]
    assert all(d["label"] for n, d in events if n == "status")
    tokens = [d["text"] for n, d in events if n == "token"]
    done = events[-1][1]
    assert len(tokens) > 3 and all(tokens)
    assert "".join(tokens).strip() == done["answer"]
    assert "months" in done["answer"] and "[S1]" in done["answer"]
    assert done["thread_id"] == thread_id and done["intent"] == "rag"
    assert done["rewritten_query"] == "How often must the Zephyr-9 be serviced in a server room?"
    assert done["triage"]["triage_log"][0] == "guardrail_input: PASS" and done["triage"]["skip_llm"] is False
    assert {"sources", "tone", "output_guardrail"} <= set(done["validation"])
    sources = events[-2][1]["sources"]
    assert sources[0]["id"] == "S1" and sources[0]["document"] == "zephyr-9-service-manual.md"
    assert {"document", "page", "chunk", "snippet", "score"} <= set(sources[0])


async def test_stream_tokens_come_only_from_generator(client):
    _, events = await stream(client, message="How often must the Zephyr-9 be serviced?")
    _, events = await stream(client, message="how much does it cost?", thread_id=events[0][1]["thread_id"])
    order = [(n, d.get("node"), d.get("phase")) for n, d in events]
    first_token = next(i for i, e in enumerate(order) if e[0] == "token")
    last_token = max(i for i, e in enumerate(order) if e[0] == "token")
    assert order[first_token - 1] == ("status", "generator", "start")
    assert order[last_token + 1] == ("status", "generator", "end")
    assert "rewriter" in [d.get("node") for _, d in events]


async def test_stream_chat_turn_has_no_sources_and_skips_retrieval(client):
    _, events = await stream(client, message="Write a poem about the sea")
    names = [n for n, _ in events]
    assert "sources" not in names
    starts = [d["node"] for n, d in events if n == "status" and d["phase"] == "start"]
    assert starts == [*CHECKS_IN, "router", "generator", *CHECKS_OUT]
    assert events[-1][1]["intent"] == "chat"


async def test_small_talk_is_answered_without_router_or_model_but_still_checked_and_saved(client, app):
    model = app.state.services.deps.chat_model
    model.calls.clear()
    _, events = await stream(client, message="Hello!")
    starts = [d["node"] for n, d in events if n == "status" and d["phase"] == "start"]
    assert starts == [*CHECKS_IN, "guardrail_output", "memory"]
    assert model.calls == []
    assert events[-1][1]["triage"]["route"] == "greeting" and events[-1][1]["answer"]
    assert [d["text"] for n, d in events if n == "token"] == [events[-1][1]["answer"]]


async def test_faq_question_is_answered_from_the_faq_in_auto_mode_only(client, app):
    model = app.state.services.deps.chat_model
    model.calls.clear()
    _, faq = await stream(client, message="How much does a Zephyr-9 service cost?")
    assert faq[-1][1]["triage"]["route"] == "faq" and "240 euros" in faq[-1][1]["answer"]
    assert faq[-1][1]["triage"]["faq"]["sources"] == ["zephyr-9-service-manual.md"]
    assert model.calls == []
    # the answer cites the manual's passage that states it, which opens in one click (tester: it had none)
    assert faq[-1][1]["answer"].endswith("[S1]")
    cited = faq[-2][1]["sources"]
    assert faq[-2][0] == "sources" and [(s["id"], s["document"], s.get("cited", True)) for s in cited] == [
        ("S1", "zephyr-9-service-manual.md", True)
    ]
    text = (await client.get(f"/api/documents/{cited[0]['doc_id']}/text")).json()["text"]
    assert "240 euros" in text[cited[0]["start"] : cited[0]["end"]]
    _, documents = await stream(client, message="How much does a Zephyr-9 service cost?", mode="rag")
    assert documents[-1][1]["triage"]["route"] == "" and model.calls


async def test_are_you_sure_after_an_faq_answer_checks_it_against_the_faq_passage_not_in_chat(client, app):
    """Tester, 1.5B: after the FAQ's warranty answer, "Are you sure?" went to chat and got "Yes, I am sure. The
    warranty details are clearly stated in the <knowledge_base> block." Now it goes on from the FAQ's passage."""
    model = app.state.services.deps.chat_model
    _, faq = await stream(client, message="How much does a Zephyr-9 service cost?")
    assert faq[-1][1]["triage"]["route"] == "faq" and faq[-1][1]["intent"] == "rag"
    model.calls.clear()
    _, sure = await stream(client, message="Are you sure?", thread_id=faq[0][1]["thread_id"])
    done = sure[-1][1]
    assert done["intent"] == "rag" and "follow-up" in done["route_reason"]
    asked = [c for c in model.calls if not asks_answered(c[-1].text)][0][-1].text
    assert "240 euros" in asked and "Check your last answer against the sources" in asked
    assert "<knowledge_base>\n[S1] zephyr-9-service-manual.md" in asked  # the FAQ's passage, by its ledger id


async def test_stream_mention_targets_one_document_and_labels_search(client):
    _, events = await stream(client, message="@it-security-policy what about passwords?")
    labels = [d["label"] for n, d in events if n == "status" and d["node"] == "retriever" and d["phase"] != "end"]
    assert labels == ["Searching documents…", "Searching it-security-policy.md…"]
    assert {s["document"] for s in events[-2][1]["sources"]} == {"it-security-policy.md"}


async def test_follow_up_prompt_starts_with_the_first_turns_prompt_and_answer_byte_for_byte(client, app):
    model = app.state.services.deps.chat_model
    answers = lambda: [c for c in model.calls if not asks_answered(c[-1].text)]  # noqa: E731 (not the verdicts)
    _, first = await stream(client, message="What is the notice period?", mode="rag")
    thread_id = first[0][1]["thread_id"]
    first_prompt = [m.text for m in answers()[-1]]
    _, second = await stream(client, message="and during probation?", thread_id=thread_id, mode="rag")
    assert second[-1][0] == "done" and second[-1][1]["thread_id"] == thread_id
    follow_up = [m.text for m in answers()[-1]]
    assert follow_up[: len(first_prompt)] == first_prompt  # the cached prefix: system, then turn 1 as sent
    assert follow_up[len(first_prompt)] == first[-1][1]["answer"]
    assert "What is the notice period?" in first_prompt[-1]
    assert follow_up[-1].endswith("Question: What is the notice period, during probation?")  # the fragment made whole


async def test_an_elliptical_follow_up_is_read_whole_but_kept_in_the_users_words(client, app):
    model = app.state.services.deps.chat_model
    answers = lambda: [c for c in model.calls if not asks_answered(c[-1].text)]  # noqa: E731 (not the verdicts)
    _, first = await stream(client, message="What is the notice period?", mode="rag")
    thread_id = first[0][1]["thread_id"]
    _, second = await stream(client, message="and during probation?", thread_id=thread_id, mode="rag")
    assert answers()[-1][-1].text.endswith("Question: What is the notice period, during probation?")
    assert second[-1][1]["rewritten_query"] == "What is the notice period, during probation?"
    _, third = await stream(client, message="Thanks, that helps a lot today", thread_id=thread_id, mode="chat")
    assert answers()[-1][-1].text.endswith("Thanks, that helps a lot today")  # the completion is this turn's only
    thread = (await client.get(f"/api/threads/{thread_id}")).json()
    assert [m["content"] for m in thread["messages"] if m["role"] == "user"] == [
        *("What is the notice period?", "and during probation?", "Thanks, that helps a lot today")
    ]
    memory = (await client.get(f"/api/threads/{thread_id}/memory")).json()
    assert [line["question"] for line in memory["qa_index"]][1] == "and during probation?"


async def test_chat_json_returns_answer_with_sources(client):
    response = await client.post("/api/chat", json={"message": "How much does a Zephyr-9 service cost?", "mode": "rag"})
    assert response.status_code == 200
    body = response.json()
    assert set(body) == {
        *("thread_id", "question", "answer", "sources", "intent", "rewritten_query", "route_reason"),
        *("scope", "triage", "validation", "usage"),
    }
    assert body["validation"]["sources"]["grounded"] is True and body["triage"]["route"] == ""
    assert body["usage"] is None  # the fake model reports no token counts (the embedded one does)
    assert "240 euros" in body["answer"] and body["sources"][0]["document"] == "zephyr-9-service-manual.md"


async def test_a_question_decorated_with_tags_emphasis_a_pasted_marker_and_an_emoji_still_finds_its_passage(client):
    """Tester: the router found a chunk close to this question, then the search gave 0 passages (the decoration
    moved its embedding under the relevance floor) and the answer said no document matched."""
    message = "<script>alert(1)</script> **bold** [S9] what is the notice period? 🙂"
    body = (await client.post("/api/chat", json={"message": message})).json()
    assert body["intent"] == "rag" and body["sources"], body["answer"]
    assert body["sources"][0]["document"] == "employee-handbook.md"
    assert body["question"] == message  # the thread keeps what was typed


async def test_stream_sends_heartbeat_pings_while_answer_is_slow(tmp_path):
    from asgi_lifespan import LifespanManager

    from backend.main import create_app
    from backend.tests.conftest import fake_settings

    app = create_app(fake_settings(tmp_path, heartbeat_seconds=1, fake_tokens_per_second=8))
    async with (
        LifespanManager(app),
        httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://t") as c,
    ):
        response = await c.post(
            "/api/chat/stream", json={"message": "Write a poem about the sea", "mode": "chat"}, timeout=30
        )
    assert response.text.count(": ping") >= 1
    assert parse_sse(response)[-1][0] == "done"
