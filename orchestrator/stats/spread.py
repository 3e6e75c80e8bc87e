"""How sure are the medians? Distribution-free statistics of raw sample sets.

A timing's median moves with the machine's load (the chapter's PyTorch MPS median doubled its
minimum at load 24), so the report gives each median a 95% confidence interval and each
burn/PyTorch ratio a bootstrap interval. Both assume nothing about the shape of the timing
distribution, which is skewed and often bimodal. The bootstrap uses a fixed seed so that the
same data always gives the same report. Plain arrays in, numbers out: which sample set belongs
to which figure is the report's (report/sample_sets.py).
"""

from __future__ import annotations

import functools
import math
from collections.abc import Hashable
from typing import NamedTuple, TypeVar

import numpy as np

LEVEL = 0.95
BOOTSTRAP_RESAMPLES = 4000
SEED = 20250101

Key = TypeVar("Key", bound=Hashable)  # a sample set's name: the report's SampleKey


def ratio(num: float | None, den: float | None) -> float | None:
    """num / den for two times, or None where that means nothing: a missing, negative or
    non-finite value, or a zero denominator (a 0.000ns minimum). Every ratio of the report and of
    `compare` goes through here, so a figure the contract allows never divides by zero."""
    if num is None or den is None:
        return None
    num, den = float(num), float(den)
    if not (math.isfinite(num) and math.isfinite(den)) or num < 0 or den <= 0:
        return None
    quotient = num / den
    return quotient if math.isfinite(quotient) else None


def median_ci(values: np.ndarray, level: float = LEVEL) -> tuple[float, float] | None:
    """Order-statistic CI of the median: exact binomial coverage, no resampling.

    The interval [x_(k), x_(n-k+1)] covers the true median with probability
    1 - 2 P(Binomial(n, 1/2) < k); k is the largest rank that keeps that ≥ level. None when n is
    too small for any such interval (n < 6 at 95%).
    """
    x = np.sort(np.asarray(values, dtype=float))
    n = len(x)
    k = _ci_rank(n, level)
    return None if k is None else (float(x[k - 1]), float(x[n - k]))


