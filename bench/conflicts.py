"""The conflict note on labelled cases, and how often it fires on bench.answers' turns (replayed).

The note (backend/guardrails/conflicts.py) compares a claim's sentence with the sentences of the other documents'
passages the model was given. --cases: labelled cases (a JSON list of {id, label, question, answer, cited_document,
cited_passage, other_document, other_passage}; by default every file of bench/data/conflicts/, written by helpers
who had not seen the detector, whose README says which were tuned on), each run as the product runs it on an answer
whose figure sentence cites S1 with S2 given beside it. --dump replays bench.answers' turns (its --dump files):
each answer sentence with a marker is a claim supported by the passage it cites, compared with every passage of the
prompt, with the turn's question. Uses the offline MiniLM, no language model.
"""

import argparse
import json
import sys
from pathlib import Path

from backend.contract.citations import cited_ids
from backend.guardrails.conflicts import Embed, conflicts
from backend.guardrails.grounding import SentenceSupport, answer_spans
from backend.llm.fake import prompt_entries
from backend.rag.embeddings import OfflineMiniLM, ensure_onnx_files
from backend.settings import Settings
from bench.lib import ROOT, report

CASES = ROOT / "bench" / "data" / "conflicts"


def claims_citing(answer: str, passages: dict[str, str]) -> list[SentenceSupport]:
    """Each answer sentence with a marker, as a claim supported by the first passage it cites."""
    return [
        SentenceSupport(sentence, start, end, ids, True, False, {ids[0]: 1.0}, ids[0])
        for sentence, start, end in answer_spans(answer)
        if (ids := [i for i in cited_ids(sentence) if i in passages])
    ]


def replay(path: Path, embed: Embed) -> tuple[int, list[str]]:
    """Dumped turns with a cited claim, and the questions whose answer would get the note."""
    turns, fired = 0, []
    for line in path.read_text().splitlines():
        record = json.loads(line)
        entries = prompt_entries(record["prompt"])
        names = {sid: name.split(",")[0] for sid, name, _ in entries}
        passages = {sid: text for sid, _, text in entries}
        if (claims := claims_citing(record["final"], passages)) and not record.get("error"):
            turns += 1
            if conflicts(claims, passages, names, record["final"], embed, record["item"]["question"]):
                fired.append(record["item"]["question"])
    return turns, fired


def labelled(path: Path, embed: Embed) -> dict:
    """Disagreements noted, cases that are none noted, and which."""
    out: dict = {"true": 0, "false": 0, "noted_true": [], "noted_false": []}
    for case in json.loads(path.read_text()):
        passages = {"S1": case["cited_passage"], "S2": case["other_passage"]}
        names = {"S1": case["cited_document"], "S2": case["other_document"]}
        claims = [c for c in claims_citing(case["answer"], passages) if c.best == "S1"]
        noted = bool(conflicts(claims, passages, names, case["answer"], embed, case["question"]))
        out["true" if case["label"] else "false"] += 1
        if noted:
            out["noted_true" if case["label"] else "noted_false"].append(case["id"])
    return out


def count(noted: list[str], total: int) -> str:
    """A share as "3 of 30"."""
    return f"{len(noted)} of {total}"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--cases", type=Path, action="append", help="a JSON file of labelled cases (default: all)")
    parser.add_argument("--dump", type=Path, action="append", default=[], help="a bench.answers --dump file")
    report.add_output_args(parser, "conflicts")
    args = parser.parse_args(argv)
    embed = OfflineMiniLM(ensure_onnx_files(Settings().cache_dir))
    results: dict = {"cases": {}, "dumps": {}}
    for cases in args.cases or sorted(CASES.glob("*.json")):
        results["cases"][cases.name] = labelled(cases, embed)
    rows = [
        [name, count(r["noted_true"], r["true"]), count(r["noted_false"], r["false"])]
        for name, r in results["cases"].items()
    ]
    text = report.table("conflict note on labelled cases", ["cases", "disagreements noted", "others noted"], rows,
                        args.markdown)  # fmt: skip
    for name, r in results["cases"].items():
        text += f"\n  {name}: noted wrongly: {', '.join(r['noted_false']) or 'none'}"
    for dump in args.dump:
        turns, fired = replay(dump, embed)
        results["dumps"][str(dump)] = {"turns": turns, "fired": fired}
        text += f"\n{dump}: the note on {len(fired)} of {turns} turns with a cited claim"
        text += "".join(f"\n  {q}" for q in fired)
    report.publish(text, results, args.json)
    return 0


if __name__ == "__main__":
    sys.exit(main())
