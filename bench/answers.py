"""Whole chat turns on the embedded model, scored: correct answers, citation precision, honest "not found", TTFT.

Sets: `own` (data/eval/questions.yaml over data/documents: 54 questions, a third unanswerable) and `squad`
(../shared/datasets/squad2: one Wikipedia article, each paragraph ingested as its own document; answerable
questions with gold spans and unanswerable ones written to look answerable). Each set is split in halves by a
hash of the question id: thresholds are tuned on `tune` only and figures are reported on `report`.

Every turn goes through POST /api/chat/stream on a fresh thread with the FAQ triage off (so the model answers).
Three columns come from the same turn, so the comparison is side by side:
- "off": the raw answer (the streamed tokens), what the model wrote;
- "repair": what the user would get without the answerable check (validate_answerable): the final answer, or,
  when that check replaced it, the model's text it replaced (its citations not repaired; correctness and
  abstention do not depend on them);
- "repair+check": the final answer (after the `replace` event), what the user gets.
A cited passage is read back through GET /api/documents/{id}/text with its span. `--answerable-check off` runs
without the check (then the last two columns agree).
"""

import argparse
import asyncio
import hashlib
import json
import re
import sys
import tempfile
import time
from contextlib import nullcontext
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import TextIO

import httpx
import yaml
from fastapi import FastAPI

from backend.contract.citations import cited_ids
from backend.guardrails.grounding import says_not_found
from backend.main import create_app
from backend.rag.knowledge import ingest_paths
from backend.settings import Settings
from bench.lib import ROOT, SAMPLE_DOCS, report
from bench.lib.server import SendClock, asgi_client
from bench.lib.stats import median, percentile

QUESTIONS = ROOT / "data" / "eval" / "questions.yaml"
SQUAD = ROOT.parent / "shared" / "datasets" / "squad2" / "computational-complexity-theory.json"
EVENT = re.compile(rb"event: (\w+)\r?\ndata: ([^\r\n]*)")


@dataclass
class Item:
    id: str
    question: str
    answerable: bool
    answers: list[str]
    document: str | None
    set: str

    @property
    def split(self) -> str:
        """tune or report, by a hash of the id: the same split in every run."""
        return "tune" if int(hashlib.sha1(self.id.encode()).hexdigest(), 16) % 2 == 0 else "report"


@dataclass
class Record:
    """One turn as measured: what the model wrote, what the user got, and what they cite."""

    item: Item
    raw: str = ""
    final: str = ""
    sources: list[dict] = field(default_factory=list)
    passages: dict[str, str] = field(default_factory=dict)  # source id -> passage text (from its span)
    prompt: str = ""  # the user message as the generator sent it (passages and question), for offline replay
    validation: dict = field(default_factory=dict)
    ttft_s: float | None = None
    check_s: float | None = None  # validate_sources, start to end
    judge_s: float | None = None  # validate_answerable, start to end (the model's verdict)
    error: str | None = None

    @property
    def replaced_by(self) -> str | None:
        """Why the answer became the not-found reply: "unsupported" (no claim supported), "unanswered" (the
        answerable check), or None."""
        sources = self.validation.get("sources") or {}
        withheld = sources.get("not_found") == "no_passages" and sources.get("not_found_reason") == "unsupported"
        if sources.get("not_found") != "replaced" and not withheld:  # withheld: a figure no passage gave
            return None
        return sources.get("not_found_reason", "unsupported")

    @property
    def unchecked(self) -> str:
        """The answer the user would have got without the answerable check."""
        if self.replaced_by != "unanswered":
            return self.final
        return self.validation["sources"].get("original_text", self.final)


def own_items() -> list[Item]:
    return [
        Item(q["id"], q["question"], q["answerable"], q.get("answers") or [], q.get("document"), "own")
        for q in yaml.safe_load(QUESTIONS.read_text())
    ]


