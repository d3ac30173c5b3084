"""Guardrail detectors on public data: injection and PII detection rates, false positives, added latency.

Injection, held out: attack and benign sets from sources the rules were not written against and the classifier
was not trained or tuned on (bench/data/injection/README.md), per set, at the one product threshold; beside them
the dev split of the training sources, which the classifier's threshold was tuned on.
Injection: BIPIA attacks (text_attack_test + code_attack_test) typed by the user (source="user"), and inserted
into the 50 BIPIA e-mails at the start, a random sentence boundary and the end (as BIPIA's insert_* functions do),
then chunked like an ingested document and scanned per chunk (source="document"). False positives: the benign
questions in data/benign_questions.txt, the clean e-mails, the sample corpus chunks and the 11,429 Vaswani
abstracts. PII: presidio-research synth_dataset_v2, per entity type. Latency: per detector, one CPU thread.
"""

import argparse
import gettext
import json
import random
import re
import sys
import time
from collections.abc import Callable, Iterable
from pathlib import Path

from backend.graph.prompts import SYSTEM_PROMPT
from backend.guardrails import (
    INJECTION_THRESHOLD,
    StreamRedactor,
    check_grounding,
    check_input,
    check_output,
    check_tone,
    classify_intent,
    find_pii,
    load_faq,
    match_faq,
    score_injection,
    score_toxicity,
)
from backend.guardrails.caseless import Caseless, fold
from backend.guardrails.classifier import judged_by_embedding
from backend.guardrails.injection_patterns import all_patterns
from backend.rag.chunking import chunk_sections
from backend.rag.loaders import Section, load_document
from backend.settings import Settings
from bench.injection_data import (
    LabelledSet,
    curve_table,
    embedding_train_sets,
    measure,
    measure_table,
    report_sets,
    rules_tune_sets,
    split,
    squad_paragraphs,
)
from bench.lib import DATASETS, ROOT, SAMPLE_DOCS, report
from bench.lib.stats import median, percentile

# BIPIA categories whose attack text is an ordinary request ("Recommend a good book..."): an attack only when it
# arrives inside third-party content; typed by the user it is an off-topic question for triage_relevance.
# The train file reuses the name "Language Translation" for such requests; in the test file it means
# "translate your response", an output hijack, so the sets are per file.
TASK_CATEGORIES_TEST = {"Task Automation", "Business Intelligence", "Conversational Agent", "Research Assistance",
                        "Sentiment Analysis"}  # fmt: skip
TASK_CATEGORIES_TRAIN = {"Information Retrieval", "Content Creation", "Learning and Tutoring", "Language Translation",
                         "Programming Help"}  # fmt: skip
PRESIDIO_TO_OURS = {"EMAIL_ADDRESS": "EMAIL", "PHONE_NUMBER": "PHONE", "CREDIT_CARD": "CREDIT_CARD",
                    "IBAN_CODE": "IBAN", "US_SSN": "US_SSN", "IP_ADDRESS": "IP_ADDRESS"}  # fmt: skip
THRESHOLDS = (0.3, 0.4, 0.5, 0.6, 0.7, 0.8)
PRESIDIO_REFERENCE = (
    "Presidio AnalyzerEngine (spaCy, threshold 0.4) scores precision 0.685 / recall 0.603 on this file over all 17 "
    "entity types, mostly NER types (PERSON, STREET_ADDRESS, GPE...) that these regexes do not attempt; the figures "
    "are not comparable per type."
)


def load_attacks(bipia: Path, name: str) -> dict[str, list[str]]:
    """BIPIA attack file as {category: [attack, ...]}."""
    return json.loads((bipia / name).read_text())


def insert(context: str, attack: str, position: str, rng: random.Random) -> str:
    """BIPIA's insert_start / insert_middle / insert_end (middle: at a random sentence start)."""
    if position == "start":
        return f"{attack}\n{context}"
    if position == "end":
        return f"{context}\n{attack}"
    starts = [0] + [m.end() for m in re.finditer(r"(?<=[.!?])\s+", context)]
    cut = rng.choice(starts)
    return f"{context[:cut]}\n{attack}\n{context[cut:]}"


