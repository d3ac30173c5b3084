"""TurnWriter.correction: what a /v1 stream adds to its content when the checked answer differs from the tokens."""

from backend.completions import Conversation, ThreadChoice, TurnWriter
from backend.contract.events import DoneEvent, ReplaceEvent
from backend.contract.text import CONFLICT_NOTE
from backend.graph.nodes.validate_sources import NO_PASSAGE_LEAD

NOTE = f"{CONFLICT_NOTE}rules.txt says: “Mileage is 0.42 euros per kilometre.” [S2]"


def writer(answer: str, sources: dict, streamed: str) -> TurnWriter:
    out = TurnWriter("ragline", 0, ThreadChoice("t", "new", False), Conversation("q?", [], 0), "http://x")
    out.streamed = [streamed]
    out.replace = ReplaceEvent(text=answer, reason="r")
    out.done = DoneEvent(thread_id="t", answer=answer, intent="rag", rewritten_query="q", validation={"sources": {
        "grounded": True, "confidence": 1.0, "issues": [], "unsupported_sentences": [], **sources}})  # fmt: skip
    return out


def test_the_notes_the_checks_added_are_sent_alone():
    conflict = {"sentence": "s", "cited": "S1", "source": "S2", "says": "t"}
    answer = f"Mileage is 0.30 euros per kilometre [S1].\n\n{NOTE}"
    assert writer(answer, {"conflicts": [conflict]}, "Mileage is 0.30 euros [S1].").correction() == f"\n\n{NOTE}"


def test_a_paragraph_the_model_wrote_like_a_note_does_not_replace_the_no_passage_lead():
    model = f"Mileage is 0.30 euros per kilometre.\n\n{NOTE}"  # the model copied an earlier turn's note
    answer = f"{NO_PASSAGE_LEAD}\n\n{model}"
    sources = {"not_found": "no_passages", "original_text": model}
    assert writer(answer, sources, model).correction() == f"\n\n---\n**Correction:** {NO_PASSAGE_LEAD}"
