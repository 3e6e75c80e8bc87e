"""The process is the unit: a figure's value over all of a target's processes, and its interval.

Timings of one process share its state (allocator, clocks, page placement, code layout), and
the spread between processes is often larger than within one (torch cpu 1 thread: 13.4 / 13.4 /
13.7 ms in one sweep, 17.3 / 23.3 / 17.3 ms in the next). An interval bootstrapped from one
process's samples knows nothing of that spread, so every interval here is built from the
processes: each process contributes one value (its median, or its single figure: a first call,
a device init), and those values are the replicates.

Method, and why:
- **t interval on the log process values, p-1 degrees of freedom** (the default): times are
  positive and skewed, their logs close to symmetric; the centre is the geometric mean of the
  process values. With few processes (3 is the chapter's design) it is the honest small-sample
  answer: a bootstrap over 3 processes resamples into only 10 distinct sets and is overconfident.
- **two-level bootstrap** (processes, then samples within each) only from
  BOOTSTRAP_MIN_PROCESSES processes with raw samples each: then resampling processes covers
  their spread and the inner level adds the within-process noise the medians carry.
- **one process: no interval**, said so (`method`); a between-process spread cannot be
  estimated from one value, and a within-process interval would claim a certainty it lacks.

`ratio` gives B/A its interval the same way (Welch's t on the difference of the log means, with
Welch-Satterthwaite degrees of freedom) and the p-value `compare` needs for Holm's correction;
`predict` judges a single value against the other side's processes (a prediction interval).
The t distribution is computed here (regularised incomplete beta), no SciPy.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

LEVEL = 0.95
BOOTSTRAP_MIN_PROCESSES = 10
BOOTSTRAP_RESAMPLES = 2000
SEED = 20250101
ONE_PROCESS = "one process: no interval"


@dataclass(frozen=True)
class Estimate:
    """A figure over its processes: centre, interval (None with one process), and how."""

    value: float  # geometric mean of the process values
    lo: float | None
    hi: float | None
    processes: int
    reps: int  # the most samples one process had (0: single figures)
    method: str
    log_mean: float
    log_sd: float  # between-process sd of the log values (0.0 with one process)

    @property
    def half_width(self) -> float | None:
        """The interval's half-width relative to the centre (0.02: ±2%)."""
        if self.lo is None or self.hi is None or self.value <= 0:
            return None
        return max(self.hi / self.value, self.value / self.lo) - 1


@dataclass(frozen=True)
class RatioEstimate:
    ratio: float
    lo: float | None
    hi: float | None
    log_diff: float
    se: float | None
    df: float | None
    basis: str


# ---- the t distribution -------------------------------------------------------------------------


def _betacf(a: float, b: float, x: float) -> float:
    """Continued fraction of the incomplete beta (Lentz), as in Numerical Recipes."""
    tiny, qab, qap, qam = 1e-300, a + b, a + 1, a - 1
    c, d = 1.0, 1 - qab * x / qap
    d = 1 / (d if abs(d) > tiny else tiny)
    h = d
    for m in range(1, 300):
        m2 = 2 * m
        for aa in (m * (b - m) * x / ((qam + m2) * (a + m2)),
                   -(a + m) * (qab + m) * x / ((a + m2) * (qap + m2))):
            d = 1 + aa * d
            d = 1 / (d if abs(d) > tiny else tiny)
            c = 1 + aa / c
            c = c if abs(c) > tiny else tiny
            h *= d * c
        if abs(d * c - 1) < 1e-13:
            break
    return h


def _betainc(a: float, b: float, x: float) -> float:
    if x <= 0:
        return 0.0
    if x >= 1:
        return 1.0
    front = math.exp(math.lgamma(a + b) - math.lgamma(a) - math.lgamma(b)
                     + a * math.log(x) + b * math.log1p(-x))
    if x < (a + 1) / (a + b + 2):
        return front * _betacf(a, b, x) / a
    return 1 - front * _betacf(b, a, 1 - x) / b


def t_sf(t: float, df: float) -> float:
    """P(T > t) for Student's t with df degrees of freedom."""
    tail = 0.5 * _betainc(df / 2, 0.5, df / (df + t * t))
    return tail if t >= 0 else 1 - tail


@functools.lru_cache(maxsize=4096)
def t_quantile(p: float, df: float) -> float:
    """The t value with P(T <= t) = p (bisection on t_sf; p in (0.5, 1)); 100 steps of the
    incomplete beta each, so a report's figures of 3 processes share one (cached)."""
    lo, hi = 0.0, 1.0
    while t_sf(hi, df) > 1 - p:
        hi *= 2
    for _ in range(100):
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if t_sf(mid, df) > 1 - p else (lo, mid)
    return (lo + hi) / 2


