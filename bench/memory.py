"""Conversation memory: follow-up detection, context decision, rewrite entities, scope, and follow-up TTFT.

Every dialogue of data/dialogues.yaml runs in its own thread through the real app (create_app in-process over
httpx.ASGITransport, temp data dir, the sample corpus ingested, temperature 0), turn by turn over
POST /api/chat/stream. After each turn the graph state gives the follow-up verdict, the context decision, the
rewritten query and the scope, which are scored against the dialogue's expectations (bench/memory_score.py);
every miss is kept with the rule's own reason (--misses prints them).

Timing: ASGITransport hands over the body only when the response is complete, so the app is wrapped in an ASGI
shim that notes when each SSE frame leaves it; TTFT = request sent -> first `token` frame sent. With the embedded
model, llama.cpp's log is captured to count the prompt tokens each call evaluated. By default the benchmark waits,
untimed, for the rolling-summary update after each turn; --no-summary-wait sends the next turn at once.
The FAQ triage is on, as in the product (--no-faq turns it off). --fake uses the scripted fake model: the rules
are exercised exactly and TTFT means nothing. --rescore scores an earlier JSON against the current YAML.
"""

import argparse
import asyncio
import hashlib
import json
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import httpx

from backend.llm.model_files import MODELS
from backend.main import create_app
from backend.rag.knowledge import ingest_paths
from backend.settings import Settings
from bench.lib import ROOT, SAMPLE_DOCS, report
from bench.lib.llama import LlamaLog, stderr_to
from bench.lib.server import SendClock, asgi_client
from bench.lib.sse import parse_sse
from bench.memory_score import Dialogue, accuracy_tables, load_dialogues, miss_table, score, timing_table

DIALOGUES = ROOT / "data" / "dialogues.yaml"
WARM_UP = "What is the Zephyr-9?"


@dataclass
class Session:
    """The running app and what measures it."""

    app: Any
    client: httpx.AsyncClient
    clock: SendClock
    llama: LlamaLog
    wait_for_summary: bool


async def run_turn(s: Session, thread: str, ask: str) -> dict:
    """Send one message, then read what the graph decided from its state and the status events."""
    s.clock.chunks.clear()
    started = time.perf_counter()
    events = parse_sse(await s.client.post("/api/chat/stream", json={"message": ask, "thread_id": thread}))
    first_token = s.clock.first(b"event: token")
    ended = s.clock.chunks[-1][0] if s.clock.chunks else time.perf_counter()
    state = (await s.app.state.services.graph.aget_state({"configurable": {"thread_id": thread}})).values
    status = {(d["node"], d["phase"]): d for name, d in events if name == "status"}
    done = next((d for name, d in events if name == "done"), {})
    followup, decision, triage = (state.get(k) or {} for k in ("followup", "context_decision", "triage"))
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
        "answer": done.get("answer", ""),
        "error": next((d for name, d in events if name == "error"), None),
        "ttft_s": None if first_token is None else first_token - started,
        "total_s": ended - started,
    }


def triage_label(triage: dict) -> str:
    """What answered the turn before the model: 'faq: notice-period', 'greeting', 'mention'…"""
    faq = (triage.get("faq") or {}).get("id")
    return f"{triage.get('route')}: {faq}" if faq else str(triage.get("route"))


async def run_dialogue(s: Session, d: Dialogue) -> list[dict]:
    """Every turn of one dialogue in a new thread, with its expectations and score."""
    thread, rows = f"bench-{d.id}", []
    for n, turn in enumerate(d.turns, 1):
        got = await run_turn(s, thread, turn.ask)
        got["llama_calls"] = s.llama.calls()
        waited = time.perf_counter()
        if s.wait_for_summary:
            await s.app.state.services.runner.summaries.wait(thread)
        got["summary_wait_s"] = time.perf_counter() - waited
        got["summary_calls"] = s.llama.calls()
        row = {"dialogue": d.id, "turn": n, "ask": turn.ask, "expected": asdict(turn), "got": got}
        rows.append(row | {"score": score(turn, got)})
        misses = rows[-1]["score"]["misses"]
        report.progress(f"{d.id} #{n}: {got['kind']}/{got['decision']} «{got['rewritten_query']}» "
                        + ("ok" if not misses else "MISS " + ",".join(misses)))  # fmt: skip
    memory = (await s.client.get(f"/api/threads/{thread}/memory")).json()
    rows[-1]["qa_index_len"] = len(memory.get("qa_index", []))
    return rows


def settings_for(args: argparse.Namespace, data_dir: Path) -> Settings:
    """The product's settings with a temp data dir, temperature 0 and the chosen backend and model."""
    backend = "fake" if args.fake else "embedded"
    extra = {"fake_tokens_per_second": 0.0} if args.fake else {"embedded_model": args.model}
    faq = None if args.no_faq else ROOT / "data" / "faq.yaml"
    return Settings(llm_backend=backend, data_dir=data_dir, temperature=0.0, faq_path=faq, **extra)


