"""Train the injection classifiers on the training sources only; fix each threshold on their dev split.

`python -m bench.train_injection` rewrites backend/guardrails/injection_model.npz (n-grams) and
injection_embedding_model.npz (MiniLM vectors; `--only ngram|embedding` for one). Every training set is split
80/20 by a fixed shuffle; a model is fitted on the 80% and its threshold is the lowest that keeps the false
positive rate on the pooled benign dev texts at or below --max-dev-fpr (the n-gram model has a second one, by the
same rule over the benign dev texts the embedding classifier also judges). The held-out report sets are not read here.
"""

import argparse
import sys
import time

import numpy as np
import numpy.typing as npt

from backend.guardrails.classifier import (
    BUCKETS,
    EMBEDDING_MIN_WORDS,
    EMBEDDING_MODEL_PATH,
    MODEL_PATH,
    EmbeddingModel,
    LinearModel,
    features,
    judged_by_embedding,
    load_model,
    save_embedding_model,
    save_model,
)
from backend.settings import get_settings
from bench.injection_data import LabelledSet, embedding_train_sets, split, train_sets
from bench.lib import report


def matrix(texts: list[str]) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.int64], npt.NDArray[np.float32]]:
    """The texts' features as (row of each entry, bucket of each entry, value of each entry)."""
    rows, cols, vals = [], [], []
    for i, text in enumerate(texts):
        index, value = features(text)
        rows.append(np.full(len(index), i, np.int64))
        cols.append(index)
        vals.append(value)
    return np.concatenate(rows), np.concatenate(cols), np.concatenate(vals)


def fit(texts: list[str], labels: npt.NDArray[np.float32], sample_weight: npt.NDArray[np.float32],
        l2: float, epochs: int) -> tuple[npt.NDArray[np.float32], float]:  # fmt: skip
    """Weighted, L2-regularised logistic regression by full-batch Adam on the sparse features."""
    rows, cols, vals = matrix(texts)
    n = len(texts)
    w = np.zeros(BUCKETS, np.float64)
    b = 0.0
    m, v, mb, vb = np.zeros_like(w), np.zeros_like(w), 0.0, 0.0
    lr, beta1, beta2, eps = 0.05, 0.9, 0.999, 1e-8
    total = sample_weight.sum()
    for step in range(1, epochs + 1):
        z = np.bincount(rows, weights=vals * w[cols], minlength=n) + b
        p = 1 / (1 + np.exp(-z))
        r = (p - labels) * sample_weight / total
        gw = np.bincount(cols, weights=vals * r[rows], minlength=BUCKETS) + l2 * w
        gb = r.sum()
        m, v = beta1 * m + (1 - beta1) * gw, beta2 * v + (1 - beta2) * gw**2
        mb, vb = beta1 * mb + (1 - beta1) * gb, beta2 * vb + (1 - beta2) * gb**2
        w -= lr * (m / (1 - beta1**step)) / (np.sqrt(v / (1 - beta2**step)) + eps)
        b -= lr * (mb / (1 - beta1**step)) / (np.sqrt(vb / (1 - beta2**step)) + eps)
    return w.astype(np.float32), float(b)


def fit_network(vectors: npt.NDArray[np.float32], labels: npt.NDArray[np.float32],
                sample_weight: npt.NDArray[np.float32], l2: float, epochs: int, hidden: int = 64,
                seed: int = 0) -> EmbeddingModel:  # fmt: skip
    """One hidden ReLU layer and a logistic output, weighted cross-entropy plus L2, by full-batch Adam."""
    rng = np.random.default_rng(seed)
    dim = vectors.shape[1]
    params = [rng.normal(0, dim**-0.5, (dim, hidden)), np.zeros(hidden), rng.normal(0, hidden**-0.5, hidden),
              np.zeros(1)]  # fmt: skip
    moments = [(np.zeros_like(p), np.zeros_like(p)) for p in params]
    lr, beta1, beta2, eps = 0.01, 0.9, 0.999, 1e-8
    x, total = vectors.astype(np.float64), sample_weight.sum()
    for step in range(1, epochs + 1):
        w1, b1, w2, b2 = params
        h = np.maximum(0, x @ w1 + b1)
        p = 1 / (1 + np.exp(-(h @ w2 + b2[0])))
        r = (p - labels) * sample_weight / total
        dh = np.outer(r, w2) * (h > 0)
        grads = [x.T @ dh + l2 * w1, dh.sum(0), h.T @ r + l2 * w2, np.array([r.sum()])]
        for i, g in enumerate(grads):
            m, v = moments[i]
            m[:] = beta1 * m + (1 - beta1) * g
            v[:] = beta2 * v + (1 - beta2) * g**2
            params[i] -= lr * (m / (1 - beta1**step)) / (np.sqrt(v / (1 - beta2**step)) + eps)
    w1, b1, w2, b2 = (p.astype(np.float32) for p in params)
    return EmbeddingModel(w1, b1, w2, float(b2[0]), 0.5)


def lowest_threshold(benign_scores: npt.NDArray[np.float64], max_fpr: float, step: float = 0.01) -> float:
    """Lowest threshold on a grid at which the share of benign scores at or above it is <= max_fpr."""
    for t in np.arange(0.05, 0.99, step):
        if np.mean(benign_scores >= t) <= max_fpr:
            return round(float(t), 3)
    return 0.99


