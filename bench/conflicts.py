"""The conflict note: on labelled cases (split tune/report), and how often it would fire where documents do not
disagree (every cross-document pair of sentences with a figure; bench.answers' dumped turns replayed).

The note (backend/guardrails/conflicts.py) compares a claim's sentence with the sentences of the other documents'
passages the model was given. --cases: labelled cases (a JSON list of {id, label, question, answer, cited_document,
cited_passage, other_document, other_passage}; bench/data/conflicts/heldout_cases.json was written by a helper who
had not seen the detector), each run as the product runs it on an answer whose figure sentence cites S1 with S2
given beside it, split in halves by a hash of the id. Corpora: every cross-document pair of sentences with a
figure in the sample documents, SQuAD 2.0's paragraphs (one document each) and any folder given with --docs; each
pair flagged is listed, to be read as a true disagreement or a false one. --dump replays bench.answers' turns
(its --dump files): each answer sentence with a marker is a claim supported by the passage it cites, compared with
every passage of the prompt. Uses the offline MiniLM, no language model.
"""

import argparse
import hashlib
import itertools
import json
import sys
from pathlib import Path

from backend.contract.citations import cited_ids
from backend.guardrails.conflicts import (
    MIN_SIMILARITY,
    Embed,
    conflicts,
    differs,
    masked,
    same_subject,
    sentence_figures,
)
from backend.guardrails.grounding import SentenceSupport, answer_spans, cosines, passage_sentences
from backend.guardrails.text import unwrapped
from backend.llm.fake import prompt_entries
from backend.rag.embeddings import OfflineMiniLM, ensure_onnx_files
from backend.rag.loaders import load_document
from backend.settings import Settings
from bench.answers import SQUAD
from bench.lib import ROOT, SAMPLE_DOCS, report

CASES = ROOT / "bench" / "data" / "conflicts" / "heldout_cases.json"


def folder(path: Path) -> dict[str, str]:
    """Each readable document of a folder as its extracted text (files the loader refuses are left out)."""
    out = {}
    for file in sorted(p for p in path.iterdir() if p.is_file()):
        try:
            out[file.name] = "\n\n".join(s.text for s in load_document(file.name, file.read_bytes()).sections)
        except Exception:  # noqa: BLE001 - a file the app would refuse is no document to compare
            continue
    return out


def squad() -> dict[str, str]:
    paragraphs = json.loads(SQUAD.read_text())["data"][0]["paragraphs"]
    return {f"complexity-{k:02d}.txt": p["context"] for k, p in enumerate(paragraphs, 1)}


def scan(docs: dict[str, str], embed: Embed) -> tuple[int, list[tuple[str, str, str, str]]]:
    """Cross-document sentence pairs with figures, and those the note would flag (one document's sentence first):
    figures that disagree, no subject apart, wording alike (no question: each sentence stands for a claim)."""
    sentences = {name: [s for s in passage_sentences(unwrapped(t)) if sentence_figures(s)] for name, t in docs.items()}
    pairs, near = 0, []
    for one, other in itertools.permutations(sentences, 2):
        for mine in sentences[one]:
            stated = sentence_figures(mine)
            for theirs in sentences[other]:
                pairs += 1
                if any(differs(f, sentence_figures(theirs), set()) for f in stated) and same_subject("", mine, theirs):
                    near.append((one, mine, other, theirs))
    texts = sorted({masked(t) for _, a, _, b in near for t in (a, b)})
    sims = cosines(texts, texts, embed) if texts else None
    at = {t: i for i, t in enumerate(texts)}
    flagged = [p for p in near if sims[at[masked(p[1])], at[masked(p[3])]] >= MIN_SIMILARITY]  # type: ignore[index]
    return pairs, flagged


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


def split(case_id: str) -> str:
    return "tune" if int(hashlib.sha1(case_id.encode()).hexdigest(), 16) % 2 == 0 else "report"


def labelled(path: Path, embed: Embed) -> dict:
    """Per half: disagreements noted, cases that are none noted, and which."""
    out: dict = {}
    for case in json.loads(path.read_text()):
        passages = {"S1": case["cited_passage"], "S2": case["other_passage"]}
        names = {"S1": case["cited_document"], "S2": case["other_document"]}
        claims = [c for c in claims_citing(case["answer"], passages) if c.best == "S1"]
        noted = bool(conflicts(claims, passages, names, case["answer"], embed, case["question"]))
        half = out.setdefault(split(case["id"]), {"true": 0, "false": 0, "noted_true": [], "noted_false": []})
        half["true" if case["label"] else "false"] += 1
        if noted:
            half["noted_true" if case["label"] else "noted_false"].append(case["id"])
    return out


def count(noted: list[str], total: int) -> str:
    return f"{len(noted)} of {total}"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--cases", type=Path, default=CASES, help="a JSON file of labelled cases")
    parser.add_argument("--docs", type=Path, action="append", default=[], help="another folder of documents")
    parser.add_argument("--dump", type=Path, action="append", default=[], help="a bench.answers --dump file")
    report.add_output_args(parser, "conflicts")
    args = parser.parse_args(argv)
    embed = OfflineMiniLM(ensure_onnx_files(Settings().cache_dir))
    results: dict = {"cases": labelled(args.cases, embed), "corpora": {}, "dumps": {}}
    rows = [
        [
            f"{args.cases.name}, {half}",
            f"{len(r['noted_true'])} of {r['true']}",
            f"{len(r['noted_false'])} of {r['false']}",
        ]
        for half, r in sorted(results["cases"].items(), reverse=True)
    ]
    text = report.table("conflict note on labelled cases", ["cases", "disagreements noted", "others noted"], rows,
                        args.markdown)  # fmt: skip
    for half, r in sorted(results["cases"].items(), reverse=True):
        text += f"\n  {half}: noted wrongly: {', '.join(r['noted_false']) or 'none'}"
    corpora = {"sample documents": folder(SAMPLE_DOCS), "SQuAD 2.0 paragraphs": squad()}
    for extra in args.docs:
        corpora[f"sample documents + {extra.name}"] = folder(SAMPLE_DOCS) | folder(extra)
    rows = []
    for name, docs in corpora.items():
        pairs, flagged = scan(docs, embed)
        rows.append([name, len(docs), f"{pairs:,}", len(flagged)])
        results["corpora"][name] = {"documents": len(docs), "pairs": pairs, "flagged": flagged}
    text += "\n\n" + report.table(
        "cross-document sentence pairs with a figure", ["corpus", "documents", "pairs", "flagged"], rows, args.markdown
    )
    for name, result in results["corpora"].items():
        text += "".join(f"\n  {name}: {a}: “{s}” / {b}: “{t}”" for a, s, b, t in result["flagged"])
    for dump in args.dump:
        turns, fired = replay(dump, embed)
        results["dumps"][str(dump)] = {"turns": turns, "fired": fired}
        text += f"\n{dump}: the note on {len(fired)} of {turns} turns with a cited claim"
        text += "".join(f"\n  {q}" for q in fired)
    report.publish(text, results, args.json)
    return 0


if __name__ == "__main__":
    sys.exit(main())
