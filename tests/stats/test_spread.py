"""stats/spread.py: the one ratio of the report, intervals that survive zeros and many samples."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest

from orchestrator.stats import spread
from orchestrator.stats.spread import (
    BOOTSTRAP_RESAMPLES,
    LEVEL,
    SEED,
    _ci_rank,
    iqr,
    median_ci,
    ratio,
    ratio_ci,
)


@pytest.mark.parametrize(("num", "den", "want"), [
    (2.0, 1.0, 2.0), (0.0, 1.0, 0.0), (1.0, 0.0, None), (0.0, 0.0, None), (1.0, -1.0, None),
    (-1.0, 1.0, None), (math.nan, 1.0, None), (1.0, math.inf, None), (math.inf, 1.0, None),
    (None, 1.0, None), (1e300, 1e-300, None), (np.float64(3.0), np.int64(2), 1.5),
])
def test_ratio_is_none_where_a_ratio_means_nothing(num: float | None, den: float | None,
                                                   want: float | None) -> None:
    assert ratio(num, den) == want


def test_median_ci_rank_beyond_a_thousand_samples() -> None:
    # the binomial tail in logs: 2.0**n overflowed a float at n = 1025
    assert [_ci_rank(n, 0.95) for n in (5, 6, 10, 20, 100)] == [None, 1, 2, 6, 40]
    k = _ci_rank(3000, 0.95)
    assert k is not None and abs(k - (1500 - 1.96 * math.sqrt(3000) / 2)) < 3
    values = np.arange(3000, dtype=float)
    low, high = median_ci(values)  # type: ignore[misc]
    assert low < np.median(values) < high


def test_ratio_ci_of_zero_medians_is_none_not_an_index_error() -> None:
    zeros, some = np.zeros(5), np.array([1e-6, 2e-6, 3e-6])
    assert ratio_ci(some, zeros) is None
    assert ratio_ci(zeros, some) == (0.0, 0.0)
    assert math.isnan(iqr(np.array([])))


def test_ratio_ci_past_a_floats_range_is_none_without_a_warning() -> None:
    """1e300 / 1e-300 overflows to inf: no ratio, as `ratio` says, and no RuntimeWarning."""
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert ratio_ci(np.full(5, 1e300), np.full(5, 1e-300)) is None
        assert ratio_ci(np.full(5, 1e300), np.full(5, 1e-300), resamples=10) is None


def _bootstrap_by_np_median(num: np.ndarray, den: np.ndarray) -> tuple[float, float] | None:
    """ratio_ci as first written: np.median of rng.choice's resamples, one fresh generator."""
    rng = np.random.default_rng(SEED)
    top = np.median(rng.choice(num, (BOOTSTRAP_RESAMPLES, len(num))), axis=1)
    bottom = np.median(rng.choice(den, (BOOTSTRAP_RESAMPLES, len(den))), axis=1)
    with np.errstate(divide="ignore", invalid="ignore"):
        ratios = top / bottom
    ratios = ratios[np.isfinite(ratios)]
    if len(ratios) < BOOTSTRAP_RESAMPLES / 2:
        return None
    lo, hi = np.percentile(ratios, [50 * (1 - LEVEL), 50 * (1 + LEVEL)])
    return float(lo), float(hi)


@pytest.mark.parametrize("kind", ["lognormal", "ties", "rounded", "odd and even sizes"])
def test_ratio_ci_is_the_np_median_bootstrap_bit_for_bit(kind: str) -> None:
    # the resample positions are drawn once per pair of sizes and each row's median comes
    # from a sort: every report's intervals must stay exactly what np.median gave
    rng = np.random.default_rng(11)
    for _ in range(40):
        a, b = (int(n) for n in rng.integers(2, 41, size=2))
        if kind == "lognormal":
            num, den = rng.lognormal(size=a), rng.lognormal(size=b)
        elif kind == "ties":
            num, den = (rng.integers(0, 3, size=n).astype(float) for n in (a, b))
        elif kind == "rounded":
            num, den = (np.round(rng.random(n), 2) for n in (a, b))
        else:
            num, den = rng.lognormal(size=2 * (a // 2) + 1), rng.lognormal(size=2 * (b // 2))
        assert ratio_ci(num, den) == _bootstrap_by_np_median(num, den)
    with_nan = np.array([1.0, math.nan, 2.0])  # np.median's own rule for nan: kept
    assert ratio_ci(with_nan, np.ones(4)) == _bootstrap_by_np_median(with_nan, np.ones(4))


@pytest.mark.parametrize("blocks", ["kept positions", "blocks of resamples"])
def test_ratio_ci_of_larger_sets_is_the_same_bootstrap(
        blocks: str, monkeypatch: pytest.MonkeyPatch) -> None:
    # a set of up to MAX_REPS samples is resampled a block of rows at a time (two 4000 x n
    # arrays at once were 3.2 GB each at n = 100,000), its medians by a partition: the same
    # intervals; the blocks are lowered here so that every path is taken at test sizes
    if blocks == "blocks of resamples":
        monkeypatch.setattr(spread, "_KEPT", 0)
        monkeypatch.setattr(spread, "_BLOCK", 997)  # odd rows and a short last block
    rng = np.random.default_rng(5)
    for a, b in ((30, 41), (65, 64), (300, 301), (2, 3), (1100, 1030)):
        num, den = rng.lognormal(size=a), np.round(rng.lognormal(size=b), 1)
        assert ratio_ci(num, den) == _bootstrap_by_np_median(num, den), (a, b)
    with_nan = np.array([1.0, math.nan, 2.0] * 30)
    assert ratio_ci(with_nan, np.ones(70)) == _bootstrap_by_np_median(with_nan, np.ones(70))