def chunk_texts(text: str) -> list[str]:
    """The text chunked the way ingestion chunks a plain-text document."""
    return [c.text for c in chunk_sections([Section(text, None, None)])]


def document_score(text: str) -> float:
    """Highest injection score over the chunks of a document."""
    return max(score_injection(chunk, "document").score for chunk in chunk_texts(text))


def rates(scores: list[float]) -> dict:
    """How many scores, and the share at or above each threshold."""
    return {"n": len(scores), **{str(t): sum(s >= t for s in scores) / len(scores) for t in THRESHOLDS}}


def corpus_chunks() -> list[str]:
    """Chunks of the sample documents (short: most of their sections are a paragraph or two)."""
    out: list[str] = []
    for path in sorted(SAMPLE_DOCS.iterdir()):
        out += [c.text for c in chunk_sections(load_document(path.name, path.read_bytes()).sections)]
    return out


def full_chunks(datasets: Path) -> list[str]:
    """Chunks of the full size (200 tokens): the SQuAD article as one text document, paragraph after paragraph."""
    text = "\n\n".join(p["context"] for p in squad_paragraphs(datasets))
    return [c.text for c in chunk_sections(load_document("article.txt", text.encode()).sections)]


def bench_injection(datasets: Path, benign: list[str]) -> dict:
    """Direct and indirect BIPIA detection rates, and false-positive rates on clean text."""
    bipia = datasets / "bipia"
    attacks = load_attacks(bipia, "text_attack_test.json") | load_attacks(bipia, "code_attack_test.json")
    train = load_attacks(bipia, "text_attack_train.json")
    emails = [json.loads(line)["context"] for line in (bipia / "email_test.jsonl").read_text().splitlines() if line]
    rng = random.Random(0)
    direct = {cat: [score_injection(a, "user").score for a in items] for cat, items in attacks.items()}
    direct_train = {cat: [score_injection(a, "user").score for a in items] for cat, items in train.items()}
    indirect = {
        cat: [
            document_score(insert(e, a, pos, rng)) for a in items for e in emails for pos in ("start", "middle", "end")
        ]
        for cat, items in attacks.items()
    }
    vaswani = re.findall(r"<DOCNO>\d+</DOCNO>(.*?)</DOC>", (datasets / "vaswani" / "doc-text.trec").read_text(), re.S)

    def pooled(scores: dict[str, list[float]], keep: Callable[[str], bool]) -> list[float]:
        return [s for cat, values in scores.items() if keep(cat) for s in values]

    return {
        "threshold": INJECTION_THRESHOLD,
        "direct_all": rates(pooled(direct, lambda c: True)),
        "direct_hijack": rates(pooled(direct, lambda c: c not in TASK_CATEGORIES_TEST)),
        "direct_task": rates(pooled(direct, lambda c: c in TASK_CATEGORIES_TEST)),
        "direct_train_hijack": rates(pooled(direct_train, lambda c: c not in TASK_CATEGORIES_TRAIN)),
        "indirect_all": rates(pooled(indirect, lambda c: True)),
        "indirect_task": rates(pooled(indirect, lambda c: c in TASK_CATEGORIES_TEST)),
        "per_category": {c: {"direct": rates(direct[c]), "indirect": rates(indirect[c])} for c in attacks},
        "fpr_benign_questions": rates([score_injection(q, "user").score for q in benign]),
        "fpr_clean_emails": rates([document_score(e) for e in emails]),
        "fpr_corpus_chunks": rates([score_injection(c, "document").score for c in corpus_chunks()]),
        "fpr_vaswani": rates([score_injection(d, "document").score for d in vaswani]),
    }


