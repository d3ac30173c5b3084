#!/usr/bin/env python3
"""Benchmark conversation memory: follow-up detection, context decision, rewrite entities, scope, follow-up TTFT.

    .venv/bin/python scripts/bench_memory.py [--model qwen2.5-coder-0.5b|qwen2.5-coder-1.5b] [--dialogues N]
                                             [--only id,id] [--json out.json] [--fake] [--no-faq]
                                             [--no-summary-wait] [--rescore earlier.json]

Every dialogue of data/dialogues.yaml runs in its own thread through the real app (backend.main:create_app,
in-process over httpx.ASGITransport inside asgi_lifespan.LifespanManager, temp data dir, the sample corpus
ingested, temperature 0), turn by turn over POST /api/chat/stream. After each turn the graph state gives the
follow-up verdict, the context decision, the rewritten query and the scope, which are scored against the
dialogue's expectations; every miss is listed with the rule's own reason, so the rules can be improved.

Timing: httpx 0.28's ASGITransport hands over the body only when the response is complete, so the app is wrapped
in an ASGI shim that notes when each SSE frame leaves it. TTFT = request sent -> first `token` frame sent.
With the embedded model, llama.cpp's log (stderr) is captured to count the prompt tokens each call evaluated:
a follow-up whose prefix (system prompt + history) is still in the slot's KV cache evaluates only the new tail.
By default the script waits, untimed, for the rolling-summary update that follows each turn (a user reading
the answer); --no-summary-wait sends the next turn at once, which cancels it.

The FAQ triage (data/faq.yaml) is on, as in the product: a turn it answers never reaches the router, so only its
follow-up verdict is scored and it is timed apart; --no-faq turns it off to exercise the memory rules on every turn.
--fake uses the scripted fake model (RAG_LLM_BACKEND=fake): the rules are exercised exactly, the "rewrite" is the
question itself plus the entity rule, and TTFT means nothing. --rescore scores an earlier --json run against the
current YAML without running anything. Figures are reported, never enforced: exit code 0.
"""

import argparse
import asyncio
import hashlib
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import httpx
import yaml
from asgi_lifespan import LifespanManager

from backend.main import create_app
from backend.rag.knowledge import ingest_paths
from backend.settings import Settings
from backend.tests.sse import parse_sse

REPO = Path(__file__).resolve().parents[1]
DOCS = REPO / "data" / "documents"
DIALOGUES = REPO / "data" / "dialogues.yaml"
WARM_UP = "What is the Zephyr-9?"
STARTUP_TIMEOUT_S = 300  # loading the model on a busy machine takes longer than asgi-lifespan's default 5 s
LLAMA_TIMING_RE = re.compile(r"id\s+(\d+) \| task (\d+) \| prompt eval time =\s*([\d.]+) ms /\s*(\d+) tokens")


@dataclass
class Turn:
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
    id: str
    covers: list[str]
    turns: list[Turn]


def load_dialogues(path: Path, limit: int | None, only: str | None = None) -> list[Dialogue]:
    """The scripted dialogues: those named in `only` (comma-separated ids), then the first `limit` of them."""
    raw = yaml.safe_load(path.read_text())["dialogues"]
    dialogues = [Dialogue(d["id"], d.get("covers", []), [Turn(**t) for t in d["turns"]]) for d in raw]
    if only:
        wanted = only.split(",")
        unknown = set(wanted) - {d.id for d in dialogues}
        if unknown:
            raise SystemExit(f"unknown dialogue ids: {', '.join(sorted(unknown))}")
        dialogues = [d for d in dialogues if d.id in wanted]
    return dialogues[:limit] if limit else dialogues


# ---------------------------------------------------------------- instruments


class SendClock:
    """ASGI wrapper noting when each response body chunk leaves the app (the transport buffers the body)."""

    def __init__(self, app: Any) -> None:
        self.app = app
        self.chunks: list[tuple[float, bytes]] = []

    async def __call__(self, scope: dict, receive: Any, send: Any) -> None:
        async def timed(message: dict) -> None:
            if message["type"] == "http.response.body":
                self.chunks.append((time.perf_counter(), message.get("body", b"")))
            await send(message)

        await self.app(scope, receive, timed if scope["type"] == "http" else send)

    def first(self, marker: bytes) -> float | None:
        """When the first chunk containing `marker` was sent."""
        return next((t for t, body in self.chunks if marker in body), None)


