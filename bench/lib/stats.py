"""Summary statistics of samples: the one percentile definition every benchmark uses."""

from collections.abc import Iterable


def percentile(values: Iterable[float], p: float) -> float | None:
    """The p-th percentile (p in 0..100), interpolated linearly between closest ranks; None for no values."""
    ordered = sorted(values)
    if not ordered:
        return None
    pos = (len(ordered) - 1) * p / 100
    low = int(pos)
    high = min(low + 1, len(ordered) - 1)
    return ordered[low] + (ordered[high] - ordered[low]) * (pos - low)


def median(values: Iterable[float]) -> float | None:
    """The 50th percentile; None for no values."""
    return percentile(values, 50)


def dist(values: Iterable[float]) -> dict[str, float | None]:
    """Count, p50, p95, min, max and mean of a sample (None where there are no values)."""
    sample = list(values)
    return {
        "n": len(sample),
        "p50": percentile(sample, 50),
        "p95": percentile(sample, 95),
        "min": min(sample, default=None),
        "max": max(sample, default=None),
        "mean": sum(sample) / len(sample) if sample else None,
    }


def ratio(a: float | None, b: float | None) -> float | None:
    """a / b; None when either is missing or b is zero."""
    return None if a is None or not b else a / b


def minus(a: float | None, b: float | None) -> float | None:
    """a - b; None when either is missing."""
    return None if a is None or b is None else a - b