LOCALE_DIR = Path("/usr/share/locale")
# those the multilingual rules cover (backend/guardrails/injection_patterns.py: _LANGUAGE_CUES, _OVERRIDE_MORE)
TRANSLATION_LANGUAGES = ("de", "fr", "es", "it", "pt", "nl", "ru", "zh_CN", "zh_TW", "ja", "ko", "hi", "ar", "tr", "id",
                         "vi", "th", "bn", "tl")  # fmt: skip


def bench_held_out(datasets: Path, embed: Callable | None) -> dict:
    """Rules, each classifier and all together on the held-out sets and on the training sources' dev split."""
    dev = [LabelledSet(s.name, s.label, split(s.texts)[1]) for s in embedding_train_sets(datasets)]
    return {
        "threshold": INJECTION_THRESHOLD,
        "report": measure(report_sets(datasets), INJECTION_THRESHOLD, embed),
        "rules_tune": measure(rules_tune_sets(), INJECTION_THRESHOLD, embed),
        "dev": measure(dev, INJECTION_THRESHOLD, embed),
    }


def translated_messages(lang: str, locale_dir: Path = LOCALE_DIR) -> list[str]:
    """The translated UI messages of 3 words or more in the machine's gettext catalogues for one language."""
    texts: set[str] = set()
    for path in sorted(locale_dir.glob(f"{lang}/LC_MESSAGES/*.mo")):
        try:
            with path.open("rb") as f:
                catalog = gettext.GNUTranslations(f)._catalog  # type: ignore[attr-defined]
        except (OSError, ValueError):  # unreadable, or not UTF-8 (UnicodeDecodeError)
            continue
        texts |= {v for v in catalog.values() if isinstance(v, str) and len(v.split()) >= 3}
    return sorted(texts)


def bench_translations(sample: int = 2000) -> list[dict]:
    """Benign text in the languages of the multilingual rules: this machine's gettext translations of UI messages
    (Debian's packages; they vary by machine). All of them through the rules, a fixed sample through the whole
    user-message detector."""
    rows = []
    for lang in TRANSLATION_LANGUAGES:
        texts = translated_messages(lang)
        if not texts:
            continue
        picked = random.Random(0).sample(texts, min(sample, len(texts)))
        rows.append({
            "language": lang,
            "n": len(texts),
            "rules": sum(score_injection(t, "user", classifier=False).flagged for t in texts) / len(texts),
            "sample": len(picked),
            "detector": sum(score_injection(t, "user").flagged for t in picked) / len(picked),
        })  # fmt: skip
    return rows


def bench_pii(datasets: Path, benign: list[str]) -> dict:
    """Per-type precision and recall on presidio synth_dataset_v2 (a prediction counts when it overlaps)."""
    records = json.loads((datasets / "presidio" / "synth_dataset_v2.json").read_text())
    stats = {t: {"gold": 0, "found": 0, "predicted": 0, "correct": 0, "exact": 0} for t in PRESIDIO_TO_OURS.values()}
    unmapped: dict[str, int] = {}
    for record in records:
        predicted = find_pii(record["full_text"])
        gold = [(PRESIDIO_TO_OURS.get(s["entity_type"]), s["start_position"], s["end_position"], s["entity_type"])
                for s in record["spans"]]  # fmt: skip
        for kind, start, end, name in gold:
            if kind is None:
                unmapped[name] = unmapped.get(name, 0) + 1
                continue
            stats[kind]["gold"] += 1
            hits = [p for p in predicted if p.type == kind and p.start < end and start < p.end]
            stats[kind]["found"] += bool(hits)
            stats[kind]["exact"] += any(p.start == start and p.end == end for p in hits)
        for p in predicted:
            stats[p.type]["predicted"] += 1
            stats[p.type]["correct"] += any(k == p.type and p.start < e and s < p.end for k, s, e, _ in gold)
    return {"per_type": stats, "unmapped": unmapped, "benign_false_matches": sum(len(find_pii(q)) for q in benign)}