class LlamaLog:
    """llama.cpp's stderr, captured to a file; yields the calls finished since the last read."""

    def __init__(self, path: Path | None) -> None:
        self.path, self.offset = path, 0

    def calls(self) -> list[dict]:
        """Per finished llama.cpp task: slot, prompt tokens evaluated (those not found in the KV cache), time."""
        if self.path is None or not self.path.exists():
            return []
        with self.path.open("rb") as f:
            f.seek(self.offset)
            text = f.read().decode(errors="replace")
        cut = text.rfind("\n") + 1  # leave a half-written line for the next read
        self.offset += len(text[:cut].encode(errors="replace"))
        return [
            {"slot": int(s), "task": int(t), "evaluated": int(n), "prompt_ms": float(ms)}
            for s, t, ms, n in LLAMA_TIMING_RE.findall(text[:cut])
        ]


@contextmanager
def stderr_to(path: Path | None) -> Iterator[None]:
    """Send fd 2 (where llama.cpp logs) to a file for the duration; nothing when path is None."""
    if path is None:
        yield
        return
    saved = os.dup(2)
    with path.open("ab") as f:
        os.dup2(f.fileno(), 2)
    try:
        yield
    finally:
        os.dup2(saved, 2)
        os.close(saved)


# ---------------------------------------------------------------- running the dialogues


async def run_turn(client: httpx.AsyncClient, clock: SendClock, app: Any, thread: str, ask: str) -> dict:
    """Send one message, then read what the graph decided, from its state and the status events."""
    clock.chunks.clear()
    started = time.perf_counter()
    response = await client.post("/api/chat/stream", json={"message": ask, "thread_id": thread})
    events = parse_sse(response.text)
    first_token, ended = clock.first(b"event: token"), (clock.chunks[-1][0] if clock.chunks else time.perf_counter())
    state = (await app.state.services.graph.aget_state({"configurable": {"thread_id": thread}})).values
    status = {(d["node"], d["phase"]): d for name, d in events if name == "status"}
    done = next((d for name, d in events if name == "done"), {})
    error = next((d for name, d in events if name == "error"), None)
    followup, decision = state.get("followup") or {}, state.get("context_decision") or {}
    triage = state.get("triage") or {}
    return {
        "followup": bool(followup.get("is_followup")),
        "kind": followup.get("kind", "-"),
        "followup_reason": followup.get("reason", ""),
        "decision": decision.get("decision", "none"),
        "decision_reason": decision.get("reason", ""),
        "rewritten_query": done.get("rewritten_query") or state.get("rewritten_query", ""),
        "scope": list(state.get("targeted_documents") or []),
        "context_documents": sorted({d["document"] for d in state.get("documents") or []}),
        "scope_source": state.get("scope_source", ""),
        "intent": state.get("intent", ""),
        "triage": triage_label(triage) if triage.get("skip_llm") else None,
        "router_detail": (status.get(("router", "end")) or {}).get("detail"),
        "rewriter_label": (status.get(("rewriter", "end")) or {}).get("label"),
        "answer": done.get("answer", ""),
        "error": error,
        "ttft_s": None if first_token is None else first_token - started,
        "total_s": ended - started,
    }


