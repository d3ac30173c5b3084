"""Benign sets of casual requests and pasted prose (issue 17): the vendoring step for four of the injection sets.

Made by `python -m bench.injection_vendor SNAPSHOTS` with the others (bench/data/injection/README.md names each
source with commit, path and licence):

  clinc150_queries.txt.gz     train   3,000 short assistant requests, CLINC150 (crowd-written, all splits)
  wikitext_pasted.jsonl.gz    train   Wikipedia paragraphs (WikiText-2 valid and test) pasted with a question
  stdlib_docs_pasted.jsonl.gz train   paragraphs of the Python standard library's docstrings pasted with a question
  hwu64_requests.txt.gz       report  HWU64 home-assistant requests (cross-validation fold 1, test part)
"""

import ast
import csv
import io
import json
import random
import re
import subprocess
import sys
import sysconfig
from pathlib import Path

from bench.injection_vendor import show, write

HWU64_FOLD = "CrossValidation/autoGeneFromRealAnno/autoGene_2018_03_22-13_01_25_169/CrossValidation/KFold_1/testset/csv"
MIN_WORDS = 40  # a pasted paragraph has at least this many words


def vendor_benign(mirror: Path, questions: list[str]) -> None:
    """Write the four files from git snapshots under mirror/<owner>+<name>/repo and this Python's standard library;
    each pasted paragraph is followed by one of `questions` (HotpotQA questions not in the training file)."""
    clinc = json.loads(show(mirror / "clinc+oos-eval" / "repo", "data/data_full.json"))
    queries = sorted({q for rows in clinc.values() for q, _ in rows})
    random.Random(0).shuffle(queries)
    write("clinc150_queries.txt.gz", queries[:3000], as_json=False)
    write("hwu64_requests.txt.gz", hwu64_requests(mirror / "xliuhw+NLU-Evaluation-Data" / "repo", queries), False)
    wiki = wikitext_paragraphs(mirror / "pytorch+examples" / "repo")
    write("wikitext_pasted.jsonl.gz", [f"{p}\n\n{q}" for p, q in zip(wiki, questions, strict=False)])
    docs = docstring_paragraphs()[:700]
    write("stdlib_docs_pasted.jsonl.gz", [f"{p}\n\n{q}" for p, q in zip(docs, questions[len(wiki) :], strict=False)])


def hwu64_requests(git_dir: Path, exclude: list[str]) -> list[str]:
    """The requests as the user typed them (the normalised text where that is missing), less exact copies of any
    text in exclude."""
    names = subprocess.run(["git", f"--git-dir={git_dir}", "ls-tree", "--name-only", f"HEAD:{HWU64_FOLD}"],
                           check=True, capture_output=True, text=True).stdout.split()  # fmt: skip
    seen = {_plain(t) for t in exclude}
    out = set()
    for name in names:
        for row in csv.DictReader(io.StringIO(show(git_dir, f"{HWU64_FOLD}/{name}").decode()), delimiter=";"):
            typed = row["answer_from_user"]
            text = (typed if typed not in ("xxx", "null", "") else row["answer_from_anno"]).strip()
            if text and _plain(text) not in seen:
                out.add(text)
    return sorted(out)


def wikitext_paragraphs(git_dir: Path) -> list[str]:
    """WikiText-2 valid and test paragraphs as plain prose, sentences with an <unk> token left out."""
    out = []
    for part in ("valid", "test"):
        raw = show(git_dir, f"word_language_model/data/wikitext-2/{part}.txt").decode()
        for line in raw.splitlines():
            kept = " ".join(s for s in re.split(r"(?<= \.) ", line.strip()) if "<unk>" not in s)
            if not line.strip().startswith("=") and kept.count(" . ") >= 2 and len(kept.split()) >= MIN_WORDS:
                out.append(_detokenize(kept))
    return out


def docstring_paragraphs() -> list[str]:
    """Long paragraphs of the docstrings of this Python's standard library (no tests, no doctests), in a fixed
    shuffle."""
    lib = Path(sysconfig.get_paths()["stdlib"])
    out = set()
    for path in sorted(lib.glob("*.py")) + sorted(lib.glob("*/*.py")):
        if {"test", "tests", "idlelib", "site-packages"} & set(path.parts):
            continue
        tree = ast.parse(path.read_text(encoding="utf-8", errors="replace"))
        for node in ast.walk(tree):
            if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
                for paragraph in re.split(r"\n\s*\n", ast.get_docstring(node) or ""):
                    text = " ".join(paragraph.split())
                    if len(text.split()) >= MIN_WORDS and not re.search(r">>>|[{}=]{2}|\w\(\)?\s*->", text):
                        out.add(text)
    paragraphs = sorted(out)
    random.Random(0).shuffle(paragraphs)
    print(f"docstrings of Python {sys.version.split()[0]}: {len(paragraphs)} paragraphs")
    return paragraphs


def _detokenize(line: str) -> str:
    """WikiText's tokenised line as plain prose ("co @-@ star , he" -> "co-star, he")."""
    text = line.replace(" @-@ ", "-").replace(" @,@ ", ",").replace(" @.@ ", ".")
    text = re.sub(r" ([,.;:!?)\]'])", r"\1", text)
    text = re.sub(r"([(\[]) ", r"\1", text).replace(" n't", "n't")
    return re.sub(r'" (.*?) "', r'"\1"', text).strip()


def _plain(text: str) -> str:
    """Lower-case words only, for exact-copy checks across sources."""
    return " ".join(re.findall(r"\w+", text.lower()))
