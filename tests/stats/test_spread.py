"""stats/spread.py: the one ratio of the report, intervals that survive zeros and many samples."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pandas as pd
import pytest

from orchestrator.report import checks, energy
from orchestrator.report.sample_sets import sample_sets
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


def test_sample_sets_leave_out_values_no_time_can_be() -> None:
    samples = pd.DataFrame({"run_id": ["r"] * 4 + ["s"], "summary_line": [1, 1, 1, 1, 2],
                            "value_s": [1e-6, math.nan, -1.0, math.inf, math.nan]})
    sets = sample_sets(samples)
    assert [list(v) for v in sets.values()] == [[1e-6]]  # the set of only nan is gone


def test_sample_sets_are_grouped_in_order_of_first_appearance_rows_in_order() -> None:
    # as groupby(["run_id", "summary_line"], sort=False): a set's rows need not be together
    samples = pd.DataFrame({"run_id": ["b", "a", "b", "a", "b", "c"],
                            "summary_line": pd.array([7, 3, 7, 3, 9, 3], dtype="Int64"),
                            "value_s": [1.0, 2.0, 3.0, 4.0, 5.0, 6.0]})
    sets = sample_sets(samples)
    assert [(k.replace("\x1f", " "), list(v)) for k, v in sets.items()] == [
        ("b 7", [1.0, 3.0]), ("a 3", [2.0, 4.0]), ("b 9", [5.0]), ("c 3", [6.0])]


def _rows(values: dict[str, float]) -> pd.DataFrame:
    return pd.DataFrame([{"unit": "u", "line_no": 1, "label": "cpu", "method": "with_sync",
                          "stat": stat, "value_s": value, "framework": "torch", "device": "cpu",
                          "threads_key": 1} for stat, value in values.items()])


def test_odd_times_say_what_is_wrong_with_each_figure() -> None:
    assert checks.odd_times(_rows({"min": 1e-6, "median": 2e-6})) == []
    zero = checks.odd_times(_rows({"min": 0.0, "median": 1e-9}))
    assert zero == ["**impossible time**: PyTorch CPU at 1 thread with sync (line 1) min is "
                    "0.000ns, a zero time: shown as printed, no ratio against it."]
    inverted = checks.odd_times(_rows({"min": 2e-6, "median": 1e-6}))
    assert len(inverted) == 1 and inverted[0].startswith("**median below min**")
    assert "not a finite time" in checks.odd_times(_rows({"min": math.inf}))[0]
    assert "a negative time" in checks.odd_times(_rows({"value": -1.0}))[0]


def test_spread_check_of_a_zero_min_is_no_division() -> None:
    rows = _rows({"min": 0.0, "median": 1e-9}).assign(sample_key=None)
    assert checks.spread(rows, {}, checks.Thresholds()) == []


def test_energy_of_no_matmuls_is_a_question_mark_with_a_note() -> None:
    rows = pd.DataFrame([{"unit": "u", "line_no": 1, "method": "energy", "stat": stat,
                          "value_s": value, "runs": 0, "shape": "8x8", "framework": "torch",
                          "label": "cuda"} for stat, value in (("joules", 0.0), ("seconds", 0.0))])
    table = energy.energy_table(rows)
    assert table.frame.iloc[0]["J per matmul"] == "?"
    assert table.notes and "no per-matmul energy" in table.notes[0]