async def run_dialogue(client: httpx.AsyncClient, clock: SendClock, app: Any, d: Dialogue, args: Any) -> list[dict]:
    """Every turn of one dialogue in a new thread; results with their expectations and scores."""
    thread, rows = f"bench-{d.id}", []
    llama = app.state.llama_log
    for n, turn in enumerate(d.turns, 1):
        got = await run_turn(client, clock, app, thread, turn.ask)
        got["llama_calls"] = llama.calls()
        waited = time.perf_counter()
        if not args.no_summary_wait:
            await app.state.services.summaries.wait(thread)
        got["summary_wait_s"] = time.perf_counter() - waited
        got["summary_calls"] = llama.calls()
        rows.append({"dialogue": d.id, "turn": n, "ask": turn.ask, "expected": asdict(turn), "got": got})
        rows[-1]["score"] = score(turn, got)
        print(f"  {d.id} #{n}: {brief(rows[-1])}", flush=True)
    memory = (await client.get(f"/api/threads/{thread}/memory")).json()
    rows[-1]["qa_index_len"] = len(memory.get("qa_index", []))
    return rows


def triage_label(triage: dict) -> str:
    """What answered the turn before the model: 'faq: notice-period', 'greeting', 'mention'…"""
    faq = (triage.get("faq") or {}).get("id")
    return f"{triage.get('route')}: {faq}" if faq else str(triage.get("route"))


def brief(row: dict) -> str:
    """One progress line for a turn."""
    g, s = row["got"], row["score"]
    ttft = "-" if g["ttft_s"] is None else f"{g['ttft_s']:.2f}s"
    flags = ("ok" if not s["misses"] else "MISS " + ",".join(s["misses"])) + (
        f" [{g['triage']}]" if g["triage"] else ""
    )
    return f"{g['kind']}/{g['decision']} ttft {ttft} total {g['total_s']:.2f}s «{g['rewritten_query']}» {flags}"


def score(turn: Turn, got: dict) -> dict:
    """What matched the expectations, and the names of what did not.

    A turn that triage answered (FAQ, small talk) never reached the router: only its follow-up verdict is scored
    (the product treated it as standalone); decision, entities, scope and intent do not apply to it.
    """
    if got.get("triage"):
        turn = Turn(turn.ask, turn.followup, got["decision"])
    query = got["rewritten_query"].lower()
    found = [e for e in turn.entities if any(alt.lower() in query for alt in e.split("|"))]
    dragged = [f for f in turn.forbid if f.lower() in query]
    out: dict = {
        "followup": got["followup"] == turn.followup,
        "decision": None if got.get("triage") else got["decision"] == turn.decision,
        "entities_found": found,
        "entities_expected": len(turn.entities),
        "contaminated": dragged,
        "scope": None if turn.scope is None else sorted(got["scope"]) == sorted(turn.scope),
        "intent": None if got.get("triage") else got["intent"] == turn.intent,
        "answer": None if not turn.answer else all(a.lower() in got["answer"].lower() for a in turn.answer),
    }
    misses = [k for k in ("followup", "decision", "scope", "intent", "answer") if out[k] is False]
    misses += ["entities"] if len(found) < len(turn.entities) else []
    misses += ["contamination"] if dragged else []
    misses += ["error"] if got["error"] else []
    return {**out, "misses": misses}


def settings_for(args: Any, data_dir: Path) -> Settings:
    """The product's settings with a temp data dir, temperature 0 and the chosen backend and model."""
    backend = "fake" if args.fake else "embedded"
    extra = {"fake_tokens_per_second": 0.0} if args.fake else {"embedded_model": args.model}
    faq = None if args.no_faq else REPO / "data" / "faq.yaml"
    return Settings(llm_backend=backend, data_dir=data_dir, temperature=0.0, faq_path=faq, **extra)


