"""The thread-wide citation ledger: every source used in a thread keeps one id (S1, S2, …) for good."""

import hashlib
import re
from typing import Any

from backend.graph.state import Source

CITATION_RE = re.compile(r"\[(S\d+)\]")


def source_key(s: Source) -> str:
    """Identity of a source: document, chunk span and a hash of its text."""
    span = s.get("chunks") or [s["chunk"], s["chunk"]]
    digest = hashlib.sha256(s["text"].encode()).hexdigest()[:16]
    return f"{s['document']}#{span[0]}-{span[1]}#{digest}"


def assign_ids(ledger: dict[str, dict], sources: list[Source]) -> list[Source]:
    """Sources renumbered with their ledger id; new ones get the next free ids (the ledger is not changed)."""
    by_key = {entry["key"]: sid for sid, entry in ledger.items()}
    next_n = 1 + max((int(sid[1:]) for sid in ledger), default=0)
    out: list[Source] = []
    for s in sources:
        key = source_key(s)
        sid = by_key.get(key)
        if sid is None:
            sid, next_n = f"S{next_n}", next_n + 1
            by_key[key] = sid
        if all(o["id"] != sid for o in out):
            out.append(Source(**{**s, "id": sid}))  # type: ignore[typeddict-item]
    return out


def entries(sources: list[Source]) -> dict[str, dict[str, Any]]:
    """Ledger entries for sources that carry their ledger ids."""
    return {s["id"]: {**s, "key": source_key(s)} for s in sources}


def as_sources(ledger: dict[str, dict], ids: list[str]) -> list[Source]:
    """The ledger entries for ids, as sources (unknown ids skipped)."""
    return [Source(**{k: v for k, v in ledger[i].items() if k != "key"}) for i in ids if i in ledger]  # type: ignore[typeddict-item]


def cited_ids(answer: str) -> list[str]:
    """Ids cited in an answer, in order of first citation."""
    return list(dict.fromkeys(CITATION_RE.findall(answer)))


def drop_unknown_citations(answer: str, known: set[str]) -> tuple[str, list[str]]:
    """The answer without citations of ids outside `known`, and the ids removed."""
    removed = [sid for sid in cited_ids(answer) if sid not in known]
    if not removed:
        return answer, []
    cleaned = CITATION_RE.sub(lambda m: m.group(0) if m.group(1) in known else "", answer)
    return re.sub(r"[ \t]+([.,;:])", r"\1", re.sub(r"[ \t]{2,}", " ", cleaned)).strip(), removed
