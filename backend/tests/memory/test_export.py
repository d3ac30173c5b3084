"""The Markdown export says how each turn was answered, and that a cut turn was cut, without empty fields."""

from backend.memory.export import thread_markdown

THREAD = {"title": "Leave", "thread_id": "t1", "created_at": "2026-11-26T10:00:00Z"}


def turn(n: int, **values) -> dict:
    base = {"turn": n, "question": "What about remote work?", "answer": "Remote work: Employees", "sources": []}
    details = {"intent": "rag", "rewritten_query": "remote work", "provider": "embedded", "model": "qwen"}
    return {**base, **details, "latency_ms": 8123.0, "status": "completed", **values}


def test_a_stopped_turn_says_it_was_stopped_and_has_no_empty_route_query_or_zero_time():
    """Tester: a stopped turn's line read "_, query “”, embedded/qwen2.5-coder-1.5b, 0 ms_" with no word of the stop."""
    stopped = turn(2, intent="", rewritten_query="", latency_ms=0.0, status="stopped")
    text = thread_markdown(THREAD, [turn(1), stopped])  # type: ignore[list-item]
    assert "_rag, query “remote work”, embedded/qwen, 8123 ms_" in text
    assert "_Stopped before it finished, embedded/qwen_" in text
    assert "query “”" not in text and "_, " not in text and " 0 ms" not in text


def test_an_faq_answer_says_the_triage_answered_it_not_a_model_that_never_ran():
    faq = turn(1, triage={"route": "faq", "skip_llm": True}, latency_ms=12.0)
    assert "_answered by triage (faq), 12 ms_" in thread_markdown(THREAD, [faq])  # type: ignore[list-item]


def test_a_turn_stopped_before_its_first_token_says_so_and_lists_how_far_it_got():
    """Tester: a turn stopped while the model read its passages exported as "**Ragline:** " and nothing else, while
    the page said "Stopped before sources were listed · 3 passages found"."""
    steps = ["retriever: Searching documents (3 passages)", "generator: Writing answer…"]
    stopped = turn(1, answer="", intent="", rewritten_query="", latency_ms=0.0, status="stopped", steps=steps)
    text = thread_markdown(THREAD, [stopped])  # type: ignore[list-item]
    assert "**Ragline:** _(no answer had been written yet)_" in text
    assert "Steps:\n- retriever: Searching documents (3 passages)\n- generator: Writing answer…" in text
    assert "Steps:" not in thread_markdown(THREAD, [turn(1, steps=steps)])  # a finished turn: its answer says it
