"""How sure are the medians? Distribution-free statistics of the raw samples.

A timing's median moves with the machine's load (the chapter's PyTorch MPS median doubled its
minimum at load 24), so the report gives each median a 95% confidence interval and each
burn/PyTorch ratio a bootstrap interval. Both assume nothing about the shape of the timing
distribution, which is skewed and often bimodal. The bootstrap uses a fixed seed so that the
same data always gives the same report.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

LEVEL = 0.95
BOOTSTRAP_RESAMPLES = 4000
SEED = 20250101

# One raw-sample set: run_id, label, shape, method and occurrence joined in one string (a string
# compares cleanly inside a DataFrame column, a tuple would not). The occurrence counts earlier
# sets with the same four keys, because a captured log holds many runs under one run_id.
SampleKey = str
_SEP = "\x1f"


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


def _ci_rank(n: int, level: float) -> int | None:
    best = None
    tail = 0.0  # P(Binomial(n, 1/2) < k), grown one term per k
    for k in range(1, n // 2 + 1):
        tail += math.comb(n, k - 1) / 2.0**n
        if 1 - 2 * tail < level:
            break
        best = k
    return best


def iqr(values: np.ndarray) -> float:
    q1, q3 = np.percentile(np.asarray(values, dtype=float), [25, 75])
    return float(q3 - q1)


def ratio_ci(num: np.ndarray, den: np.ndarray, level: float = LEVEL,
             resamples: int = BOOTSTRAP_RESAMPLES) -> tuple[float, float] | None:
    """Percentile-bootstrap CI of median(num) / median(den), the two resampled independently."""
    num, den = np.asarray(num, dtype=float), np.asarray(den, dtype=float)
    if len(num) < 2 or len(den) < 2:
        return None
    rng = np.random.default_rng(SEED)
    top = np.median(rng.choice(num, (resamples, len(num))), axis=1)
    bottom = np.median(rng.choice(den, (resamples, len(den))), axis=1)
    ratios = top / bottom
    lo, hi = np.percentile(ratios[np.isfinite(ratios)], [50 * (1 - level), 50 * (1 + level)])
    return float(lo), float(hi)


def sample_sets(samples: pd.DataFrame) -> dict[SampleKey, np.ndarray]:
    """The raw samples, one array per `# samples` line, keyed like `summary_keys` keys figures.

    A set starts where `idx` restarts at 0: a captured log has one run_id for all its runs,
    so two runs of the same label and method (threads 1, then 8) are told apart by order.
    """
    if samples is None or samples.empty:
        return {}
    frame = samples.reset_index(drop=True)
    starts = (frame["idx"].fillna(0).astype(int) == 0).cumsum()
    out: dict[SampleKey, np.ndarray] = {}
    seen: dict[str, int] = {}
    for _, part in frame.groupby(starts, sort=True):
        first = part.iloc[0]
        base = _base_key(first["run_id"], first["label"], first["shape"], first["method"])
        occurrence = seen.get(base, 0)
        seen[base] = occurrence + 1
        out[f"{base}{_SEP}{occurrence}"] = part["value_s"].to_numpy(dtype=float)
    return out


def summary_keys(figures: pd.DataFrame) -> pd.Series:
    """For each figure row, the key of the sample set behind its summary line (or None).

    Summary lines come as min/median pairs; the n-th `min` row of a (run, label, shape, method)
    goes with the n-th sample set of the same keys, and its `median` row with the same set.
    """
    keys: list[SampleKey | None] = []
    seen: dict[str, int] = {}
    for row in figures.itertuples(index=False):
        if row.stat not in ("min", "median"):
            keys.append(None)
            continue
        base = _base_key(row.run_id, row.label, row.shape, row.method)
        if row.stat == "min":
            seen[base] = seen.get(base, -1) + 1
        keys.append(f"{base}{_SEP}{max(seen.get(base, 0), 0)}")
    return pd.Series(keys, index=figures.index, dtype=object)


def _base_key(run_id: object, label: object, shape: object, method: object) -> str:
    return _SEP.join("" if pd.isna(v) else str(v) for v in (run_id, label, shape, method))