@functools.lru_cache(maxsize=256)
def _ci_rank(n: int, level: float) -> int | None:
    best = None
    tail = 0.0  # P(Binomial(n, 1/2) < k), grown one term per k
    # each term in logs: comb(n, k) and 2**n overflow a float beyond ~1000 samples
    log_all = n * math.log(2.0)
    for k in range(1, n // 2 + 1):
        tail += math.exp(math.lgamma(n + 1) - math.lgamma(k) - math.lgamma(n - k + 2) - log_all)
        if 1 - 2 * tail < level:
            break
        best = k
    return best


class Summary(NamedTuple):
    """One sample set's spread: what the spread table shows of it."""

    n: int
    minimum: float
    median: float
    ci: tuple[float, float] | None  # median_ci
    iqr: float


def summaries(sets: dict[Key, np.ndarray]) -> dict[Key, Summary]:
    """min, median, median_ci and iqr of each set, the sets of one size sorted as one array
    (a 5000-run report has 28,000 sets: a sort, a median and two percentiles each were
    seconds). The same numbers as those functions give one set at a time: np.median's (a + b)
    / 2, the order statistics, np.percentile's interpolation row by row (each set finite, as
    report/sample_sets keeps them)."""
    by_size: dict[int, list[Key]] = {}
    for key, values in sets.items():
        by_size.setdefault(len(values), []).append(key)
    out: dict[Key, Summary] = {}
    for n, keys in by_size.items():
        if n == 0:
            out.update((k, Summary(0, math.nan, math.nan, None, math.nan)) for k in keys)
            continue
        ordered = np.sort(np.stack([np.asarray(sets[k], dtype=float) for k in keys]), axis=1)
        medians = _middle(ordered)
        q1, q3 = np.percentile(ordered, [25, 75], axis=1)
        k = _ci_rank(n, LEVEL)
        for i, key in enumerate(keys):
            ci = None if k is None else (float(ordered[i, k - 1]), float(ordered[i, n - k]))
            out[key] = Summary(n, float(ordered[i, 0]), float(medians[i]), ci,
                               float(q3[i] - q1[i]))
    return out


def iqr(values: np.ndarray) -> float:
    if len(values) == 0:
        return float("nan")
    q1, q3 = np.percentile(np.asarray(values, dtype=float), [25, 75])
    return float(q3 - q1)


def ratio_ci(num: np.ndarray, den: np.ndarray, level: float = LEVEL,
             resamples: int = BOOTSTRAP_RESAMPLES) -> tuple[float, float] | None:
    """Percentile-bootstrap CI of median(num) / median(den), the two resampled independently."""
    num, den = np.asarray(num, dtype=float), np.asarray(den, dtype=float)
    if len(num) < 2 or len(den) < 2:
        return None
    finite = bool(np.isfinite(num).all() and np.isfinite(den).all())
    if finite and resamples * max(len(num), len(den)) <= _KEPT:
        rows_top, rows_bottom = _resampled(len(num), len(den), resamples)
        top, bottom = _row_medians(num[rows_top]), _row_medians(den[rows_bottom])
    else:  # larger sets a block of resamples at a time; nan and inf by np.median's own rule
        rng = np.random.default_rng(SEED)
        top, bottom = (_medians_of_resamples(rng, values, resamples, finite)
                       for values in (num, den))
    # a zero median, or a quotient past a float's range (1e300 / 1e-300, an absurd log): no
    # ratio, left out below as ratio() leaves it out (inf), not a RuntimeWarning
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        ratios = top / bottom
    ratios = ratios[np.isfinite(ratios)]
    if len(ratios) < resamples / 2:  # most resamples had a zero median: no interval to give
        return None
    lo, hi = np.percentile(ratios, [50 * (1 - level), 50 * (1 + level)])
    return float(lo), float(hi)


# resample positions kept per pair of sizes up to this many values each (8 MiB); larger sets
# are resampled _BLOCK values at a time: a set of MAX_REPS = 100,000 samples made two 4000 x
# 100,000 arrays at once (3.2 GB each)
_KEPT, _BLOCK = 2**20, 2**22


@functools.lru_cache(maxsize=8)
def _resampled(n_num: int, n_den: int, resamples: int) -> tuple[np.ndarray, np.ndarray]:
    """The positions the seeded generator picks for `rng.choice(num, ...)` then
    `rng.choice(den, ...)`: they depend on the sizes alone, so every pair of the same sizes
    (a report's thousands of ratios, most of one --reps) draws them once. Read-only arrays."""
    rng = np.random.default_rng(SEED)
    top, bottom = (rng.choice(np.arange(n), (resamples, n)) for n in (n_num, n_den))
    for array in (top, bottom):
        array.flags.writeable = False
    return top, bottom


def _medians_of_resamples(rng: np.random.Generator, values: np.ndarray, resamples: int,
                          finite: bool) -> np.ndarray:
    """np.median(rng.choice(values, (resamples, n)), axis=1), drawn a block of rows at a time:
    the generator draws the same positions in blocks as in one call (its draws depend on the
    size of the set alone; tests/stats/test_spread.py holds it to the one call)."""
    n = len(values)
    rows = max(1, _BLOCK // n)
    median = _row_medians if finite else (lambda v: np.median(v, axis=1))
    return np.concatenate([median(values[rng.choice(np.arange(n), (min(rows, resamples - i), n))])
                           for i in range(0, resamples, rows)])


def _row_medians(values: np.ndarray) -> np.ndarray:
    """np.median(values, axis=1) for finite values: the middle value, or the mean of the
    middle two computed as np.median does, (a + b) / 2; from a sort of each row (np.partition
    along rows was 5x slower at 20 values, 2x at 1000), a partition past 1024 values."""
    n = values.shape[1]
    middle = [n // 2 - 1, n // 2] if n % 2 == 0 else [n // 2]
    return _middle(np.sort(values, axis=1) if n <= 1024 else np.partition(values, middle, axis=1))


def _middle(ordered: np.ndarray) -> np.ndarray:
    """Each row's median from rows whose middle values are in place (sorted or partitioned)."""
    n = ordered.shape[1]
    if n % 2:
        return ordered[:, n // 2]
    return (ordered[:, n // 2 - 1] + ordered[:, n // 2]) / 2
