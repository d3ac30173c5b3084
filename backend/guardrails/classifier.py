"""Two prompt-injection / jailbreak classifiers: one over hashed n-grams of the text, one over its MiniLM vector.

N-grams: lower-cased NFKC text; word 1- and 2-grams and character 3- to 5-grams inside words, each hashed by
CRC-32 into 2**18 buckets, counts log-scaled and the vector L2-normalised. The model is logistic regression
shipped as injection_model.npz beside this module: weights, bias and the threshold fixed on the training
sources' dev split.

Embedding: a small two-layer network over the message's all-MiniLM-L6-v2 vector, shipped as
injection_embedding_model.npz. It catches what a lexical model cannot: a role-play or a story worded unlike any
training text that asks for something harmful. It judges only messages of EMBEDDING_MIN_WORDS words or more: a
jailbreak wraps its request in a persona or a scenario (every training template is longer), while a short
question about a hazard ("How do I dispose of the refrigerant safely?") is a question, which it would otherwise
flag for its subject. It only runs where the documents are embedded by the offline MiniLM.

Both are fitted by `python -m bench.train_injection` on public data (bench/data/injection/README.md); each
threshold is the lowest that keeps the pooled benign dev texts' false-positive rate at or below 0.5%. The n-gram
model has a second threshold for messages of EMBEDDING_MIN_WORDS words or more, fixed by the same rule on the
long benign dev texts alone: they are a fifth of the pool, so the pooled rule let pasted prose through at a
higher rate than questions. They load
once, on first use; nothing is read at import time.
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
EMBEDDING_MODEL_PATH = Path(__file__).with_name("injection_embedding_model.npz")
# the shortest jailbreak template in the training data has 49 words; typed questions stay under 40 (HotpotQA's
# 99th percentile is 32, CLINC150's longest request 26)
EMBEDDING_MIN_WORDS = 40
BUCKETS = 2**18
CHAR_NGRAMS = (3, 4, 5)
_WORD = re.compile(r"\w+|[^\w\s]", re.UNICODE)


@dataclass(frozen=True)
class LinearModel:
    """Logistic-regression weights over the hashed features, and the flagging threshold on its probability."""

    weights: npt.NDArray[np.float32]
    bias: float
    threshold: float
    long_threshold: float  # for messages the embedding classifier also judges (judged_by_embedding)

    def threshold_for(self, text: str) -> float:
        """The flagging threshold for this text: long messages (pasted prose, most jailbreaks) have their own."""
        return self.long_threshold if judged_by_embedding(text) else self.threshold

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
    np.savez_compressed(path, weights=model.weights.astype(np.float16), bias=model.bias, threshold=model.threshold,
                        long_threshold=model.long_threshold)  # fmt: skip


@lru_cache(maxsize=1)
def load_model(path: Path = MODEL_PATH) -> LinearModel:
    """The shipped model, read once."""
    with np.load(path) as data:
        return LinearModel(data["weights"].astype(np.float32), float(data["bias"]), float(data["threshold"]),
                           float(data["long_threshold"]))  # fmt: skip


@dataclass(frozen=True)
class EmbeddingModel:
    """One hidden ReLU layer over a 384-dimensional MiniLM vector, a logistic output, and the flagging threshold."""

    w1: npt.NDArray[np.float32]
    b1: npt.NDArray[np.float32]
    w2: npt.NDArray[np.float32]
    b2: float
    threshold: float

    def probabilities(self, vectors: npt.ArrayLike) -> npt.NDArray[np.float32]:
        """P(injection or jailbreak) for each row of vectors."""
        hidden = np.maximum(0, np.asarray(vectors, np.float32) @ self.w1 + self.b1)
        return 1 / (1 + np.exp(-(hidden @ self.w2 + self.b2)))

    def probability(self, vector: npt.ArrayLike) -> float:
        """P(injection or jailbreak) for one vector."""
        return float(self.probabilities(np.asarray(vector, np.float32)[None, :])[0])


def judged_by_embedding(text: str) -> bool:
    """Whether the embedding classifier looks at this message (long enough to wrap a request in a scenario)."""
    return len(text.split()) >= EMBEDDING_MIN_WORDS


def save_embedding_model(model: EmbeddingModel, path: Path = EMBEDDING_MODEL_PATH) -> None:
    """Write the network as float16, like the n-gram weights."""
    np.savez_compressed(path, w1=model.w1.astype(np.float16), b1=model.b1.astype(np.float16),
                        w2=model.w2.astype(np.float16), b2=model.b2, threshold=model.threshold)  # fmt: skip


@lru_cache(maxsize=1)
def load_embedding_model(path: Path = EMBEDDING_MODEL_PATH) -> EmbeddingModel:
    """The shipped embedding model, read once."""
    with np.load(path) as data:
        w1, b1, w2 = (data[k].astype(np.float32) for k in ("w1", "b1", "w2"))
        return EmbeddingModel(w1, b1, w2, float(data["b2"]), float(data["threshold"]))


def warm_up() -> None:
    """Read both shipped models now, so the first message after a start does not wait for the files."""
    load_model()
    load_embedding_model()


def classifier_score(text: str) -> float:
    """The shipped model's probability that a text is an injection or jailbreak attempt."""
    return load_model().probability(text)
