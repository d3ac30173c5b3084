"""The thread-wide citation ledger: every source used in a thread keeps one id (S1, S2, …) for good."""

import hashlib
from typing import Any

from backend.contract.citations import cited_ids, rewrite_markers
from backend.contract.types import Source


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


def drop_unknown_citations(answer: str, known: set[str]) -> tuple[str, list[str]]:
    """The answer without citations of ids outside `known`, and the ids removed."""
    removed = [sid for sid in cited_ids(answer) if sid not in known]
    if not removed:
        return answer, []
    return rewrite_markers(answer, lambda ids: [i for i in ids if i in known]), removed
