"""How often the conflict note would fire where documents do not disagree: every pair of sentences with a figure
from two different documents, and bench.answers' dumped turns replayed.

The note (backend/guardrails/conflicts.py) compares a claim's sentence with the sentences of the other documents'
passages the model was given. Its upper bound on a corpus is every cross-document pair of sentences with a figure:
each pair it flags is listed, to be read as a true disagreement or a false one. Corpora: the sample documents,
SQuAD 2.0's paragraphs (one document each), and any folder given with --docs. --dump replays bench.answers' turns
(its --dump files): each answer sentence with a marker is a claim supported by the passage it cites, compared with
every passage of the prompt. No model is needed.
"""

import argparse
import itertools
import json
import re
import sys
from pathlib import Path

from backend.contract.citations import cited_ids
from backend.guardrails.conflicts import conflicts, differs, same_thing, sentence_figures
from backend.guardrails.grounding import SentenceSupport, answer_spans, passage_sentences
from backend.guardrails.text import unwrapped
from backend.rag.loaders import load_document
from bench.answers import SQUAD
from bench.lib import SAMPLE_DOCS, report

ENTRY = re.compile(r"^\[(S\d+)\] ([^\n]*)\n(.*?)(?=^\[S\d+\] |\Z)", re.MULTILINE | re.DOTALL)


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


def scan(docs: dict[str, str]) -> tuple[int, list[tuple[str, str, str, str]]]:
    """Cross-document sentence pairs with figures, and those the note would flag (one document's sentence first)."""
    sentences = {
        name: [s for s in passage_sentences(unwrapped(text)) if sentence_figures(s)] for name, text in docs.items()
    }
    pairs, flagged = 0, []
    for one, other in itertools.permutations(sentences, 2):
        for mine in sentences[one]:
            stated = sentence_figures(mine)
            for theirs in sentences[other]:
                pairs += 1
                if any(differs(f, sentence_figures(theirs), set()) for f in stated) and same_thing(mine, theirs):
                    flagged.append((one, mine, other, theirs))
    return pairs, flagged


def replay(path: Path) -> tuple[int, list[str]]:
    """Dumped turns with a cited claim, and the questions whose answer would get the note."""
    turns, fired = 0, []
    for line in path.read_text().splitlines():
        record = json.loads(line)
        knowledge = record["prompt"].split("<knowledge_base>", 1)[-1].split("</knowledge_base>", 1)[0]
        entries = ENTRY.findall(knowledge)
        names = {sid: name.split(",")[0] for sid, name, _ in entries}
        passages = {sid: text for sid, _, text in entries}
        claims = [
            SentenceSupport(sentence, start, end, ids, True, False, {ids[0]: 1.0}, ids[0])
            for sentence, start, end in answer_spans(record["final"])
            if (ids := [i for i in cited_ids(sentence) if i in passages])
        ]
        if claims and not record.get("error"):
            turns += 1
            if conflicts(claims, passages, names, record["final"]):
                fired.append(record["item"]["question"])
    return turns, fired


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--docs", type=Path, action="append", default=[], help="another folder of documents")
    parser.add_argument("--dump", type=Path, action="append", default=[], help="a bench.answers --dump file")
    report.add_output_args(parser, "conflicts")
    args = parser.parse_args(argv)
    corpora = {"sample documents": folder(SAMPLE_DOCS), "SQuAD 2.0 paragraphs": squad()}
    for extra in args.docs:
        corpora[f"sample documents + {extra.name}"] = folder(SAMPLE_DOCS) | folder(extra)
    rows, results = [], {"corpora": {}, "dumps": {}}
    for name, docs in corpora.items():
        pairs, flagged = scan(docs)
        rows.append([name, len(docs), f"{pairs:,}", len(flagged)])
        results["corpora"][name] = {"documents": len(docs), "pairs": pairs, "flagged": flagged}
    text = report.table(
        "conflict note, cross-document sentence pairs with a figure",
        ["corpus", "documents", "pairs", "flagged"],
        rows,
        args.markdown,
    )
    for name, result in results["corpora"].items():
        text += "".join(f"\n  {name}: {a}: “{s}” / {b}: “{t}”" for a, s, b, t in result["flagged"])
    for dump in args.dump:
        turns, fired = replay(dump)
        results["dumps"][str(dump)] = {"turns": turns, "fired": fired}
        text += f"\n{dump}: the note on {len(fired)} of {turns} turns with a cited claim" + "".join(
            f"\n  {q}" for q in fired
        )
    report.publish(text, results, args.json)
    return 0


if __name__ == "__main__":
    sys.exit(main())
