"""Run until decided (run/deciding.py through run/stopping.py): a variants sweep adds rounds
until every steady figure's B/A is decided at a level that holds under repeated looks. A fake
program (the sweep's measure step, monkeypatched) provokes each case; real torch with
MKL_CBWR=COMPATIBLE as the B variant decides `slower` on this box."""

from __future__ import annotations

import json
import math
import typing
from pathlib import Path

import pytest
from scipy import stats

from orchestrator.cli import main
from orchestrator.data.store import Store
from orchestrator.errors import ConfigError
from orchestrator.experiments import config
from orchestrator.records import RunDef, RunRecord
from orchestrator.report.compare import verdicts as compare
from orchestrator.report.compare.sides import load_side
from orchestrator.run import deciding
from orchestrator.run.sweep import Sweep
from orchestrator.stats import intervals, sequential

from ..conftest import PROJECT, facts_once, facts_probed_once, write
from ..report.fake_stores import lines

FILE = """\
version: 1
defaults: {shape: [32, 32], reps: 3}
experiments:
  ab:
    mode: mm
    threads: [1]
    precision_target: {target: 0.02, min_processes: 3, max_processes: %d, budget_s: 300,
                       decide: true}
    variants:
      a: {}
      b: {env: {MKL_CBWR: COMPATIBLE}}
    targets:
      - {program: torch, device: cpu}
"""


def _fake(monkeypatch: pytest.MonkeyPatch, factor: float) -> list[RunDef]:
    """Each run 'prints' a median that drifts by round (shared by both variants), B `factor`
    times A's, with a little noise of its own."""
    ran: list[RunDef] = []
    drift = [1.0, 1.3, 0.8, 1.2, 0.9, 1.1, 1.0, 0.95, 1.05, 1.0]
    noise = [1.0, 1.004, 0.997, 1.002, 0.999, 1.003, 0.998, 1.001, 1.0, 0.999]

    def measure(self, run, ctx, config, role, cold_series=None, paused=None):
        ran.append(run)
        k = run.process - 1
        value = 300e-6 * drift[k] * (factor * noise[k] if run.variant == "b" else 1.0)
        out = lines({"with sync": value, "no sync": value / 2}, 1)
        return RunRecord(run=run, role=role, stdout=out.encode(), wall_s=0.1, returncode=0,
                         started_at=1.0 + len(ran), ended_at=1.5 + len(ran))

    monkeypatch.setattr(Sweep, "_measure", measure)
    facts_probed_once(monkeypatch)
    return ran


def _stops(results: Path) -> set[tuple[str, int]]:
    store = Store(results)
    with store.reading():
        (sweep,) = store.sweeps()
        return {(s["reason"], s["processes"]) for s in store.stops(sweep["sweep_id"])}


@pytest.mark.parametrize(("spending", "rounds"), [("bonferroni", 3), ("pocock", 3),
                                                 ("obrien-fleming", 4)])
def test_a_clear_change_is_decided_within_a_few_rounds(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, spending: str, rounds: int) -> None:
    """B 1.3× A: Bonferroni and Pocock spend enough at the pilot's look to decide there;
    O'Brien-Fleming keeps most of α for later looks and decides one round later."""
    ran = _fake(monkeypatch, 1.3)
    text = (FILE % 10).replace("decide: true}", f"decide: true, spending: {spending}}}")
    exp = write(tmp_path / "e.yaml", text)
    assert Sweep(PROJECT, tmp_path / "r", show=False).run(exp) \
        .exit_code == 0
    assert sorted(r.process for r in ran if r.variant == "b") == list(range(1, rounds + 1))
    assert _stops(tmp_path / "r") == {("decided", rounds)}
    c = compare.compare(load_side(f"{tmp_path / 'r'}#a"), load_side(f"{tmp_path / 'r'}#b"))
    assert {r.verdict for r in c.rows if r.verdict} == {"slower"}  # compare agrees


