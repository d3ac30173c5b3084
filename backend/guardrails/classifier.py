"""A linear prompt-injection / jailbreak classifier over hashed word and character n-grams.

Features: lower-cased NFKC text; word 1- and 2-grams and character 3- to 5-grams inside words, each hashed by
CRC-32 into 2**18 buckets, counts log-scaled and the vector L2-normalised. The model is logistic regression
fitted by `python -m bench.train_injection` on public data (bench/data/injection/README.md) and shipped as
injection_model.npz beside this module: weights, bias and the threshold fixed on the training sources' dev
split. It loads once, on first use; nothing is read at import time.
"""

import re
import unicodedata
import zlib
from collections import Counter
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

import numpy as np
import numpy.typing as npt

MODEL_PATH = Path(__file__).with_name("injection_model.npz")
BUCKETS = 2**18
CHAR_NGRAMS = (3, 4, 5)
_WORD = re.compile(r"\w+|[^\w\s]", re.UNICODE)


@dataclass(frozen=True)
class LinearModel:
    """Logistic-regression weights over the hashed features, and the flagging threshold on its probability."""

    weights: npt.NDArray[np.float32]
    bias: float
    threshold: float

    def probability(self, text: str) -> float:
        """P(injection or jailbreak) for one text."""
        index, value = features(text)
        return float(1 / (1 + np.exp(-(float(self.weights[index] @ value) + self.bias))))


def features(text: str) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.float32]]:
    """Hashed n-gram features of a text as (bucket indices, L2-normalised log counts)."""
    normal = unicodedata.normalize("NFKC", text).lower()
    words = _WORD.findall(normal)
    grams: Counter[str] = Counter(f"w {w}" for w in words)
    grams.update(f"b {a} {b}" for a, b in zip(words, words[1:], strict=False))
    for word in words:
        padded = f" {word} "
        for n in CHAR_NGRAMS:
            grams.update(padded[i : i + n] for i in range(len(padded) - n + 1))
    if not grams:
        return np.zeros(0, np.int64), np.zeros(0, np.float32)
    buckets: Counter[int] = Counter()
    for gram, count in grams.items():
        buckets[zlib.crc32(gram.encode()) % BUCKETS] += count
    index = np.fromiter(buckets.keys(), np.int64, len(buckets))
    value = np.log1p(np.fromiter(buckets.values(), np.float32, len(buckets)))
    return index, value / np.linalg.norm(value)


def save_model(model: LinearModel, path: Path = MODEL_PATH) -> None:
    """Write the weights as float16 (the model is small and the loss of precision is far below the noise)."""
    np.savez_compressed(path, weights=model.weights.astype(np.float16), bias=model.bias, threshold=model.threshold)


@lru_cache(maxsize=1)
def load_model(path: Path = MODEL_PATH) -> LinearModel:
    """The shipped model, read once."""
    with np.load(path) as data:
        return LinearModel(data["weights"].astype(np.float32), float(data["bias"]), float(data["threshold"]))


def classifier_score(text: str) -> float:
    """The shipped model's probability that a text is an injection or jailbreak attempt."""
    return load_model().probability(text)