def squad_items(docs: Path, n: int) -> list[Item]:
    """The article's paragraphs written as documents, and n answerable plus n unanswerable questions."""
    article = json.loads(SQUAD.read_text())["data"][0]
    docs.mkdir(parents=True, exist_ok=True)
    answerable, unanswerable = [], []
    for k, paragraph in enumerate(article["paragraphs"], 1):
        name = f"complexity-{k:02d}.txt"
        (docs / name).write_text(paragraph["context"])
        for qa in paragraph["qas"]:
            golds = sorted({a["text"] for a in qa["answers"]})
            item = Item(qa["id"], qa["question"], not qa["is_impossible"], golds, name, "squad")
            (unanswerable if qa["is_impossible"] else answerable).append(item)
    pick = lambda items: sorted(items, key=lambda i: hashlib.sha1(i.id.encode()).hexdigest())[:n]  # noqa: E731
    return pick(answerable) + pick(unanswerable)


# --- scoring --------------------------------------------------------------------------------------------------


def norm(text: str) -> str:
    return " ".join(t.strip(".") for t in re.sub(r"[^0-9a-z@.]+", " ", text.lower()).split() if t.strip("."))


def contains(text: str, gold: str) -> bool:
    """Whether the gold answer appears in the text as whole words (case, punctuation and spacing ignored)."""
    return f" {norm(gold)} " in f" {norm(text)} "


def abstains(answer: str) -> bool:
    """The answer says the documents do not contain it (the not-found reply or the model's own words)."""
    return says_not_found(answer) or "could not find" in answer.lower()


def score(record: Record, text: str) -> dict:
    """One answer text (raw or final) scored against its item."""
    item = record.item
    correct = item.answerable and any(contains(text, g) for g in item.answers)
    ids = [i for i in cited_ids(text) if i in record.passages]
    good = [i for i in ids if any(contains(record.passages[i], g) for g in item.answers)]
    return {
        "correct": correct,
        "abstained": abstains(text),
        "cited": len(ids),
        "cited_good": len(good) if item.answerable else 0,
    }


VARIANTS = {"raw": "off", "unchecked": "repair", "final": "repair+check"}


def aggregate(records: list[Record]) -> dict:
    """The figures for a group of records: repair off (raw), repair on without the answerable check, and both."""
    out: dict = {"n": len(records)}
    for variant in VARIANTS:
        scores = [(r, score(r, getattr(r, variant))) for r in records if not r.error]
        ans = [s for r, s in scores if r.item.answerable]
        una = [s for r, s in scores if not r.item.answerable]
        correct = [s for s in ans if s["correct"]]
        cited = sum(s["cited"] for s in ans)
        out[variant] = {
            "answer_correct": len(correct) / len(ans) if ans else None,
            "citation_precision": sum(s["cited_good"] for s in ans) / cited if cited else None,
            "correct_with_citation": sum(s["cited"] > 0 for s in correct) / len(correct) if correct else None,
            "false_answers_unanswerable": sum(not s["abstained"] for s in una) / len(una) if una else None,
            "abstained_answerable": sum(s["abstained"] for s in ans) / len(ans) if ans else None,
        }
    correct_raw = [r for r in records if r.item.answerable and not r.error and score(r, r.raw)["correct"]]
    for why, key in ((None, "correct_wrongly_replaced"), ("unsupported", "correct_replaced_unsupported"),
                     ("unanswered", "correct_replaced_unanswered")):  # fmt: skip
        wrongly = [r for r in correct_raw if r.replaced_by and why in (None, r.replaced_by)]
        out[key] = len(wrongly) / len(correct_raw) if correct_raw else None
    ttfts = [r.ttft_s for r in records if r.ttft_s is not None]
    checks = [r.check_s for r in records if r.check_s is not None]
    judges = [r.judge_s for r in records if r.judge_s is not None and r.validation.get("answerable")]
    both = [(r.check_s or 0.0) + (r.judge_s or 0.0) for r in records if r.check_s is not None]
    out["ttft_p50_s"], out["ttft_p90_s"] = median(ttfts), percentile(ttfts, 90)
    out["check_p50_ms"] = median(checks) * 1000 if checks else None  # validate_sources, every documents turn
    out["judge_p50_ms"] = median(judges) * 1000 if judges else None  # validate_answerable, turns it judged
    out["judge_p90_ms"] = percentile(judges, 90) * 1000 if judges else None
    out["checks_p50_ms"] = median(both) * 1000 if both else None  # both, every documents turn
    out["judged"] = len(judges)
    out["errors"] = sum(bool(r.error) for r in records)
    return out