# ---- one figure over its processes ---------------------------------------------------------------


def _logs(values: Sequence[float]) -> list[float] | None:
    logs = []
    for value in values:
        x = float(value)
        if not (x > 0 and math.isfinite(x)):
            return None  # a zero or impossible time has no log: no interval
        logs.append(math.log(x))
    return logs or None


def log_moments(logs: Sequence[float]) -> tuple[float, float]:
    """The mean and sample sd (ddof 1; 0.0 for one value) of log values, in plain floats with
    exactly rounded sums (math.fsum): numpy's per-call cost was 20 of the 32 µs an estimate
    took, over the 83,000 figures compare judges at 5000 runs (BENCHMARKS.md)."""
    n = len(logs)
    mean = math.fsum(logs) / n
    if n == 1:
        return mean, 0.0
    return mean, math.sqrt(math.fsum((x - mean) * (x - mean) for x in logs) / (n - 1))


def geometric_mean(values: Sequence[float]) -> float | None:
    """exp of the mean log of `values`; None unless every value is positive and finite."""
    logs = _logs(values)
    return None if logs is None else math.exp(log_moments(logs)[0])


def estimate(values: Sequence[float], samples: Sequence[np.ndarray | None] | None = None,
             level: float = LEVEL, bootstrap: bool = True) -> Estimate | None:
    """The figure of `values` (one per process) with its interval; None without a positive
    finite value for every process. `samples`, one array (or None) per process, are used only
    by the two-level bootstrap (and for `reps`). `bootstrap=False`: the t interval even where
    the samples would allow the bootstrap, for a caller that reads only the centre, the log
    spread and the counts (compare's B/A: `ratio`, `predict`), not this figure's own interval:
    the bootstrap was half of a compare of 167 processes a figure."""
    logs = _logs(values)
    if logs is None:
        return None
    p = len(logs)
    reps = max((len(s) for s in samples or [] if s is not None), default=0)
    mean, sd = log_moments(logs)
    if p == 1:
        return Estimate(math.exp(mean), None, None, 1, reps, ONE_PROCESS, mean, 0.0)
    sampled = bootstrap and p >= BOOTSTRAP_MIN_PROCESSES and samples is not None \
        and len(samples) == p \
        and all(s is not None and len(s) >= 2 and np.all(np.asarray(s) > 0) for s in samples)
    if sampled:
        lo, hi = _two_level(list(samples or []), level)  # type: ignore[arg-type]
        how = f"two-level bootstrap, {p} processes"
    else:
        half = t_quantile(0.5 + level / 2, p - 1) * sd / math.sqrt(p)
        lo, hi = math.exp(mean - half), math.exp(mean + half)
        how = f"t on log process values, {p - 1} df"
    return Estimate(math.exp(mean), lo, hi, p, reps, how, mean, sd)


def _two_level(samples: list[np.ndarray], level: float) -> tuple[float, float]:
    """Resample processes, then each chosen process's samples; the geometric mean of the
    resampled medians, its percentile interval. Seeded: the same data, the same report."""
    rng = np.random.default_rng(SEED)
    p, b = len(samples), BOOTSTRAP_RESAMPLES
    chosen = rng.integers(0, p, size=(b, p))
    # where each process was chosen, in row-major order, from one sort (a mask of all b × p
    # draws per process was p² · b work: 8.6 s of a 167-process store's report)
    small = chosen.astype(np.int16) if p < 2**15 else chosen  # 16-bit keys sort by radix: 5x
    where = np.argsort(small, axis=None, kind="stable")
    ends = np.cumsum(np.bincount(chosen.ravel(), minlength=p))
    logs = np.empty(b * p)
    for s, at in zip(samples, np.split(where, ends[:-1]), strict=True):
        if len(at):
            logs[at] = np.log(_resampled_medians(rng, np.asarray(s, dtype=float), len(at)))
    centres = np.exp(logs.reshape(b, p).mean(axis=1))
    lo, hi = np.percentile(centres, [50 * (1 - level), 50 * (1 + level)])
    return float(lo), float(hi)


