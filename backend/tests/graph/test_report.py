"""A turn cut short keeps the step lines its status events showed, in the shape a finished turn's record has."""

from backend.contract.events import StatusEvent
from backend.graph.report import step_line, steps_said


def status(node: str, phase: str, label: str, detail: str | None = None) -> StatusEvent:
    return StatusEvent(node=node, phase=phase, label=label, detail=detail)  # type: ignore[arg-type]


def test_steps_said_are_what_each_ended_node_decided_and_the_label_of_the_one_still_at_work():
    events = [
        status("queue", "start", "Waiting for the previous question on this thread to finish (1 ahead)…"),
        status("queue", "end", "The previous question has finished"),
        status("router", "start", "Understanding question…"),
        status("router", "end", "Understanding question", "rag: a question about the documents"),
        status("retriever", "start", "Searching documents…"),
        status("retriever", "progress", "Searching employee-handbook.md…"),
        status("retriever", "end", "Searching documents", "8 passages"),
        status("generator", "start", "Writing answer…"),
        status("generator", "progress", "Waiting for the model: 1 ahead"),
    ]
    assert steps_said(events) == [
        "router: Understanding question (rag: a question about the documents)",
        "retriever: Searching documents (8 passages)",
        "generator: Waiting for the model: 1 ahead…",
    ]


def test_a_step_seen_without_its_start_still_counts_and_the_lines_are_those_a_finished_turn_keeps():
    events = [status("retriever", "progress", "Searching a.md…"), status("generator", "end", "Writing answer")]
    assert steps_said(events) == ["retriever: Searching a.md…", "generator: Writing answer"]
    assert step_line("retriever", "Searching documents", "8 passages") == "retriever: Searching documents (8 passages)"
    assert steps_said([]) == []


def test_a_search_still_at_work_on_a_document_named_with_brackets_is_kept_as_unfinished():
    events = [
        status("retriever", "start", "Searching documents…"),
        status("retriever", "progress", "Searching Budget (draft)…"),
    ]
    assert steps_said(events) == ["retriever: Searching Budget (draft)…"]
