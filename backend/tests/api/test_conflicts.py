"""Two documents that state one figure differently, through the API: the answer keeps the one it cites and ends by
quoting the other, live, after a reload and on /v1 (a tester's mileage rates, 0.30 against 0.42 euros)."""

import asyncio
import json
import re

from langchain_core.messages import BaseMessage

from backend.contract.text import CONFLICT_NOTE
from backend.llm.fake import ScriptedChatModel, asks_answered, prompt_entries
from bench.lib.sse import parse_sse

EXPENSE_RULES = (
    b"Expense Rules for Field Technicians\n\n"
    b"Mileage is reimbursed at 0.42 euros per kilometre when a technician uses a private car.\n\n"
    b"Meals during a field visit are reimbursed up to 28 euros per day. Alcohol is never reimbursed.\n"
)
NOTE = (
    f"{CONFLICT_NOTE}expense-rules.txt says: “Mileage is reimbursed at 0.42 euros per "
    "kilometre when a technician uses a private car.”"
)
QUESTION = "What is the mileage rate when I use my private car?"  # the tester's


class CitesTheTravelPolicy(ScriptedChatModel):
    """Fake model that answers with the travel policy's rate, cited, and says nothing of the other document's."""

    def reply(self, messages: list[BaseMessage]) -> str:
        if asks_answered(messages[-1].text):
            return "Yes"
        entries = prompt_entries(messages[-1].text)
        policy = next(sid for sid, name, text in entries if "0.30 euros" in text and name.startswith("travel"))
        return f"Private cars used for business trips are reimbursed at 0.30 euros per kilometre [{policy}]."


class GivesBoth(ScriptedChatModel):
    """Fake model that states both rates, each cited."""

    def reply(self, messages: list[BaseMessage]) -> str:
        if asks_answered(messages[-1].text):
            return "Yes"
        entries = prompt_entries(messages[-1].text)
        policy = next(sid for sid, name, text in entries if "0.30 euros" in text and name.startswith("travel"))
        rules = next(sid for sid, name, _ in entries if name.startswith("expense-rules"))
        return (
            f"Private cars used for business trips are reimbursed at 0.30 euros per kilometre [{policy}]. "
            f"Field technicians get 0.42 euros per kilometre [{rules}]."
        )


async def ask(client, thread_id: str) -> list[tuple[str, dict]]:
    body = {"message": QUESTION, "thread_id": thread_id}
    events = parse_sse(await client.post("/api/chat/stream", json=body))
    assert events[-1][0] == "done", events[-1]
    return events


async def v1_stream(client) -> str:
    """The content a streaming /v1 client shows for QUESTION."""
    body = {"model": "ragline", "stream": True, "messages": [{"role": "user", "content": QUESTION}]}
    response = await client.post("/v1/chat/completions", json=body)
    chunks = [json.loads(line[6:]) for line in response.text.splitlines() if line.startswith("data: {")]
    return "".join(c["choices"][0]["delta"].get("content") or "" for c in chunks if c.get("choices"))


async def test_an_answer_whose_figure_another_document_states_differently_ends_by_quoting_it(app, client):
    await asyncio.to_thread(app.state.services.knowledge.ingestor.ingest, "expense-rules.txt", EXPENSE_RULES)
    app.state.services.deps.chat_model = CitesTheTravelPolicy()
    events = await ask(client, "c1")
    done = events[-1][1]
    replace = next(d for n, d in events if n == "replace")
    sources = {s["id"]: s["document"] for s in next(d for n, d in events if n == "sources")["sources"]}
    other = next(sid for sid, name in sources.items() if name == "expense-rules.txt")
    answer, note = done["answer"].split("\n\n")
    assert answer.startswith("Private cars used for business trips are reimbursed at 0.30 euros per kilometre [S")
    assert note == f"{NOTE} [{other}]"
    [conflict] = done["validation"]["sources"]["conflicts"]
    assert conflict["source"] == other and "0.42 euros" in conflict["says"] and "0.30 euros" in conflict["sentence"]
    assert sources[conflict["cited"]] == "travel-policy.pdf"
    assert f"another document gives a different figure ({other})" in replace["reason"]
    stored = (await client.get("/api/threads/c1")).json()["messages"][-1]
    assert stored["content"] == done["answer"] and stored["validation"]["sources"]["conflicts"] == [conflict]
    assert {s["id"] for s in stored["sources"]} == set(sources)
    ledger = (await client.get("/api/threads/c1/memory")).json()["qa_index"][-1]
    assert set(ledger["sources"]) == {conflict["cited"], other}


async def test_an_answer_that_states_both_figures_gets_no_note(app, client):
    await asyncio.to_thread(app.state.services.knowledge.ingestor.ingest, "expense-rules.txt", EXPENSE_RULES)
    app.state.services.deps.chat_model = GivesBoth()
    done = (await ask(client, "c2"))[-1][1]
    assert "Another document" not in done["answer"]
    assert "conflicts" not in done["validation"]["sources"]


async def test_without_the_setting_the_answer_gets_no_note(app, client):
    await asyncio.to_thread(app.state.services.knowledge.ingestor.ingest, "expense-rules.txt", EXPENSE_RULES)
    app.state.services.deps.settings.conflict_note = False
    app.state.services.deps.chat_model = CitesTheTravelPolicy()
    done = (await ask(client, "c3"))[-1][1]
    assert "0.30 euros per kilometre" in done["answer"] and "Another document" not in done["answer"]
    assert "conflicts" not in done["validation"]["sources"]


async def test_a_v1_stream_ends_with_the_note_on_the_other_documents_figure(app, client):
    await asyncio.to_thread(app.state.services.knowledge.ingestor.ingest, "expense-rules.txt", EXPENSE_RULES)
    app.state.services.deps.chat_model = CitesTheTravelPolicy()
    content = await v1_stream(client)
    assert content.startswith("Private cars used for business trips are reimbursed at 0.30 euros per kilometre")
    assert re.search(rf"\n\n{re.escape(NOTE)} \[S\d+\]$", content), content[-300:]
    assert "Correction" not in content


class CitesThePolicyWithALink(CitesTheTravelPolicy):
    """The same answer with a link no passage holds, which the output guardrail removes."""

    def reply(self, messages: list[BaseMessage]) -> str:
        text = super().reply(messages)
        return text if text == "Yes" else f"{text} Claim it at https://expenses.invalid/claim now."


async def test_a_v1_stream_whose_answer_the_output_guardrail_changed_gets_the_correction_not_only_the_note(app, client):
    await asyncio.to_thread(app.state.services.knowledge.ingestor.ingest, "expense-rules.txt", EXPENSE_RULES)
    app.state.services.deps.chat_model = CitesThePolicyWithALink()
    content = await v1_stream(client)
    correction = content.split("\n\n---\n", 1)[1]
    assert correction.startswith("**Correction:** Private cars used for business trips are reimbursed at 0.30")
    assert "https://expenses.invalid" not in correction and NOTE in correction