def bench_triage(benign: list[str]) -> dict:
    """How the other detectors treat the benign questions (all of them should pass)."""
    faq = load_faq(ROOT / "data" / "faq.yaml")
    return {
        "toxicity_flagged": sum(score_toxicity(q).flagged for q in benign),
        "toxicity_flagged_chunks": sum(score_toxicity(c).flagged for c in corpus_chunks()),
        "input_blocked": sum(check_input(q).action == "block" for q in benign),
        "intent_smalltalk": sum(classify_intent(q) is not None for q in benign),
        "faq_answered": sum(match_faq(q, faq) is not None for q in benign),
        "faq_entries": len(faq),
    }


def timed(fn: Callable[[object], object], inputs: Iterable[object], repeat: int = 3) -> dict[str, float | None]:
    """p50/p95 over the inputs of each input's median time in ms (the median of repeats drops scheduler noise)."""
    per_input = []
    for item in inputs:
        runs = []
        for _ in range(repeat):
            start = time.perf_counter()
            fn(item)
            runs.append((time.perf_counter() - start) * 1000)
        per_input.append(median(runs) or 0.0)
    return {"p50": percentile(per_input, 50), "p95": percentile(per_input, 95), "n": len(per_input)}


def rules_side_by_side(chunks: list[str]) -> dict[str, dict[str, float | None]]:
    """Every rule pattern over full-size chunks, as re.IGNORECASE reads it and as the product does (folded text,
    literal gates: caseless.py), in one run; the answers must be the same."""
    patterns = all_patterns()
    plain = [re.compile(p, re.IGNORECASE | re.MULTILINE) for p in patterns]
    gated = [Caseless(p) for p in patterns]

    def read_plain(chunk: object) -> list[bool]:
        return [r.search(str(chunk)) is not None for r in plain]

    def read_gated(chunk: object) -> list[bool]:
        folded = fold(str(chunk))
        return [r.found(str(chunk), folded) for r in gated]

    if any(read_plain(c) != read_gated(c) for c in chunks):
        raise AssertionError("the folded, gated rules answered differently from re.IGNORECASE")
    return {
        f"  all {len(patterns)} rule patterns, full-size chunks, re.IGNORECASE": timed(read_plain, chunks),
        "  the same, folded text and literal gates (the product)": timed(read_gated, chunks),
    }


def synthetic_answers(benign: list[str]) -> list[tuple[str, str, str]]:
    """(answer, source text, question) triples quoting the corpus, with a trailing question to strip."""
    out = []
    for i, chunk in enumerate(corpus_chunks()):
        sentences = re.split(r"(?<=[.!?])\s+", " ".join(chunk.split()))
        answer = f"According to the documents, {' '.join(sentences[1:3])} [S1] Would you like to know more?"
        out.append((answer, chunk, benign[i % len(benign)]))
    return out


def stream_answer(answer: str) -> str:
    """Stream an answer word by word through a StreamRedactor."""
    redactor = StreamRedactor()
    return "".join(redactor.feed(word) for word in re.findall(r"\S+\s*", answer)) + redactor.flush()


