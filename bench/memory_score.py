"""The scripted dialogues of bench.memory and how each turn is scored against what a careful reader expects."""

from dataclasses import dataclass, field
from pathlib import Path

import yaml

from bench.lib import report
from bench.lib.stats import median

DECISIONS = ("fresh", "reuse", "both", "none")
CHECKS = (
    ("followup", "follow-up detection accuracy"),
    ("decision", "context decision accuracy (fresh/reuse/both/none)"),
    ("entities", "rewrite entity recall (expected substrings present)"),
    ("clean", "topic switches without old-topic terms in the rewrite"),
    ("scope", "scope accuracy (turns with an expected scope)"),
    ("intent", "intent (rag/chat) accuracy"),
    ("answer", "'what did we discuss?' answers naming the topics"),
)


@dataclass
class Expect:
    """One scripted user message and what a careful reader expects the app to make of it."""

    ask: str
    followup: bool
    decision: str
    entities: list[str] = field(default_factory=list)
    forbid: list[str] = field(default_factory=list)
    scope: list[str] | None = None
    intent: str = "rag"
    answer: list[str] = field(default_factory=list)
    note: str = ""


@dataclass
class Dialogue:
    """A scripted conversation: its id, the phenomena it covers, its turns."""

    id: str
    covers: list[str]
    turns: list[Expect]


def load_dialogues(path: Path, limit: int | None, only: str | None = None) -> list[Dialogue]:
    """The scripted dialogues: those named in `only` (comma-separated ids), then the first `limit` of them."""
    raw = yaml.safe_load(path.read_text())["dialogues"]
    dialogues = [Dialogue(d["id"], d.get("covers", []), [Expect(**t) for t in d["turns"]]) for d in raw]
    if only:
        wanted = only.split(",")
        unknown = set(wanted) - {d.id for d in dialogues}
        if unknown:
            raise SystemExit(f"unknown dialogue ids: {', '.join(sorted(unknown))}")
        dialogues = [d for d in dialogues if d.id in wanted]
    return dialogues[:limit] if limit else dialogues


def score(turn: Expect, got: dict) -> dict:
    """What matched the expectations, and the names of what did not.

    A turn that triage answered (FAQ, small talk) never reached the router: only its follow-up verdict is scored.
    """
    triaged = bool(got.get("triage"))
    query = got["rewritten_query"].lower()
    entities = [] if triaged else turn.entities
    found = [e for e in entities if any(alt.lower() in query for alt in e.split("|"))]
    dragged = [] if triaged else [f for f in turn.forbid if f.lower() in query]
    out: dict = {
        "followup": got["followup"] == turn.followup,
        "decision": None if triaged else got["decision"] == turn.decision,
        "entities_found": found,
        "entities_expected": len(entities),
        "contaminated": dragged,
        "scope": None if triaged or turn.scope is None else sorted(got["scope"]) == sorted(turn.scope),
        "intent": None if triaged else got["intent"] == turn.intent,
        "answer": None if triaged or not turn.answer else all(a.lower() in got["answer"].lower() for a in turn.answer),
    }
    misses = [k for k in ("followup", "decision", "scope", "intent", "answer") if out[k] is False]
    misses += ["entities"] if len(found) < len(entities) else []
    misses += ["contamination"] if dragged else []
    misses += ["error"] if got["error"] else []
    return {**out, "misses": misses}


def counted(rows: list[dict], key: str) -> tuple[int, int]:
    """How many rows scored True on a boolean check, out of those where it applies."""
    applicable = [r for r in rows if r["score"][key] is not None]
    return sum(bool(r["score"][key]) for r in applicable), len(applicable)


def accuracy(rows: list[dict]) -> dict[str, tuple[int, int]]:
    """(hits, total) for every check over the given turns."""
    out = {k: counted(rows, k) for k in ("followup", "decision", "scope", "intent", "answer")}
    out["entities"] = (
        sum(len(r["score"]["entities_found"]) for r in rows),
        sum(r["score"]["entities_expected"] for r in rows),
    )
    forbidding = [r for r in rows if r["expected"]["forbid"]]
    out["clean"] = (sum(not r["score"]["contaminated"] for r in forbidding), len(forbidding))
    return out