# --- running --------------------------------------------------------------------------------------------------


def events_of(chunks: list[tuple[float, bytes]]) -> list[tuple[str, dict, float]]:
    """Every SSE event the app sent, with when its chunk left the app."""
    out = []
    for t, body in chunks:
        for name, data in EVENT.findall(body):
            if data:
                out.append((name.decode(), json.loads(data), t))
    return out


def node_time(marks: dict[tuple[str | None, str | None], float], node: str) -> float | None:
    """Seconds from a node's start status to its end status (None when it did not run)."""
    if (node, "start") in marks and (node, "end") in marks:
        return marks[(node, "end")] - marks[(node, "start")]
    return None


async def sent_prompt(app: FastAPI, thread_id: str) -> str:
    """The user message the generator sent on the thread's last turn, read from its checkpoint."""
    state = await app.state.services.graph.aget_state({"configurable": {"thread_id": thread_id}})
    transcript = state.values.get("transcript") or []
    return transcript[-1]["prompt"] if transcript else ""


async def ask(client: httpx.AsyncClient, clock: SendClock, item: Item) -> Record:
    record = Record(item)
    clock.chunks.clear()
    started = time.perf_counter()
    thread_id = f"answers-{item.set}-{item.id}"
    body = {"message": item.question, "thread_id": thread_id, "mode": "rag"}
    response = await client.post("/api/chat/stream", json=body)
    if response.status_code != 200:
        record.error = f"HTTP {response.status_code}"
        return record
    events = events_of(clock.chunks)
    tokens = [(d["text"], t) for n, d, t in events if n == "token"]
    record.raw = "".join(text for text, _ in tokens)
    record.ttft_s = tokens[0][1] - started if tokens else None
    marks = {(d.get("node"), d.get("phase")): t for n, d, t in events if n == "status"}
    record.check_s, record.judge_s = node_time(marks, "validate_sources"), node_time(marks, "validate_answerable")
    done = next((d for n, d, _ in events if n == "done"), None)
    if done is None:
        record.error = next((d.get("message") for n, d, _ in events if n == "error"), "no done event")
        return record
    record.final, record.validation = done["answer"], done.get("validation") or {}
    record.sources = next((d["sources"] for n, d, _ in reversed(events) if n == "sources"), [])
    for source in record.sources:
        if "doc_id" in source and "start" in source:
            text = (await client.get(f"/api/documents/{source['doc_id']}/text")).json()["text"]
            record.passages[source["id"]] = text[source["start"] : source["end"]]
    record.prompt = await sent_prompt(clock.app, thread_id)
    return record


async def run_model(
    model: str, sets: dict[str, tuple[Path, list[Item]]], work: Path, style: str, options: dict, dump: TextIO | None
) -> list[Record]:
    """Every item of every set on one model and prompt style; each record is dumped as soon as it is measured."""
    records = []
    for name, (docs, items) in sets.items():
        settings = Settings(
            llm_backend="embedded",
            embedded_model=model,
            data_dir=work / model / style / name,
            temperature=0.0,
            faq_path=None,
            prompt_style=style,
            **options,
        )
        app = create_app(settings)
        clock = SendClock(app)
        async with asgi_client(app, wrap=clock) as client:
            await ingest_paths(app.state.services.knowledge, [docs])
            await ask(client, clock, Item("warm-up", "What is this collection about?", False, [], None, "warm"))
            for k, item in enumerate(items, 1):
                records.append(r := await ask(client, clock, item))
                if dump:
                    dump.write(json.dumps({"model": f"{model} {style}", **asdict(r)}, ensure_ascii=False) + "\n")
                    dump.flush()
                verdict = "ERROR " + r.error if r.error else ("ok" if score(r, r.final)["correct"] else "-")
                report.progress(f"{model} {style} {name} {k}/{len(items)} {item.id}: {verdict} {r.final[:70]!r}")
    return records