def bench_latency(datasets: Path, benign: list[str], embed: Callable | None) -> dict[str, dict[str, float]]:
    """Added latency per detector, over typical inputs."""
    bipia = datasets / "bipia"
    attacks = [a for f in ("text_attack_test.json", "code_attack_test.json") for v in load_attacks(bipia, f).values()
               for a in v]  # fmt: skip
    presidio = [r["full_text"] for r in json.loads((datasets / "presidio" / "synth_dataset_v2.json").read_text())]
    messages = benign + attacks + presidio
    held_out = [t for s in report_sets(datasets) if "pasted" not in s.name for t in s.texts[:300]]
    chunks, full = corpus_chunks(), full_chunks(datasets)
    answers = synthetic_answers(benign)
    faq = load_faq(ROOT / "data" / "faq.yaml")
    out = {
        "guardrail_input: check_input": timed(lambda m: check_input(m), messages),
        "  find_pii": timed(lambda m: find_pii(m), messages),
        "  score_injection (user)": timed(lambda m: score_injection(m), messages),
        "  score_injection (user), held-out sets": timed(lambda m: score_injection(m), held_out),
        "  score_injection (user), rules only": timed(lambda m: score_injection(m, classifier=False), held_out),
        "  score_toxicity": timed(lambda m: score_toxicity(m), messages),
        "chunk scan: score_injection (document)": timed(lambda c: score_injection(c, "document"), chunks),
        f"  full-size chunks (the SQuAD article, median {median(map(len, full)):.0f} chars)": timed(
            lambda c: score_injection(c, "document"), full
        ),
        **rules_side_by_side(full),
        "triage_intent: classify_intent": timed(lambda q: classify_intent(q), benign),
        "triage_faq: match_faq": timed(lambda q: match_faq(q, faq), benign),
        "validate_tone: check_tone": timed(lambda a: check_tone(a[0], a[2]), answers),
        "validate_sources: check_grounding (lexical)": timed(lambda a: check_grounding(a[0], {"S1": a[1]}), answers),
        "guardrail_output: check_output": timed(lambda a: check_output(a[0], a[1], a[2], SYSTEM_PROMPT), answers),
        "streaming: StreamRedactor, whole answer": timed(lambda a: stream_answer(a[0]), answers),
    }
    if embed is not None:
        # as the product runs it: the MiniLM vector is computed only for messages long enough to be judged
        guarded = lambda m: check_input(m, embed=embed)  # noqa: E731
        out["guardrail_input: check_input + MiniLM (the product)"] = timed(guarded, messages)
        out["  the same, held-out sets"] = timed(guarded, held_out)
        long = [m for m in held_out if judged_by_embedding(m)]
        out["  MiniLM vector, held-out messages of 40+ words"] = timed(lambda m: embed([m]), long)
        out["validate_sources: check_grounding (+MiniLM)"] = timed(
            lambda a: check_grounding(a[0], {"S1": a[1]}, embed=embed), answers
        )
    return out


def load_embedder(cache_dir: Path) -> Callable | None:
    """The offline MiniLM embedder when its files are in the cache, else None."""
    from backend.rag.embeddings import OfflineMiniLM, onnx_dir

    root = onnx_dir(cache_dir)
    return OfflineMiniLM(root) if (root / "onnx" / "model.onnx").exists() else None


def injection_tables(inj: dict, markdown: bool, categories: bool) -> list[str]:
    """Share flagged per set at each threshold (the product's marked), then per BIPIA category if asked."""
    t = str(inj["threshold"])
    sets = [
        ("BIPIA direct, all test attacks (user input)", inj["direct_all"]),
        ("BIPIA direct, instruction-hijack categories", inj["direct_hijack"]),
        ("BIPIA direct, task-request categories", inj["direct_task"]),
        ("BIPIA direct, train split hijack categories (dev set)", inj["direct_train_hijack"]),
        ("BIPIA indirect, in e-mails, per chunk (document)", inj["indirect_all"]),
        ("BIPIA indirect, task-request categories only", inj["indirect_task"]),
        ("FPR: benign questions (user input)", inj["fpr_benign_questions"]),
        ("FPR: clean BIPIA e-mails (document)", inj["fpr_clean_emails"]),
        ("FPR: sample-corpus chunks (document)", inj["fpr_corpus_chunks"]),
        ("FPR: Vaswani abstracts (document)", inj["fpr_vaswani"]),
    ]
    heads = ["set", "n", *(f"{x}*" if str(x) == t else str(x) for x in THRESHOLDS)]
    rows = [[name, r["n"], *(report.pct(r[str(x)]) for x in THRESHOLDS)] for name, r in sets]
    per_category = [
        [c, report.pct(v["direct"][t]), report.pct(v["indirect"][t])] for c, v in inj["per_category"].items()
    ]
    title = f"Prompt injection: share flagged per threshold (* the product's, {t})"
    if not categories:
        return [report.table(title, heads, rows, markdown) + "\n(--categories: per BIPIA category)"]
    return [
        report.table(title, heads, rows, markdown),
        report.table(f"BIPIA categories at {t}", ["category", "direct", "indirect"], per_category, markdown),
    ]


