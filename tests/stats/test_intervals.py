"""The process as the unit: intervals over processes, Holm, and compare's verdicts on them.

The t distribution against its textbook values; intervals checked by hand; an A/A simulation
of many families for the false-verdict rate; and compare on results stores built from printed
lines (tests/report/fake_stores.py) for the edge cases: 3 vs 3 processes, one value against
processes, one value each, tight processes that disagree, precision pairing.
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from orchestrator.report.compare import verdicts as compare
from orchestrator.report.compare.verdicts import ONE_VALUE, load_side
from orchestrator.stats import intervals

from ..report import fake_stores
from ..report.fake_stores import spread


def test_t_quantiles_are_the_textbook_ones() -> None:
    for df, t in ((1, 12.706), (2, 4.303), (4, 2.776), (29, 2.045)):
        assert intervals.t_quantile(0.975, df) == pytest.approx(t, abs=1e-3)
    assert intervals.t_sf(2.0, 5) == pytest.approx(0.05097, abs=1e-5)
    assert intervals.t_sf(-2.0, 5) == pytest.approx(1 - 0.05097, abs=1e-5)


def test_one_process_has_no_interval_and_says_so() -> None:
    e = intervals.estimate([0.01], [np.full(20, 0.01)])
    assert e is not None and (e.lo, e.hi, e.processes, e.reps) == (None, None, 1, 20)
    assert e.method == "one process: no interval" and e.half_width is None
    assert intervals.estimate([0.01, 0.0]) is None  # a zero time has no log: no figure


def test_three_processes_give_a_t_interval_on_their_logs() -> None:
    values = [13.4e-3, 13.4e-3, 13.7e-3]
    e = intervals.estimate(values)
    logs = np.log(values)
    half = 4.3027 * logs.std(ddof=1) / math.sqrt(3)
    assert e is not None and e.method == "t on log process values, 2 df"
    assert e.value == pytest.approx(math.exp(logs.mean()))
    assert (e.lo, e.hi) == (pytest.approx(math.exp(logs.mean() - half), rel=1e-4),
                            pytest.approx(math.exp(logs.mean() + half), rel=1e-4))


def test_many_processes_with_samples_take_the_two_level_bootstrap() -> None:
    rng = np.random.default_rng(3)
    sets = [spread(1e-3 * math.exp(0.05 * rng.standard_normal()), 20, rng) for _ in range(12)]
    e = intervals.estimate([float(np.median(s)) for s in sets], sets)
    assert e is not None and e.method == "two-level bootstrap, 12 processes"
    assert e.lo < e.value < e.hi and 0.01 < e.half_width < 0.1
    again = intervals.estimate([float(np.median(s)) for s in sets], sets)
    assert (again.lo, again.hi) == (e.lo, e.hi)  # seeded: the same data, the same interval
    # the between-process spread (5%) is in it: far wider than one process's samples say
    assert e.half_width > 2 * 0.01 / math.sqrt(20)


def test_without_the_bootstrap_only_the_interval_differs() -> None:
    """compare's B/A reads a side's centre, log spread and counts: `bootstrap=False` gives
    the same ones, the t interval instead of the bootstrap's."""
    rng = np.random.default_rng(8)
    sets = [spread(1e-3 * math.exp(0.05 * rng.standard_normal()), 20, rng) for _ in range(12)]
    values = [float(np.median(s)) for s in sets]
    full = intervals.estimate(values, sets)
    quick = intervals.estimate(values, sets, bootstrap=False)
    assert full is not None and quick is not None
    assert (quick.value, quick.log_mean, quick.log_sd, quick.processes, quick.reps) == \
        (full.value, full.log_mean, full.log_sd, full.processes, full.reps)
    assert full.method.startswith("two-level") and quick.method == "t on log process values, 11 df"
    assert intervals.ratio(full, full) == intervals.ratio(quick, quick)


def _two_level_as_written(samples: list[np.ndarray], level: float) -> tuple[float, float]:
    """The two-level bootstrap as its definition says it, a median per resampled row: what
    intervals._two_level computes by order statistics must be this, float for float."""
    rng = np.random.default_rng(intervals.SEED)
    p, b = len(samples), intervals.BOOTSTRAP_RESAMPLES
    chosen = rng.integers(0, p, size=(b, p))
    logs = np.empty((b, p))
    for i, s in enumerate(samples):
        where = chosen == i
        if where.any():
            logs[where] = np.log(np.median(rng.choice(s, (int(where.sum()), len(s))), axis=1))
    centres = np.exp(logs.mean(axis=1))
    lo, hi = np.percentile(centres, [50 * (1 - level), 50 * (1 + level)])
    return float(lo), float(hi)