async def bench(args: Any, work: Path, dialogues: list[Dialogue]) -> tuple[dict, list[dict]]:
    """Start the app, ingest the corpus, warm up, run every dialogue; returns (run info, turn rows)."""
    settings = settings_for(args, work / "data")
    app = create_app(settings)
    clock = SendClock(app)
    app.state.llama_log = LlamaLog(None if args.fake else work / "llama.log")
    started = time.perf_counter()
    async with LifespanManager(app, startup_timeout=STARTUP_TIMEOUT_S, shutdown_timeout=STARTUP_TIMEOUT_S):
        startup = time.perf_counter() - started
        ingested = await ingest_paths(app.state.services.knowledge, [DOCS])
        transport = httpx.ASGITransport(app=clock)
        async with httpx.AsyncClient(transport=transport, base_url="http://bench", timeout=900) as client:
            print(f"app up in {startup:.1f}s, {len(ingested)} documents ingested; warming up", flush=True)
            warm = await run_turn(client, clock, app, "bench-warm-up", WARM_UP)
            await app.state.services.summaries.wait("bench-warm-up")
            app.state.llama_log.calls()
            rows = []
            for d in dialogues:
                rows += await run_dialogue(client, clock, app, d, args)
        info = {
            "backend": settings.llm_backend,
            "model": app.state.services.models.model,
            "reranker": app.state.services.knowledge.reranker.name,
            "faq_triage": not args.no_faq,
            "startup_s": startup,
            "warm_up_ttft_s": warm["ttft_s"],
            "documents": sorted(ingested),
        }
    return info, rows


# ---------------------------------------------------------------- report


def share(hits: int, total: int) -> str:
    """'hits/total (NN%)', or '-' when there is nothing to count."""
    return f"{hits}/{total} ({100 * hits / total:.0f}%)" if total else "-"


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


LABELS = ("fresh", "reuse", "both", "none")
CHECKS = (
    ("followup", "follow-up detection accuracy"),
    ("decision", "context decision accuracy (fresh/reuse/both/none)"),
    ("entities", "rewrite entity recall (expected substrings present)"),
    ("clean", "topic switches without old-topic terms in the rewrite"),
    ("scope", "scope accuracy (turns with an expected scope)"),
    ("intent", "intent (rag/chat) accuracy"),
    ("answer", "'what did we discuss?' answers naming the topics"),
)


def accuracy_table(rows: list[dict]) -> list[str]:
    """Markdown: every check over all turns and over turns 2+ (first turns are right by construction)."""
    every, later = accuracy(rows), accuracy([r for r in rows if r["turn"] > 1])
    lines = ["| metric | all turns | turns 2+ |", "|---|---:|---:|"]
    lines += [f"| {label} | {share(*every[k])} | {share(*later[k])} |" for k, label in CHECKS]
    cells = {(e, g): 0 for e in (True, False) for g in (True, False)}
    for r in rows:
        if r["turn"] > 1:
            cells[(r["expected"]["followup"], r["got"]["followup"])] += 1
    routed = [r for r in rows if r["score"]["decision"] is not None]
    lines += [
        "",
        "Follow-up detection on turns 2+: "
        f"{cells[(True, True)]} true positives, {cells[(False, True)]} false positives, "
        f"{cells[(True, False)]} missed follow-ups, {cells[(False, False)]} true negatives.",
        "",
        "Context decisions of the turns that reached the router (rows: expected, columns: got):",
        "",
        "| expected \\ got | fresh | reuse | both | none |",
        "|---|---:|---:|---:|---:|",
    ]
    for e in ("fresh", "reuse", "both", "none"):
        n = [sum(r["expected"]["decision"] == e and r["got"]["decision"] == g for r in routed) for g in LABELS]
        lines.append(f"| {e} | " + " | ".join(str(x) for x in n) + " |")
    return lines


def p50(values: list[float]) -> float | None:
    """Median, None for no values."""
    return statistics.median(values) if values else None


def secs(value: float | None) -> str:
    """Seconds with two decimals, '-' for None."""
    return "-" if value is None else f"{value:.2f} s"


def generator_call(row: dict) -> dict:
    """The turn's last llama.cpp call (the answer), or {} without the embedded model."""
    calls = row["got"]["llama_calls"]
    return calls[-1] if calls else {}


def timing_groups(rows: list[dict]) -> list[tuple[str, list[dict]]]:
    """First turns, later turns, later turns by the kind the rules detected; turns triage answered apart."""
    modelled = [r for r in rows if not r["got"]["triage"]]
    later = [r for r in modelled if r["turn"] > 1]
    groups = [("first turns", [r for r in modelled if r["turn"] == 1]), ("turns 2+", later)]
    groups.append(("turns 2+ detected as follow-ups", [r for r in later if r["got"]["followup"]]))
    for kind in ("clarification", "reference", "new"):
        groups.append((f"  … kind {kind}", [r for r in later if r["got"]["kind"] == kind]))
    groups.append(("answered by triage (FAQ, small talk; no model)", [r for r in rows if r["got"]["triage"]]))
    return groups


