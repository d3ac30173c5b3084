"""Train the injection classifier on the training sources only; fix its threshold on their dev split.

`python -m bench.train_injection` rewrites backend/guardrails/injection_model.npz. Every training set is split
80/20 by a fixed shuffle; the model is fitted on the 80% and the threshold is the lowest that keeps the false
positive rate on the pooled benign dev texts at or below --max-dev-fpr. The held-out report sets are not read here.
"""

import argparse
import sys
import time

import numpy as np
import numpy.typing as npt

from backend.guardrails.classifier import BUCKETS, MODEL_PATH, LinearModel, features, save_model
from bench.injection_data import LabelledSet, split, train_sets
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


def pick_threshold(dev: list[tuple[LabelledSet, list[str]]], model: LinearModel, max_fpr: float) -> float:
    """Lowest threshold on a 0.01 grid at which the pooled benign dev texts' false-positive rate is <= max_fpr."""
    scores = np.array([model.probability(t) for s, texts in dev if s.label == 0 for t in texts])
    for t in np.arange(0.05, 0.96, 0.01):
        if np.mean(scores >= t) <= max_fpr:
            return round(float(t), 2)
    return 0.95


def main(argv: list[str] | None = None) -> int:
    """Fit, pick the threshold, print the dev figures, write the model."""
    parser = argparse.ArgumentParser(prog="bench.train_injection", description=__doc__.split("\n")[0])
    parser.add_argument("--l2", type=float, default=3e-4, help="L2 penalty on the weights")
    parser.add_argument("--epochs", type=int, default=300, help="full-batch Adam steps")
    parser.add_argument("--max-dev-fpr", type=float, default=0.005, help="on the pooled benign dev texts")
    parser.add_argument("--dry-run", action="store_true", help="print the figures, do not write the model")
    args = parser.parse_args(argv)
    sets = train_sets()
    parts = [(s, *split(s.texts)) for s in sets]
    texts = [t for _, fit_texts, _ in parts for t in fit_texts]
    labels = np.array([s.label for s, fit_texts, _ in parts for _ in fit_texts], np.float32)
    # each class weighs the same in total, and within a class each source weighs the same
    per_class = {c: sum(1 for s, f, _ in parts if s.label == c and f) for c in (0, 1)}
    weight = np.array([1 / (len(f) * per_class[s.label]) for s, f, _ in parts for _ in f], np.float32)
    start = time.perf_counter()
    w, b = fit(texts, labels, weight * len(texts), args.l2, args.epochs)
    elapsed = time.perf_counter() - start
    model = LinearModel(w, b, 0.5)
    dev = [(s, d) for s, _, d in parts]
    threshold = pick_threshold(dev, model, args.max_dev_fpr)
    model = LinearModel(w, b, threshold)
    rows = [
        [s.name, "attack" if s.label else "benign", len(f), len(d), report.pct(np.mean([model.probability(t) >=
         threshold for t in d])) if d else "-"]
        for s, f, d in parts
    ]  # fmt: skip
    title = f"Training sources (fit {elapsed:.0f} s); share flagged on the dev split at threshold {threshold}"
    print(report.table(title, ["set", "label", "fit", "dev", "flagged"], rows, False))
    if not args.dry_run:
        save_model(model, MODEL_PATH)
        print(f"wrote {MODEL_PATH}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
