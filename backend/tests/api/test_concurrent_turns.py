"""Several turns at once on one thread: they run one at a time, in arrival order, and none is crossed or lost."""

import asyncio

from backend.llm.fake import ScriptedChatModel
from bench.lib.faults import history_views
from bench.lib.sse import parse_sse

QUESTIONS = {  # question -> words its own answer must contain
    "How much does a Zephyr-9 service cost?": "240 euros",  # FAQ
    "@it-security-policy how long must passwords be?": "14 characters",
    "@zephyr-9-service-manual how long is the warranty?": "warranty",
    "@employee-handbook how much are meals reimbursed when travelling?": "45 euros",
    "Thanks!": "welcome",  # small talk
}


async def test_five_concurrent_turns_on_one_thread_each_answer_their_own_question_nothing_lost(app, client):
    app.state.services.deps.chat_model = ScriptedChatModel(tokens_per_second=200)  # slow enough to overlap

    async def ask(question: str) -> list[tuple[str, dict]]:
        body = {"message": question, "thread_id": "shared", "mode": "auto"}
        return parse_sse(await client.post("/api/chat/stream", json=body))

    results = await asyncio.gather(*(ask(q) for q in QUESTIONS))
    waited = 0
    for question, events in zip(QUESTIONS, results, strict=True):
        name, done = events[-1]
        assert name == "done" and done["question"] == question, (question, events[-1])
        assert QUESTIONS[question].lower() in done["answer"].lower(), (question, done["answer"])
        waited += any(n == "status" and d["node"] == "queue" for n, d in events)
    assert waited == 4  # every turn but the first waited for the thread, and said so
    seen = await history_views(client, "shared")
    assert seen["page"] == seen["export"] == seen["memory"]
    assert sorted(q for q, _ in seen["page"]) == sorted(QUESTIONS)  # each once: none lost, none doubled
    answers = {q: done["answer"] for q, (_, done) in ((q, e[-1]) for q, e in zip(QUESTIONS, results, strict=True))}
    assert all(answers[q] == a for q, a in seen["page"])