def timing_table(rows: list[dict], fake: bool) -> list[str]:
    """Markdown: TTFT and total time by turn group, with the prompt tokens llama.cpp evaluated."""
    lines = [
        "| turns | n | TTFT p50 | total p50 | model calls p50 | answer call: prompt tokens evaluated p50 "
        "| answer call: prefill tok/s p50 |",
        "|---|---:|---:|---:|---:|---:|---:|",
    ]
    for label, group in timing_groups(rows):
        if not group and label.startswith("answered by triage"):
            continue
        ttft = p50([r["got"]["ttft_s"] for r in group if r["got"]["ttft_s"] is not None])
        total = p50([r["got"]["total_s"] for r in group])
        calls = p50([len(r["got"]["llama_calls"]) for r in group]) if not fake else None
        answer_calls = [c for r in group if (c := generator_call(r))]
        evaluated = p50([c["evaluated"] for c in answer_calls])
        speed = p50([c["evaluated"] / c["prompt_ms"] * 1000 for c in answer_calls if c["prompt_ms"]])
        numbers = ("-" if v is None else f"{v:.0f}" for v in (calls, evaluated, speed))
        cells = [secs(ttft), secs(total), *numbers]
        lines.append(f"| {label} | {len(group)} | " + " | ".join(cells) + " |")
    first, later = (p50([r["got"]["ttft_s"] for r in g if r["got"]["ttft_s"]]) for _, g in timing_groups(rows)[:2])
    detected = p50([r["got"]["ttft_s"] for r in timing_groups(rows)[2][1] if r["got"]["ttft_s"]])
    if first and later and detected:
        lines += [
            "",
            f"TTFT ratio, p50 turns 2+ / p50 first turns: {later / first:.2f}; "
            f"detected follow-ups / first turns: {detected / first:.2f}.",
        ]
    if fake:
        lines += ["", "**Fake model: TTFT is meaningless here** (no model work); only the rule accuracy counts."]
    return lines


def miss_rows(rows: list[dict]) -> list[str]:
    """Markdown: one line per miss, with expected, got and the rule's own reason."""
    lines = ["| turn | message | miss | expected | got | rule said |", "|---|---|---|---|---|---|"]
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
            exp, got, rule = (str(x).replace("|", "/") for x in why[miss])
            rule = f"answered by triage ({g['triage']})" if g["triage"] else rule
            lines.append(f"| {r['dialogue']} #{r['turn']} | {r['ask']} | {miss} | {exp} | {got} | {rule} |")
    return lines


def provenance() -> dict:
    """Commit, whether backend/ has local changes, and a hash of the rules file that was measured."""
    git = ["git", "-C", str(REPO)]
    commit = subprocess.run([*git, "rev-parse", "--short", "HEAD"], capture_output=True, text=True).stdout.strip()
    dirty = subprocess.run([*git, "status", "--porcelain", "backend"], capture_output=True, text=True).stdout
    rules = hashlib.sha256((REPO / "backend/memory/followup.py").read_bytes()).hexdigest()[:12]
    return {"commit": commit, "backend_changed_files": len(dirty.splitlines()), "followup_py_sha256": rules}