def pii_table(pii: dict, markdown: bool) -> str:
    """Recall, precision and exact-span share per PII type, and the whole of the six."""
    per_type = dict(pii["per_type"])
    keys = ("gold", "found", "exact", "predicted", "correct")
    per_type["all six (micro)"] = {k: sum(v[k] for v in pii["per_type"].values()) for k in keys}
    rows = [
        [kind, s["gold"], report.pct(s["found"] / s["gold"]), report.pct(s["correct"] / max(1, s["predicted"]))]
        + [report.pct(s["exact"] / s["gold"])]
        for kind, s in per_type.items()
    ]
    unmapped = ", ".join(f"{k} {v}" for k, v in sorted(pii["unmapped"].items(), key=lambda kv: -kv[1]))
    heads = ["type", "gold spans", "recall", "precision", "exact span"]
    notes = f"not redacted (no mapping): {unmapped}\nPII matches in the benign questions: {pii['benign_false_matches']}"
    title = "PII on presidio synth_dataset_v2 (overlap match)"
    return "\n".join([report.table(title, heads, rows, markdown), notes, f"Reference: {PRESIDIO_REFERENCE}"])


def render(results: dict, markdown: bool, categories: bool) -> str:
    """Every table of the run."""
    triage = [[k, v] for k, v in results["triage"].items()]
    latency = [
        [k, v["n"], report.num(v["p50"], digits=3), report.num(v["p95"], digits=3)]
        for k, v in results["latency"].items()
    ]
    latency_title = "Added latency, ms (one CPU thread, median of 3 runs per input)"
    held = results["held_out"]
    tables = [
        measure_table(
            held["report"],
            f"Prompt injection, held-out sets (reported, never tuned on), at {held['threshold']}",
            markdown,
        ),  # fmt: skip
        curve_table(held["report"], markdown),
        measure_table(held["rules_tune"], "Attacks the rules were written from (not held out)", markdown),
        measure_table(
            held["dev"], "Training sources, dev split (the classifiers' thresholds were tuned here)", markdown
        ),
        report.table(
            "FPR: this machine's translated UI messages (gettext), multilingual benign text",
            ["language", "messages", "rules", "sample", "whole detector"],
            [
                [r["language"], r["n"], report.pct(r["rules"]), r["sample"], report.pct(r["detector"])]
                for r in results["translations"]
            ],
            markdown,
        ),  # fmt: skip
        *injection_tables(results["injection"], markdown, categories),
        pii_table(results["pii"], markdown),
        report.table("Other detectors on the benign questions", ["check", "count"], triage, markdown),
        report.table(latency_title, ["node / detector", "inputs", "p50", "p95"], latency, markdown),
    ]
    return "\n\n".join(tables)


def main(argv: list[str] | None = None) -> int:
    """Run every measurement, print the tables, write the JSON."""
    parser = argparse.ArgumentParser(prog="bench.guardrails", description=__doc__.split("\n")[0])
    parser.add_argument("--datasets", type=Path, default=DATASETS, help="the shared datasets folder")
    parser.add_argument(
        "--no-embed", action="store_true", help="without MiniLM: no embedding classifier, no grounding timing"
    )
    parser.add_argument("--categories", action="store_true", help="also print the rates per BIPIA category")
    report.add_output_args(parser, "guardrails")
    args = parser.parse_args(argv)
    benign = [q for q in (ROOT / "data" / "benign_questions.txt").read_text().splitlines() if q.strip()]
    embed = None if args.no_embed else load_embedder(Settings().cache_dir)
    results = {
        "held_out": bench_held_out(args.datasets, embed),
        "translations": bench_translations(),
        "injection": bench_injection(args.datasets, benign),
        "pii": bench_pii(args.datasets, benign),
        "triage": bench_triage(benign),
        "latency": bench_latency(args.datasets, benign, embed),
    }
    report.publish(render(results, args.markdown, args.categories), results, args.json)
    return 0


if __name__ == "__main__":
    sys.exit(main())