def weighted(sets: list[LabelledSet]) -> tuple[list, list[str], npt.NDArray[np.float32], npt.NDArray[np.float32]]:
    """(set, fit, dev) per set; the fit texts, their labels and weights: each class weighs the same in total,
    and within a class each source weighs the same."""
    parts = [(s, *split(s.texts)) for s in sets]
    texts = [t for _, fit_texts, _ in parts for t in fit_texts]
    labels = np.array([s.label for s, fit_texts, _ in parts for _ in fit_texts], np.float32)
    per_class = {c: sum(1 for s, f, _ in parts if s.label == c and f) for c in (0, 1)}
    weight = np.array([1 / (len(f) * per_class[s.label]) for s, f, _ in parts for _ in f], np.float32)
    return parts, texts, labels, weight * len(texts)


def dev_table(parts: list, flags: list[npt.NDArray[np.bool_]], title: str) -> str:
    """Share of each source's dev split flagged (flags: one array per part, in order)."""
    rows = [[s.name, "attack" if s.label else "benign", len(f), len(d), report.pct(np.mean(x)) if d else "-"]
            for (s, f, d), x in zip(parts, flags, strict=True)]  # fmt: skip
    return report.table(title, ["set", "label", "fit", "dev", "flagged"], rows, False)


def train_ngram(args: argparse.Namespace) -> None:
    """The n-gram logistic regression on train_sets(); with --thresholds-only the shipped weights are kept and
    only the thresholds are fixed again."""
    parts, texts, labels, weight = weighted(train_sets())
    start = time.perf_counter()
    if args.thresholds_only:
        shipped = load_model()
        w, b = shipped.weights, shipped.bias
    else:
        w, b = fit(texts, labels, weight, args.l2, args.epochs)
    elapsed = time.perf_counter() - start
    model = LinearModel(w, b, 0.5, 0.5)
    dev = [(model.probability(t), judged_by_embedding(t)) for s, _, d in parts if s.label == 0 for t in d]
    pooled = lowest_threshold(np.array([p for p, _ in dev]), args.max_dev_fpr)
    long = lowest_threshold(np.array([p for p, is_long in dev if is_long]), args.max_dev_fpr)
    model = LinearModel(w, b, pooled, long)
    flags = [np.array([model.probability(t) >= model.threshold_for(t) for t in d], bool) for _, _, d in parts]
    title = (f"N-gram model (fit {elapsed:.0f} s); share flagged on the dev split at threshold {model.threshold} "
             f"({model.long_threshold} for messages of {EMBEDDING_MIN_WORDS} words or more)")  # fmt: skip
    print(dev_table(parts, flags, title))
    if not args.dry_run:
        save_model(model, MODEL_PATH)
        print(f"wrote {MODEL_PATH}")


def train_embedding(args: argparse.Namespace) -> None:
    """The network over MiniLM vectors on embedding_train_sets()."""
    from bench.guardrails import load_embedder

    embed = load_embedder(get_settings().cache_dir)
    if embed is None:
        raise SystemExit("the MiniLM files are missing: run ./scripts/start or `python -m backend.cli prepare` first")
    parts, texts, labels, weight = weighted(embedding_train_sets())
    start = time.perf_counter()
    vectors = np.asarray(embed(texts), np.float32)
    embedded = time.perf_counter() - start
    network = fit_network(vectors, labels, weight, args.embedding_l2, args.embedding_epochs)
    elapsed = time.perf_counter() - start - embedded
    dev = [network.probabilities(np.asarray(embed(d), np.float32)) if d else np.zeros(0) for _, _, d in parts]
    # the product judges only long messages, so the rule counts the benign dev texts it judges
    judged = [np.array([judged_by_embedding(t) for t in d], bool) for _, _, d in parts]
    benign = np.concatenate([p[j] for (s, _, _), p, j in zip(parts, dev, judged, strict=True) if s.label == 0])
    threshold = lowest_threshold(benign, args.max_dev_fpr, 0.005)
    network = EmbeddingModel(network.w1, network.b1, network.w2, network.b2, threshold)
    flags = [(p >= threshold) & j for p, j in zip(dev, judged, strict=True)]
    title = (f"Embedding model (embedding {embedded:.0f} s, fit {elapsed:.0f} s); share flagged on the dev split at "
             f"threshold {threshold}, {len(benign)} benign dev texts long enough to judge")  # fmt: skip
    print(dev_table(parts, flags, title))
    if not args.dry_run:
        save_embedding_model(network, EMBEDDING_MODEL_PATH)
        print(f"wrote {EMBEDDING_MODEL_PATH}")


def main(argv: list[str] | None = None) -> int:
    """Fit, pick the thresholds, print the dev figures, write the models."""
    parser = argparse.ArgumentParser(prog="bench.train_injection", description=__doc__.split("\n")[0])
    parser.add_argument("--only", choices=("ngram", "embedding"), help="train one of the two models")
    parser.add_argument("--l2", type=float, default=3e-4, help="L2 penalty on the n-gram weights")
    parser.add_argument("--epochs", type=int, default=300, help="full-batch Adam steps (n-grams)")
    parser.add_argument("--embedding-l2", type=float, default=1e-4, help="L2 penalty on the network's weights")
    parser.add_argument("--embedding-epochs", type=int, default=600, help="full-batch Adam steps (network)")
    parser.add_argument("--max-dev-fpr", type=float, default=0.005, help="on the pooled benign dev texts")
    parser.add_argument("--thresholds-only", action="store_true", help="keep the shipped n-gram weights")
    parser.add_argument("--dry-run", action="store_true", help="print the figures, do not write the models")
    args = parser.parse_args(argv)
    if args.only != "embedding":
        train_ngram(args)
    if args.only != "ngram":
        train_embedding(args)
    return 0


if __name__ == "__main__":
    sys.exit(main())
