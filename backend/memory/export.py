"""thread_markdown: a thread as a readable Markdown document with its sources."""

from backend.contract.types import PublicSource, StoredTurn


def _source_line(s: PublicSource) -> str:
    where = f", page {s['page']}" if s.get("page") else ""
    return f"- [{s['id']}] {s['document']}{where}: {s.get('snippet', '')}"


def thread_markdown(thread: dict, turns: list[StoredTurn]) -> str:
    """Title, then each turn's question, answer, sources and how it was answered."""
    out = [f"# {thread['title']}", "", f"Thread `{thread['thread_id']}`, started {thread['created_at']}.", ""]
    for t in turns:
        answer = t["answer"] or (NOTHING_WRITTEN if t["status"] in CUT else "")
        out += [f"## Turn {t['turn']}", "", f"**You:** {t['question']}", "", f"**Ragline:** {answer}", ""]
        if t["status"] in CUT and t.get("steps"):  # how far it got, as the page's timeline shows it
            out += ["Steps:", *(f"- {step}" for step in t["steps"]), ""]
        if t["sources"]:
            out += ["Sources:", *(_source_line(s) for s in t["sources"]), ""]
        out += [f"_{how_answered(t)}_", ""]
    return "\n".join(out)


NOTHING_WRITTEN = "_(no answer had been written yet)_"  # a turn cut before its first token
CUT = {"stopped": "Stopped before it finished", "interrupted": "Interrupted (the server stopped)", "failed": "Failed"}


def how_answered(turn: StoredTurn) -> str:
    """The turn's route, query, model and time, as far as it got: a cut turn says so and has no time or empty route;
    a turn the triage answered names its route instead of a model that never ran."""
    parts = [CUT[turn["status"]]] if turn["status"] in CUT else []
    if route := (turn.get("triage") or {}).get("route"):  # answered without the model: FAQ, small talk, a block
        parts += [f"answered by triage ({route.replace('_', ' ')})"]
    else:
        parts += [turn["intent"]] if turn["intent"] else []
        parts += [f"query “{turn['rewritten_query']}”"] if turn["rewritten_query"] else []
        parts += [f"{turn['provider']}/{turn['model']}"]
    parts += [f"{turn['latency_ms']:.0f} ms"] if turn["status"] == "completed" else []
    return ", ".join(parts)