def _resampled_medians(rng: np.random.Generator, values: np.ndarray, count: int) -> np.ndarray:
    """`np.median(rng.choice(values, (count, m)), axis=1)`, the same draws and the same
    floats, from order statistics: a row's k-th smallest value is the value of its k-th
    smallest rank, and rows of small integers sort ~3x faster than np.median partitions
    rows of floats (which took 20 of a 167-process store's 65 profiled report seconds)."""
    m = len(values)
    drawn = rng.integers(0, m, size=(count, m))  # what Generator.choice draws, in its order
    order = np.argsort(values, kind="stable")
    rank = np.empty(m, dtype=np.int16 if m < 2**15 else np.int64)
    rank[order] = np.arange(m)
    ranks = np.sort(rank.take(drawn), axis=1)
    ranked = values[order]
    low = ranked[ranks[:, (m - 1) // 2]]
    return low if m % 2 else (low + ranked[ranks[:, m // 2]]) / 2


# ---- B / A --------------------------------------------------------------------------------------


def ratio(a: Estimate, b: Estimate, level: float = LEVEL) -> RatioEstimate:
    """B/A of the two centres with Welch's interval on the log difference; no interval where
    either side has a single process (`predict` judges those)."""
    diff = b.log_mean - a.log_mean
    if a.processes < 2 or b.processes < 2:
        return RatioEstimate(math.exp(diff), None, None, diff, None, None, "one value")
    va, vb = a.log_sd ** 2 / a.processes, b.log_sd ** 2 / b.processes
    se = math.sqrt(va + vb)
    if se == 0:  # identical processes on both sides: the interval is the point
        return RatioEstimate(math.exp(diff), math.exp(diff), math.exp(diff), diff, 0.0,
                             float(a.processes + b.processes - 2), _basis(a, b))
    df = (va + vb) ** 2 / (va ** 2 / (a.processes - 1) + vb ** 2 / (b.processes - 1)) \
        if va > 0 and vb > 0 else float(a.processes - 1 if va > 0 else b.processes - 1)
    half = t_quantile(0.5 + level / 2, df) * se
    return RatioEstimate(math.exp(diff), math.exp(diff - half), math.exp(diff + half), diff,
                         se, df, _basis(a, b))


def _basis(a: Estimate, b: Estimate) -> str:
    reps = f", reps {a.reps}/{b.reps}" if a.reps or b.reps else ""  # single figures: none
    return f"processes {a.processes}/{b.processes}{reps}"


def predict(many: Estimate, one: Estimate, one_is_b: bool,
            level: float = LEVEL) -> RatioEstimate:
    """A single value against the other side's processes: where would one more process of
    `many` fall? Its prediction interval, sd·sqrt(1 + 1/p) with p-1 df, is the other side's
    own spread; B/A's interval is read from it."""
    diff = (one.log_mean - many.log_mean) * (1 if one_is_b else -1)
    p = many.processes
    se = many.log_sd * math.sqrt(1 + 1 / p)
    half = t_quantile(0.5 + level / 2, p - 1) * se
    basis = f"one value against {p} processes"
    return RatioEstimate(math.exp(diff), math.exp(diff - half), math.exp(diff + half), diff,
                         se, float(p - 1), basis)


def p_beyond(r: RatioEstimate, min_effect: float) -> float | None:
    """Two-sided p-value of 'the change is beyond the ±min_effect band' (the one-sided test
    on the side the estimate lies, doubled): what Holm's correction orders."""
    if r.se is None or r.df is None:
        return None
    excess = abs(r.log_diff) - math.log1p(min_effect)
    if r.se == 0:
        return 0.0 if excess > 0 else 1.0
    return min(1.0, 2 * t_sf(excess / r.se, r.df))


def holm(pvalues: Sequence[float | None]) -> list[float | None]:
    """Holm's step-down adjusted p-values (family-wise error), None kept where None."""
    known = sorted((p, i) for i, p in enumerate(pvalues) if p is not None)
    m, running = len(known), 0.0
    out: list[float | None] = [None] * len(pvalues)
    for rank, (p, i) in enumerate(known):
        running = max(running, min(1.0, (m - rank) * p))
        out[i] = running
    return out


def benjamini_hochberg(pvalues: Sequence[float | None]) -> list[float | None]:
    """Benjamini-Hochberg adjusted p-values (false discovery rate), None kept where None.
    When nothing changed (an A/A) the false discovery rate is the family-wise error: the same
    5% bound as Holm there, with more power where many figures did change."""
    known = sorted((p, i) for i, p in enumerate(pvalues) if p is not None)
    m, running = len(known), 1.0
    out: list[float | None] = [None] * len(pvalues)
    for rank in range(m - 1, -1, -1):
        p, i = known[rank]
        running = min(running, m * p / (rank + 1))
        out[i] = running
    return out


CORRECTIONS = {"holm": holm, "bh": benjamini_hochberg}


def detectable(r: RatioEstimate, min_effect: float, level: float = LEVEL) -> float | None:
    """The smallest change this pair could have called slower or faster (uncorrected):
    the band plus the interval's half-width, as a ratio minus one."""
    if r.se is None or r.df is None:
        return None
    return (1 + min_effect) * math.exp(t_quantile(0.5 + level / 2, r.df) * r.se) - 1
