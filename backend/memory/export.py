"""thread_markdown: a thread as a readable Markdown document with its sources."""

from backend.contract.types import PublicSource, StoredTurn


def _source_line(s: PublicSource) -> str:
    where = f", page {s['page']}" if s.get("page") else ""
    return f"- [{s['id']}] {s['document']}{where}: {s.get('snippet', '')}"


def thread_markdown(thread: dict, turns: list[StoredTurn]) -> str:
    """Title, then each turn's question, answer, sources and how it was answered."""
    out = [f"# {thread['title']}", "", f"Thread `{thread['thread_id']}`, started {thread['created_at']}.", ""]
    for t in turns:
        out += [f"## Turn {t['turn']}", "", f"**You:** {t['question']}", "", f"**Ragline:** {t['answer']}", ""]
        if t["sources"]:
            out += ["Sources:", *(_source_line(s) for s in t["sources"]), ""]
        how = f"{t['intent']}, query “{t['rewritten_query']}”, {t['provider']}/{t['model']}, {t['latency_ms']:.0f} ms"
        out += [f"_{how}_", ""]
    return "\n".join(out)
