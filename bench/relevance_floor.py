"""Calibrate the relevance floor and margin on the tune split, report them on the report split (search only).

For every question of bench.answers' sets (own questions and SQuAD 2.0), the top 4 passages of POST /api/search
are read with their relevance (cosine similarity of the hit chunk to the query) and whether they hold a gold
answer. For each (floor, margin) candidate: answerable questions whose gold passage would still be sent, gold
passages lost, unanswerable questions left with no passage (the no-documents path), and passages sent on average.
The chosen pair is the highest floor 0.05 below every tune gold passage's relevance and the smallest margin
0.05 above the widest best-to-gold gap on tune (choosing the fewest passages with no tune loss overfits: 0.35/0.2
lost 3 of 47 gold passages on the report split); it is reported on the report split, which it was not chosen on.
No model is needed (the fake model's app serves search).
"""

import argparse
import asyncio
import sys
import tempfile
from itertools import product
from pathlib import Path

from backend.main import create_app
from backend.rag.knowledge import ingest_paths
from backend.settings import Settings
from bench.answers import Item, contains, own_items, squad_items
from bench.lib import SAMPLE_DOCS, report
from bench.lib.server import asgi_client

FLOORS = (-1.0, 0.1, 0.2, 0.25, 0.3, 0.35)
MARGINS = (2.0, 0.3, 0.25, 0.2, 0.15, 0.1)


async def hits(name: str, docs: Path, items: list[Item], work: Path) -> list[dict]:
    app = create_app(Settings(llm_backend="fake", data_dir=work / name, faq_path=None, relevance_floor=-1.0,
                              relevance_margin=2.0))  # fmt: skip
    rows = []
    async with asgi_client(app) as client:
        await ingest_paths(app.state.services.knowledge, [docs])
        for item in items:
            results = (await client.post("/api/search", json={"query": item.question, "k": 4})).json()["results"]
            row = {"split": item.split, "answerable": item.answerable, "hits": []}
            for r in results:
                text = (await client.get(f"/api/documents/{r['doc_id']}/text")).json()["text"][r["start"] : r["end"]]
                gold = (
                    item.answerable and r["document"] == item.document and any(contains(text, g) for g in item.answers)
                )
                row["hits"].append({"relevance": r.get("relevance"), "gold": gold})
            rows.append(row)
    return rows


def outcome(rows: list[dict], floor: float, margin: float) -> dict:
    kept = lost = empty = unanswerable = sent = 0
    for row in rows:
        scored = [h for h in row["hits"] if h["relevance"] is not None]
        bar = max(floor, max((h["relevance"] for h in scored), default=0.0) - margin)
        passed = [h for h in scored if h["relevance"] >= bar]
        sent += len(passed)
        if any(h["gold"] for h in row["hits"]):
            kept += any(h["gold"] for h in passed)
            lost += not any(h["gold"] for h in passed)
        if not row["answerable"]:
            unanswerable += 1
            empty += not passed
    return {"gold_kept": kept, "gold_lost": lost, "unanswerable_no_passage": empty, "unanswerable": unanswerable,
            "passages_sent": sent / len(rows) if rows else None}  # fmt: skip


def choose(rows: list[dict], buffer: float = 0.05) -> tuple[float, float]:
    """The highest floor `buffer` below every tune gold passage's relevance, and the smallest margin `buffer`
    above the widest gap between a question's best passage and its gold one: no gold lost on tune, with room."""
    gold, gaps = [], []
    for row in rows:
        scored = [h for h in row["hits"] if h["relevance"] is not None]
        if best_gold := max((h["relevance"] for h in scored if h["gold"]), default=None):
            gold.append(best_gold)
            gaps.append(max(h["relevance"] for h in scored) - best_gold)
    floor = max((f for f in FLOORS if f <= min(gold, default=1.0) - buffer), default=-1.0)
    margin = min((m for m in MARGINS if m >= max(gaps, default=0.0) + buffer), default=2.0)
    return floor, margin


def main(argv: list[str] | None = None) -> int:
    """Search every question, grid the candidates on tune, report the choice on report."""
    parser = argparse.ArgumentParser(prog="bench.relevance_floor", description=__doc__.split("\n")[0])
    parser.add_argument("--squad-n", type=int, default=60, help="answerable and as many unanswerable SQuAD questions")
    report.add_output_args(parser, "relevance_floor")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        rows = asyncio.run(hits("own", SAMPLE_DOCS, own_items(), work))
        rows += asyncio.run(hits("squad", work / "squad", squad_items(work / "squad", args.squad_n), work))
    tune = [r for r in rows if r["split"] == "tune"]
    held = [r for r in rows if r["split"] == "report"]
    grid = [(f, m, outcome(tune, f, m)) for f, m in product(FLOORS, MARGINS)]
    floor, margin = choose(tune)
    chosen = {
        "floor": floor,
        "margin": margin,
        "tune": outcome(tune, floor, margin),
        "report": outcome(held, floor, margin),
        "report_without_floor": outcome(held, -1.0, 2.0),
    }
    headers = ["floor", "margin", "gold kept", "gold lost", "unanswerable with no passage", "passages sent"]
    fmt = lambda f, m, o: [f, m, o["gold_kept"], o["gold_lost"], f"{o['unanswerable_no_passage']}/{o['unanswerable']}",  # noqa: E731
                           report.num(o["passages_sent"], digits=2)]  # fmt: skip
    text = "\n\n".join([
        report.table("tune split: every candidate", headers, [fmt(*g) for g in grid], args.markdown),
        report.table("report split: the choice vs no floor", headers,
                     [fmt(floor, margin, chosen["report"]), fmt(-1.0, 2.0, chosen["report_without_floor"])],
                     args.markdown),
    ])  # fmt: skip
    report.publish(text, {"grid": [[f, m, o] for f, m, o in grid], "chosen": chosen}, args.json)
    return 0


if __name__ == "__main__":
    sys.exit(main())