def accuracy_tables(rows: list[dict], markdown: bool) -> list[str]:
    """Every check over all turns and over turns 2+, then the context decisions expected vs got."""
    every, later = accuracy(rows), accuracy([r for r in rows if r["turn"] > 1])
    checks = [[label, report.count(*every[k]), report.count(*later[k])] for k, label in CHECKS]
    cells = {(e, g): 0 for e in (True, False) for g in (True, False)}
    for r in rows:
        if r["turn"] > 1:
            cells[(r["expected"]["followup"], r["got"]["followup"])] += 1
    routed = [r for r in rows if r["score"]["decision"] is not None]
    matrix = [
        [e, *(sum(r["expected"]["decision"] == e and r["got"]["decision"] == g for r in routed) for g in DECISIONS)]
        for e in DECISIONS
    ]
    return [
        report.table("Accuracy", ["metric", "all turns", "turns 2+"], checks, markdown),
        f"Follow-up detection on turns 2+: {cells[(True, True)]} true positives, {cells[(False, True)]} false "
        f"positives, {cells[(True, False)]} missed follow-ups, {cells[(False, False)]} true negatives.",
        report.table("Context decisions that reached the router", ["expected \\ got", *DECISIONS], matrix, markdown),
    ]


def timing_groups(rows: list[dict]) -> list[tuple[str, list[dict]]]:
    """First turns, later turns, later turns by the kind the rules detected; turns triage answered apart."""
    modelled = [r for r in rows if not r["got"]["triage"]]
    later = [r for r in modelled if r["turn"] > 1]
    groups = [("first turns", [r for r in modelled if r["turn"] == 1]), ("turns 2+", later)]
    groups.append(("turns 2+ detected as follow-ups", [r for r in later if r["got"]["followup"]]))
    groups += [
        (f"  kind {kind}", [r for r in later if r["got"]["kind"] == kind])
        for kind in ("clarification", "reference", "new")
    ]
    groups.append(("answered by triage (no model)", [r for r in rows if r["got"]["triage"]]))
    return groups


def timing_table(rows: list[dict], fake: bool, markdown: bool) -> str:
    """TTFT and total time by turn group, with the prompt tokens llama.cpp evaluated for the answer."""
    body = []
    for label, group in timing_groups(rows):
        answer_calls = [r["got"]["llama_calls"][-1] for r in group if r["got"]["llama_calls"]]
        body.append(
            [
                label,
                len(group),
                report.secs(median(r["got"]["ttft_s"] for r in group if r["got"]["ttft_s"] is not None)),
                report.secs(median(r["got"]["total_s"] for r in group)),
                "-" if fake else report.num(median(len(r["got"]["llama_calls"]) for r in group), digits=0),
                report.num(median(c["evaluated"] for c in answer_calls), digits=0),
                report.num(
                    median(c["evaluated"] / c["prompt_ms"] * 1000 for c in answer_calls if c["prompt_ms"]), digits=0
                ),
            ]
        )
    heads = ["turns", "n", "TTFT p50", "total p50", "model calls p50", "answer: evaluated p50", "prefill tok/s p50"]
    title = "Latency" + (" (fake model: TTFT means nothing here, only the rule accuracy counts)" if fake else "")
    return report.table(title, heads, body, markdown)


def miss_table(rows: list[dict], markdown: bool) -> str:
    """One row per miss: the turn, what was expected, what came, and the rule's own reason."""
    body = []
    for r in rows:
        e, g = r["expected"], r["got"]
        why = {
            "followup": (f"followup={e['followup']}", f"followup={g['followup']} ({g['kind']})", g["followup_reason"]),
            "decision": (e["decision"], g["decision"], g["decision_reason"] or g["router_detail"]),
            "entities": (", ".join(e["entities"]), f"«{g['rewritten_query']}»", g["followup_reason"]),
            "contamination": (f"no {', '.join(e['forbid'])}", f"«{g['rewritten_query']}»", g["followup_reason"]),
            "scope": (", ".join(e["scope"] or []) or "(all)", ", ".join(g["scope"]) or "(all)", g["router_detail"]),
            "intent": (e["intent"], g["intent"], g["router_detail"]),
            "answer": (", ".join(e["answer"]), g["answer"][:120].replace("\n", " "), g["router_detail"]),
            "error": ("no error", str(g["error"]), ""),
        }
        for miss in r["score"]["misses"]:
            expected, got, rule = (str(x).replace("|", "/") for x in why[miss])
            rule = f"answered by triage ({g['triage']})" if g["triage"] else rule
            body.append([f"{r['dialogue']} #{r['turn']}", r["ask"], miss, expected, got, rule])
    return report.table(
        f"Misses ({len(body)})", ["turn", "message", "miss", "expected", "got", "rule said"], body, markdown
    )