async def bench(args: argparse.Namespace, work: Path, dialogues: list[Dialogue]) -> tuple[dict, list[dict]]:
    """Start the app, ingest the corpus, warm up, run every dialogue; returns (run info, turn rows)."""
    settings = settings_for(args, work / "data")
    app = create_app(settings)
    clock, started = SendClock(app), time.perf_counter()
    async with asgi_client(app, wrap=clock) as client:
        startup = time.perf_counter() - started
        ingested = await ingest_paths(app.state.services.knowledge, [SAMPLE_DOCS])
        s = Session(app, client, clock, LlamaLog(None if args.fake else work / "llama.log"), not args.no_summary_wait)
        report.progress(f"app up in {startup:.1f}s, {len(ingested)} documents ingested; warming up")
        warm = await run_turn(s, "bench-warm-up", WARM_UP)
        await app.state.services.runner.summaries.wait("bench-warm-up")
        s.llama.calls()
        rows = [row for d in dialogues for row in await run_dialogue(s, d)]
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


def provenance() -> dict:
    """Commit, how many files under backend/ have local changes, and a hash of the follow-up rules measured."""
    git = ["git", "-C", str(ROOT)]
    commit = subprocess.run([*git, "rev-parse", "--short", "HEAD"], capture_output=True, text=True).stdout.strip()
    dirty = subprocess.run([*git, "status", "--porcelain", "backend"], capture_output=True, text=True).stdout
    rules = hashlib.sha256((ROOT / "backend/memory/followup.py").read_bytes()).hexdigest()[:12]
    return {"commit": commit, "backend_changed_files": len(dirty.splitlines()), "followup_py_sha256": rules}


def render(run: dict, rows: list[dict], args: argparse.Namespace) -> str:
    """Run line, accuracy tables, latency table, and the misses when asked for."""
    fake = run["backend"] == "fake"
    head = (f"memory: {run['backend']} {run['model']}, {len({r['dialogue'] for r in rows})} dialogues, {len(rows)} "
            f"turns; commit {run['commit']} ({run['backend_changed_files']} changed files under backend/), "
            f"FAQ triage {'on' if run.get('faq_triage') else 'off'}, wall {run['wall_s'] / 60:.1f} min")  # fmt: skip
    qa_bad = [r["dialogue"] for r in rows if "qa_index_len" in r and r["qa_index_len"] != r["turn"]]
    parts = [head, *accuracy_tables(rows, args.markdown), timing_table(rows, fake, args.markdown)]
    if qa_bad:
        parts.append(f"Q&A index length differs from the number of turns in: {', '.join(qa_bad)}")
    misses = miss_table(rows, args.markdown)
    parts.append(misses if args.misses else misses.split("\n")[0] + ": --misses lists them; the JSON has them all")
    return "\n\n".join(parts)


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    """Command-line options."""
    p = argparse.ArgumentParser(prog="bench.memory", description=__doc__.split("\n\n")[0])
    p.add_argument("--model", default="qwen2.5-coder-0.5b", choices=sorted(MODELS))
    p.add_argument("--dialogues", type=int, default=None, help="run only the first N dialogues")
    p.add_argument("--only", default=None, help="comma-separated dialogue ids to run")
    p.add_argument("--file", type=Path, default=DIALOGUES, help="dialogues YAML")
    p.add_argument("--fake", action="store_true", help="scripted fake model: rule accuracy only")
    p.add_argument("--no-faq", action="store_true", help="turn the FAQ triage off")
    p.add_argument("--no-summary-wait", action="store_true", help="send the next turn without waiting")
    p.add_argument("--misses", action="store_true", help="list every miss with the rule's reason")
    p.add_argument("--rescore", type=Path, default=None, help="score an earlier JSON run again, no model")
    report.add_output_args(p, "memory")
    return p.parse_args(argv)


def rescore(path: Path, dialogues: list[Dialogue]) -> tuple[dict, list[dict]]:
    """The turns of an earlier run scored against the current expectations (after editing the YAML)."""
    data = json.loads(path.read_text())
    expected = {(d.id, n): t for d in dialogues for n, t in enumerate(d.turns, 1)}
    rows = [r for r in data["turns"] if (r["dialogue"], r["turn"]) in expected]
    for r in rows:
        turn = expected[(r["dialogue"], r["turn"])]
        r["got"].setdefault("triage", None)
        r["expected"], r["score"] = asdict(turn), score(turn, r["got"])
    return data["run"], rows


def main(argv: list[str] | None = None) -> int:
    """Run (or rescore) the dialogues, print the tables, write the JSON."""
    args = parse_args(argv)
    dialogues = load_dialogues(args.file, args.dialogues, args.only)
    if args.rescore:
        run, rows = rescore(args.rescore, dialogues)
        report.publish(render(run, rows, args), {"run": run, "turns": rows}, args.json)
        return 0
    prov = provenance()  # before the run: others may commit while it runs
    work = Path(tempfile.mkdtemp(prefix="ragline-bench-memory-"))
    started = time.perf_counter()
    try:
        with stderr_to(None if args.fake else work / "llama.log"):
            info, rows = asyncio.run(bench(args, work, dialogues))
    except BaseException:
        print(f"the benchmark failed; the app's log (llama.cpp and Python) is kept in {work}", file=sys.stderr)
        raise
    run = {**info, **prov, "argv": sys.argv, "wall_s": time.perf_counter() - started}
    report.publish(render(run, rows, args), {"run": run, "turns": rows}, args.json)
    if any(r["got"]["error"] for r in rows):
        print(f"some turns failed; the app's log (llama.cpp and Python) is kept in {work}")
    else:
        shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