def table_rows(model: str, records: list[Record]) -> list[list]:
    rows = []
    for set_name in sorted({r.item.set for r in records}):
        for split in ("tune", "report"):
            group = [r for r in records if r.item.set == set_name and r.item.split == split]
            if not group:
                continue
            a = aggregate(group)
            replaced = {"raw": None, "unchecked": "correct_replaced_unsupported", "final": "correct_wrongly_replaced"}
            for variant, label in VARIANTS.items():
                v = a[variant]
                rows.append([
                    f"{model} {set_name} {split} (n={a['n']}) {label}", report.pct(v["answer_correct"]),
                    report.pct(v["citation_precision"]), report.pct(v["correct_with_citation"]),
                    report.pct(v["false_answers_unanswerable"]), report.pct(v["abstained_answerable"]),
                    report.pct(a[replaced[variant]]) if replaced[variant] else "-", report.secs(a["ttft_p50_s"]),
                    report.num(a["judge_p50_ms"], " ms", 0) if variant == "final" else "-",
                    report.num(a["checks_p50_ms" if variant == "final" else "check_p50_ms"], " ms", 0),
                ])  # fmt: skip
    return rows


HEADERS = ["run", "correct", "cite precision", "correct+cited", "false on unanswerable", "abstained on answerable",
           "correct replaced", "TTFT p50", "judge p50", "checks p50"]  # fmt: skip


def main(argv: list[str] | None = None) -> int:
    """Run the sets on each model, print the figures (repair and check off vs on, tune vs report), write JSON."""
    parser = argparse.ArgumentParser(prog="bench.answers", description=__doc__.split("\n")[0])
    parser.add_argument("--model", action="append", help="embedded model (repeatable; default qwen2.5-coder-1.5b)")
    parser.add_argument("--set", action="append", choices=["own", "squad"], help="question sets (default both)")
    parser.add_argument("--split", choices=["tune", "report", "all"], default="all")
    parser.add_argument("--squad-n", type=int, default=20, help="answerable and as many unanswerable SQuAD questions")
    parser.add_argument("--limit", type=int, default=0, help="at most this many questions per set (0: all)")
    parser.add_argument("--dump", type=Path, help="write every turn as JSON lines here (for offline calibration)")
    parser.add_argument(
        "--prompt-style",
        action="append",
        choices=["plain", "example", "quote"],
        help="system prompt variants side by side (repeatable; default: the setting's default)",
    )
    parser.add_argument("--answerable-check", choices=["on", "off"], help="default: RAG_ANSWERABLE_CHECK's default")
    parser.add_argument("--answerable-min-yes", type=float, help="default: RAG_ANSWERABLE_MIN_YES's default")
    report.add_output_args(parser, "answers")
    args = parser.parse_args(argv)
    models = args.model or ["qwen2.5-coder-1.5b"]
    options: dict = {}
    if args.answerable_check:
        options["answerable_check"] = args.answerable_check == "on"
    if args.answerable_min_yes is not None:
        options["answerable_min_yes"] = args.answerable_min_yes
    results = {}
    if args.dump:
        args.dump.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp, args.dump.open("w") if args.dump else nullcontext() as dump:
        work = Path(tmp)
        sets: dict[str, tuple[Path, list[Item]]] = {}
        for name in args.set or ["own", "squad"]:
            docs, items = (SAMPLE_DOCS, own_items()) if name == "own" else (work / "squad", None)
            items = items if items is not None else squad_items(docs, args.squad_n)
            items = [i for i in items if args.split in ("all", i.split)]
            sets[name] = (docs, items[: args.limit] if args.limit else items)
        rows = []
        styles = args.prompt_style or [Settings.model_fields["prompt_style"].default]
        for model in models:
            for style in styles:
                label = f"{model} {style}"
                records = asyncio.run(run_model(model, sets, work, style, options, dump))
                results[label] = {
                    f"{s}/{split}": aggregate([r for r in records if r.item.set == s and r.item.split == split])
                    for s in sets for split in ("tune", "report")
                }  # fmt: skip
                rows += table_rows(label, records)
    title = "answers: off (the model's words), repair (citations repaired), repair+check (what the user gets)"
    text = report.table(title, HEADERS, rows, args.markdown)
    report.publish(text + f"\n\nload average {report.load()}" + f"\noptions {options}", results, args.json)
    return 0


if __name__ == "__main__":
    sys.exit(main())
