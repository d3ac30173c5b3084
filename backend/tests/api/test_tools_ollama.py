"""The bounded tool loop, end to end through the app on the Ollama wire-format double."""

import pytest

from backend.tests.api.test_chat_ollama import REFUNDS, ollama_app, stream_turn
from backend.tests.ollama_double import Reply

pytestmark = pytest.mark.usefixtures("no_model_env")  # every test here ignores the caller's RAG_* shell


async def test_model_searches_with_a_tool_and_cites_the_found_source_by_ledger_id(ollama, tmp_path):
    ollama.script(
        Reply(text="", tool_calls=[{"name": "search_knowledge_base", "arguments": {"query": "refund annual plans"}}]),
        Reply(text="Annual plans: within 30 days [S1]."),
    )
    async with ollama_app(tmp_path, ollama.base_url) as (app, client):
        await app.state.services.knowledge.ingest_now("refunds.md", REFUNDS.encode())
        events = await stream_turn(client, "Hello, tell me about refunds", "chat")
        thread_id = events[0][1]["thread_id"]
        memory = (await client.get(f"/api/threads/{thread_id}/memory")).json()
    first, second = ollama.requests_to("/api/chat")[:2]
    assert {t["function"]["name"] for t in first.body["tools"]} == {
        "search_knowledge_base",
        "retrieve_past_answer",
        "lookup_past_conversation",
    }
    tool_message = second.body["messages"][-1]
    assert tool_message["role"] == "tool" and "[S1] refunds.md" in tool_message["content"]
    tokens = "".join(d["text"] for n, d in events if n == "token")
    assert tokens == "Annual plans: within 30 days [S1]."
    sources = next(d["sources"] for n, d in events if n == "sources")
    assert [(s["id"], s["document"]) for s in sources] == [("S1", "refunds.md")]
    assert [e["id"] for e in memory["ledger"]] == ["S1"]


async def test_tool_rounds_are_bounded_then_the_model_must_answer(ollama, tmp_path):
    loop = Reply(text="", tool_calls=[{"name": "lookup_past_conversation", "arguments": {"topic": "refunds"}}])
    ollama.script(loop, loop, loop, Reply(text="We have not discussed refunds yet."))
    async with ollama_app(tmp_path, ollama.base_url) as (_, client):
        events = await stream_turn(client, "What did we discuss about refunds?", "chat")
    chat_requests = ollama.requests_to("/api/chat")
    assert events[-1][1]["answer"] == "We have not discussed refunds yet."
    assert [bool(r.body.get("tools")) for r in chat_requests[:4]] == [True, True, True, False]