def test_a_budget_for_three_rounds_spends_all_of_alpha_at_the_third(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The pilot's rounds took 0.2 s each (two runs of 0.1 s) and the budget is 0.6 s: the
    looks' horizon is 3 rounds, not max_processes' 10, so O'Brien-Fleming spends all of
    α/m at the pilot's look and decides there (over 10 rounds it waited for the 4th)."""
    ran = _fake(monkeypatch, 1.3)
    text = (FILE % 10).replace("budget_s: 300", "budget_s: 0.6")
    Sweep(PROJECT, tmp_path / "r", show=False).run(write(tmp_path / "e.yaml", text))
    assert sorted(r.process for r in ran if r.variant == "b") == [1, 2, 3]
    assert _stops(tmp_path / "r") == {("decided", 3)}


def test_a_budget_that_ends_before_a_decision_says_so(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """B 1.05× A, on the band's edge, cannot be decided: a 4-round budget stops the group
    at its horizon, `time budget`, with nothing spent past it."""
    ran = _fake(monkeypatch, 1.05)
    text = (FILE % 10).replace("budget_s: 300", "budget_s: 0.9")
    Sweep(PROJECT, tmp_path / "r", show=False).run(write(tmp_path / "e.yaml", text))
    assert max(r.process for r in ran) == 4
    assert {why for why, _ in _stops(tmp_path / "r")} == {"time budget"}
    assert deciding.level(5, 3, 4, 2, "obrien-fleming") == 0.0  # past the horizon


def test_a_change_inside_the_band_runs_until_same_or_the_limit(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """B 0.5% slower: `same` needs the interval inside ±5% at 1 − 5%/(K·m); the round drift
    of ±30% would hide it unpaired, paired it is decided within the planned rounds."""
    ran = _fake(monkeypatch, 1.005)
    exp = write(tmp_path / "e.yaml", FILE % 6)
    Sweep(PROJECT, tmp_path / "r", show=False).run(exp)
    reasons = _stops(tmp_path / "r")
    assert {why for why, _ in reasons} <= {"decided", "max processes"}
    assert max(r.process for r in ran) <= 6


def test_the_looks_level_is_alpha_over_figures_spent_over_the_looks() -> None:
    assert deciding.level(5, 3, 10, 4, "bonferroni") == pytest.approx(0.05 / 32)
    spent = sequential.look_levels(3, 10, 0.05 / 4, "obrien-fleming")
    assert deciding.level(5, 3, 10, 4, "obrien-fleming") == spent[5]
    assert deciding.level(10, 3, 10, 4, "obrien-fleming") > 0.05 / 32 * 4  # most at the last
    a = [(k, v, None) for k, v in enumerate([10.0, 13.0, 8.0, 12.0], 1)]
    b = [(k, v * 1.1, None) for k, v in enumerate([10.0, 13.1, 8.0, 12.05], 1)]
    lo, hi = deciding.interval(stats_module(), a, b, 0.01) or (0, 0)
    diffs = [math.log(y[1] / x[1]) for x, y in zip(a, b, strict=True)]
    ci = stats.ttest_1samp(diffs, 0).confidence_interval(0.99)
    assert (lo, hi) == pytest.approx((ci.low, ci.high))


def stats_module() -> deciding.Quantiles:
    return intervals  # type: ignore[return-value]


def test_decide_without_variants_is_one_line(tmp_path: Path) -> None:
    text = FILE.replace("    variants:\n      a: {}\n      b: {env: {MKL_CBWR: COMPATIBLE}}\n",
                        "") % 6
    with pytest.raises(ConfigError) as info:
        config.load(write(tmp_path / "e.yaml", text))
    assert "experiments.ab" in str(info.value) and "needs 'variants'" in str(info.value)


REAL = """\
version: 1
defaults: {shape: [128, 128], reps: 20, timeout_s: 300}
experiments:
  mkl:
    mode: mm
    threads: [1]
    precision_target: {target: 0.02, min_processes: 3, max_processes: 8, budget_s: 240,
                       decide: true}
    variants:
      a: {}
      slow: {env: {MKL_CBWR: COMPATIBLE}}
    targets:
      - {program: torch, device: cpu}
"""


@pytest.mark.torch
def test_real_torch_until_decided_decides_mkl_cbwr_slower(tmp_path: Path) -> None:
    exp = write(tmp_path / "e.yaml", REAL)
    with facts_once():
        assert main(["run", str(exp), "--results", str(tmp_path / "r"), "--quiet"]) == 0
    reasons = _stops(tmp_path / "r")
    assert {why for why, _ in reasons} == {"decided"}, reasons
    c = compare.compare(load_side(f"{tmp_path / 'r'}#a"), load_side(f"{tmp_path / 'r'}#slow"))
    steady = [r for r in c.rows if r.verdict and r.basis.startswith("processes")
              and r.section == "CPU" and "first call" not in r.figure
              and "device init" not in r.figure]
    assert steady and {r.verdict for r in steady} == {"slower"}, [
        (r.figure, r.ratio, r.lo, r.hi, r.verdict) for r in steady]
    assert all("paired by round" in r.basis for r in steady)
    store = Store(tmp_path / "r")
    with store.reading():
        defs = [RunDef.from_definition(json.loads(r["definition_json"]))
                for r in store.query("SELECT definition_json FROM runs")]
    assert {d.variant for d in defs} == {"a", "slow"}


def test_the_file_offers_the_spendings_of_the_statistics(tmp_path: Path) -> None:
    """experiments/ may not import stats/: its list is held to sequential's here."""
    field = config.StoppingTarget.model_fields["spending"]
    assert field.default == sequential.DEFAULT_SPENDING
    assert set(typing.get_args(field.annotation)) == set(sequential.SPENDINGS)
    text = (FILE % 6).replace("decide: true}", "decide: true, spending: haybittle}")
    with pytest.raises(ConfigError) as info:
        config.load(write(tmp_path / "e.yaml", text))
    assert "experiments.ab.precision_target.spending" in str(info.value)
    assert "obrien-fleming" in str(info.value)