def report(info: dict, rows: list[dict], wall: float, prov: dict, command: list[str]) -> str:
    """The paste-ready Markdown report."""
    fake, faq = info["backend"] == "fake", {True: "on", False: "off"}.get(info.get("faq_triage"), "n/a")
    n_dialogues = len({r["dialogue"] for r in rows})
    summary_waits = sum(r["got"]["summary_wait_s"] for r in rows)
    qa_bad = [r["dialogue"] for r in rows if "qa_index_len" in r and r["qa_index_len"] != r["turn"]]
    triaged = [f"{r['dialogue']} #{r['turn']} ({r['got']['triage']})" for r in rows if r["got"].get("triage")]
    head = [
        f"### bench_memory: {info['backend']} {info['model']}, {n_dialogues} dialogues, {len(rows)} turns",
        "",
        f"`{' '.join(['.venv/bin/python', *command])}`; commit {prov['commit']} "
        f"({prov['backend_changed_files']} uncommitted files under backend/), followup.py sha256 "
        f"{prov['followup_py_sha256']}; reranker {info['reranker']}; FAQ triage {faq}; "
        f"temperature 0; wall {wall / 60:.1f} min "
        f"(app start {info['startup_s']:.1f} s, untimed summary waits {summary_waits:.0f} s).",
        "",
    ]
    if triaged:
        head += [f"Answered by triage before the router (no follow-up rules, no retrieval): {', '.join(triaged)}.", ""]
    if qa_bad:
        head += [f"Q&A index length differs from the number of turns in: {', '.join(qa_bad)}", ""]
    body = ["#### Accuracy", "", *accuracy_table(rows), "", "#### Latency", "", *timing_table(rows, fake)]
    misses = miss_rows(rows)
    tail = ["", f"#### Misses ({len(misses) - 2})", "", *misses]
    return "\n".join(head + body + tail)


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", default="qwen2.5-coder-0.5b", choices=["qwen2.5-coder-0.5b", "qwen2.5-coder-1.5b"])
    parser.add_argument("--dialogues", type=int, default=None, help="run only the first N dialogues")
    parser.add_argument("--json", type=Path, default=None, help="write the run and every turn (expected, got, score)")
    parser.add_argument("--fake", action="store_true", help="scripted fake model: rule accuracy only")
    parser.add_argument("--no-faq", action="store_true", help="turn the FAQ triage off (RAG_FAQ_PATH unset)")
    parser.add_argument("--no-summary-wait", action="store_true", help="send the next turn without waiting")
    parser.add_argument("--only", default=None, help="comma-separated dialogue ids to run")
    parser.add_argument("--file", type=Path, default=DIALOGUES, help="dialogues YAML")
    parser.add_argument("--rescore", type=Path, default=None, help="score an earlier --json run again, no model")
    return parser.parse_args()


def rescore(path: Path, dialogues: list[Dialogue]) -> None:
    """Score the turns of an earlier run against the current expectations (after editing the YAML)."""
    data = json.loads(path.read_text())
    expected = {(d.id, n): t for d in dialogues for n, t in enumerate(d.turns, 1)}
    rows = [r for r in data["turns"] if (r["dialogue"], r["turn"]) in expected]
    for r in rows:
        turn = expected[(r["dialogue"], r["turn"])]
        r["got"].setdefault("triage", None)
        r["expected"], r["score"] = asdict(turn), score(turn, r["got"])
    run = data["run"]
    command = [*run["argv"], f"(rescored by {' '.join(sys.argv)})"]
    print(report(run, rows, run["wall_s"], run, command))


def main() -> None:
    args = parse_args()
    dialogues = load_dialogues(args.file, args.dialogues, args.only)
    if args.rescore:
        rescore(args.rescore, dialogues)
        return
    prov = provenance()  # before the run: others may commit while it runs
    work = Path(tempfile.mkdtemp(prefix="bench-memory-"))
    started = time.perf_counter()
    try:
        with stderr_to(None if args.fake else work / "llama.log"):
            info, rows = asyncio.run(bench(args, work, dialogues))
    except BaseException:
        print(f"the benchmark failed; the app's log (llama.cpp and Python) is kept in {work}", file=sys.stderr)
        raise
    wall = time.perf_counter() - started
    text = report(info, rows, wall, prov, sys.argv)
    print("\n" + text)
    if args.json:
        payload = {"run": {**info, **prov, "argv": sys.argv, "wall_s": wall}, "turns": rows}
        args.json.write_text(json.dumps(payload, indent=2, ensure_ascii=False))
    if any(r["got"]["error"] for r in rows):
        print(f"\nsome turns failed; the app's log (llama.cpp and Python) is kept in {work}")
    else:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