@pytest.mark.parametrize("seed", range(40))
def test_the_two_level_bootstrap_is_its_definition_exactly(seed: int) -> None:
    """Odd and even sample counts, ties, a constant process, 10 to 60 processes: the same
    interval to the last bit as a median of every resampled row."""
    rng = np.random.default_rng(seed)
    sets = []
    for k in range(int(rng.integers(10, 60))):
        s = rng.lognormal(-9, 0.3, int(rng.integers(2, 40)))
        sets.append(np.round(s, 6) if k % 3 == 0 else np.full(len(s), s[0]) if k == 4 else s)
    assert intervals._two_level(sets, 0.95) == _two_level_as_written(sets, 0.95)


def test_holm_is_the_step_down_adjustment() -> None:
    assert intervals.holm([0.01, 0.04, 0.03, None]) == [
        pytest.approx(0.03), pytest.approx(0.06), pytest.approx(0.06), None]
    assert intervals.holm([]) == []


def _family_verdicts(rng: np.random.Generator, figures: int, effect: float = 1.0,
                     between: float = 0.08, correction: str = "holm") -> list[str]:
    """compare's rule on `figures` figures of 3 vs 3 processes drawn alike (times `effect`)."""
    rows = []
    for _ in range(figures):
        a = [1e-3 * math.exp(between * rng.standard_normal()) for _ in range(3)]
        b = [effect * 1e-3 * math.exp(between * rng.standard_normal()) for _ in range(3)]
        row = compare.Row("CPU", "x", "median", 1.0, 1.0)
        for name, value in compare.judge({"values": a, "sample_sets": [None] * 3},
                                         {"values": b, "sample_sets": [None] * 3},
                                         0.05).items():
            setattr(row, name, value)
        rows.append(row)
    compare.finish(rows, correction)
    return [r.verdict for r in rows]


def test_a_and_a_gives_at_most_five_percent_false_verdicts() -> None:
    rng = np.random.default_rng(11)
    verdicts = [v for _ in range(40) for v in _family_verdicts(rng, 12)]
    false = sum(v in ("slower", "faster") for v in verdicts)
    assert false <= 0.05 * len(verdicts), false
    # a real change far beyond the spread between processes is found in every figure
    assert set(_family_verdicts(rng, 12, effect=5.0)) == {"slower"}


# ---- compare on stores of several processes -----------------------------------------------------

RNG = np.random.default_rng(5)


def _processes(centres: list[float], within: float = 0.01) -> list[fake_stores.Process]:
    return [{"with sync": spread(c, 20, RNG, within), "no sync": spread(c / 2, 20, RNG, within)}
            for c in centres]


def _compare(tmp_path: Path, a: list[float], b: list[float]) -> dict[str, compare.Row]:
    sa = fake_stores.store(tmp_path / "a", _processes(a))
    sb = fake_stores.store(tmp_path / "b", _processes(b))
    c = compare.compare(load_side(str(sa)), load_side(str(sb)))
    return {r.figure: r for r in c.rows}


def test_a_five_fold_change_between_three_and_three_processes_is_slower(tmp_path: Path) -> None:
    rows = _compare(tmp_path, [300e-6, 310e-6, 295e-6], [1500e-6, 1520e-6, 1490e-6])
    row = rows["torch cpu 256x256 1 thread with sync"]
    assert row.verdict == "slower" and row.lo > 4 and row.p_holm < 0.05
    assert row.basis == "processes 3/3, reps 20/20"
    assert not [f for f in rows if "process" in f.split("with")[0]]  # pooled, never 'process 2'
    assert row.ratio == pytest.approx(1503.3 / 301.6, rel=0.02)


def test_tight_processes_that_disagree_between_sweeps_are_inconclusive(tmp_path: Path) -> None:
    # the torch cpu 1 thread: 13.4 / 13.4 / 13.7 ms, then 17.3 / 23.3 / 17.3 ms
    rows = _compare(tmp_path, [13.4e-3, 13.4e-3, 13.7e-3], [17.3e-3, 23.3e-3, 17.3e-3])
    row = rows["torch cpu 256x256 1 thread with sync"]
    assert row.verdict == "inconclusive", (row.lo, row.hi, row.p_holm)
    assert row.detectable > 0.3  # this design could not have shown a change below ~30%


def test_the_same_processes_again_are_the_same(tmp_path: Path) -> None:
    rows = _compare(tmp_path, [300e-6, 301e-6, 299e-6], [300.5e-6, 299.5e-6, 300e-6])
    assert {r.verdict for r in rows.values() if r.stat == "median"} == {"same"}


def test_one_value_against_processes_needs_an_effect_beyond_their_spread(tmp_path: Path) -> None:
    rows = _compare(tmp_path, [300e-6], [300e-6, 320e-6, 290e-6])
    row = rows["torch cpu 256x256 1 thread with sync"]
    assert (row.verdict, row.basis) == (ONE_VALUE, "one value against 3 processes")
    assert row.ratio == pytest.approx(1.0, abs=0.05)
    rows = _compare(tmp_path / "far", [300e-6], [1500e-6, 1600e-6, 1450e-6])
    assert rows["torch cpu 256x256 1 thread with sync"].verdict == "slower"


def test_one_value_each_gives_the_ratio_and_no_verdict(tmp_path: Path) -> None:
    rows = _compare(tmp_path, [300e-6], [1500e-6])
    row = rows["torch cpu 256x256 1 thread with sync"]
    assert (row.verdict, row.basis, row.lo) == (ONE_VALUE, "one value per side", None)
    assert row.ratio == pytest.approx(5.0, rel=0.03)


def test_a_side_without_precision_is_paired_with_fp32_never_tf32(tmp_path: Path) -> None:
    fp32 = fake_stores.store(tmp_path / "b", _processes([300e-6] * 3))
    b = load_side(str(fp32))
    extra = b.data.figures.copy()  # a second experiment of the same figures in TF32, 5x faster
    extra["experiment"], extra["precision"] = "tf32", "tf32"
    extra["value_s"] = extra["value_s"] / 5
    extra["run_id"] = extra["run_id"] + "-tf32"
    b.data.figures["precision"] = "fp32"
    b.data.figures = pd.concat([b.data.figures, extra], ignore_index=True)
    a = load_side(str(fake_stores.store(tmp_path / "a", _processes([300e-6] * 3))))
    a.data.figures["precision"] = ""  # not recorded, as in a chapter log
    c = compare.compare(a, b)
    row = next(r for r in c.rows if r.figure == "torch cpu 256x256 1 thread with sync")
    assert row.ratio == pytest.approx(1.0, abs=0.05)  # the FP32 run, not the TF32 one
    # TF32 left apart, unjudged, and named so (it had the FP32 row's name before)
    assert "torch cpu 256x256 TF32 1 thread with sync" in c.only_b
    assert "torch cpu 256x256 1 thread with sync" not in c.only_b


# ---- the report: every figure over its processes ------------------------------------------------


def test_the_report_gives_each_figure_over_its_processes(tmp_path: Path) -> None:
    from orchestrator import dataset
    from orchestrator.report import writer

    rng = np.random.default_rng(9)
    centres = [300e-6, 310e-6, 290e-6]
    # 5 samples per process: too few for an order-statistic interval of one process's median
    folder = fake_stores.store(tmp_path / "r", [{"with sync": spread(c, 5, rng)}
                                                for c in centres])
    writer.write(dataset.load(folder), tmp_path / "out")
    figures = pd.read_csv(tmp_path / "out" / "figures.csv", dtype=str, keep_default_na=False)
    row = figures[figures["method"] == "with sync"].iloc[0]
    assert row["processes × reps"] == "3 × 5"
    assert row["interval"] == "t on log process values, 2 df"
    data = dataset.load(folder).figures  # the store's own process medians, by hand
    values = data[(data["method"] == "with_sync") & (data["stat"] == "median")]["value_s"]
    e = intervals.estimate(values.tolist())
    assert e is not None
    assert row["median [95% interval]"].startswith(f"{fake_stores.format_duration(e.value)} [")
    spread_rows = pd.read_csv(tmp_path / "out" / "spread.csv", dtype=str, keep_default_na=False)
    assert set(spread_rows["median 95% CI"]) == {
        f"over 3 processes: ±{100 * e.half_width:.1f}% (table 'figures')"}


def test_benjamini_hochberg_is_the_step_up_adjustment() -> None:
    assert intervals.benjamini_hochberg([0.01, 0.04, 0.03, None]) == [
        pytest.approx(0.03), pytest.approx(0.04), pytest.approx(0.04), None]


def test_bh_finds_many_real_changes_holm_misses_and_keeps_the_a_and_a_bound() -> None:
    def verdicts(correction: str, effect: float, seed: int) -> list[str]:
        return _family_verdicts(np.random.default_rng(seed), 12, effect, 0.3, correction)

    found = {c: sum(v == "slower" for s in range(10) for v in verdicts(c, 4.0, s))
             for c in ("holm", "bh")}
    assert found["bh"] > found["holm"], found  # noisy processes: BH keeps more real changes
    false = sum(v in ("slower", "faster") for s in range(30) for v in verdicts("bh", 1.0, s))
    assert false <= 0.05 * 30 * 12, false
