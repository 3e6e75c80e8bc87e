"""A stopping target per target (`targets[i].precision_target`) through a real sweep: the
target's series stop at its own rule, the others keep the experiment's count, and the time
budget counts the target's own runs only. A fake program (the sweep's measure step,
monkeypatched: tests/run/test_stopping.py) provokes each case; real PyTorch at a tiny size
shows it on real noise."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from orchestrator.cli import main
from orchestrator.data.store import Store
from orchestrator.records import RunDef
from orchestrator.run.sweep import Sweep

from ..conftest import PROJECT, facts_probed_once, needs_jax, write
from .test_stopping import _fake

FILE = """\
version: 1
defaults: {shape: [32, 32], reps: 3}
experiments:
  cpu:
    mode: mm
    processes: %s
    targets:
      - {program: torch, device: cpu, threads: [1],
         precision_target: {target: %s, min_processes: 3, max_processes: 8, budget_s: %s}}
      - {program: torch, device: cpu, threads: [2]}
"""


def _stored(results: Path) -> tuple[dict[int, list[int]], dict[int, set[tuple[str, int]]]]:
    """Per thread count: the processes that ran, and the (reason, processes) of its stops."""
    store = Store(results)
    with store.reading():
        (sweep,) = store.sweeps()
        runs = [RunDef.from_definition(json.loads(row["definition_json"]))
                for row in store.query("SELECT definition_json FROM runs")]
        series = {r.series_id: r.threads for r in runs}
        stops: dict[int, set[tuple[str, int]]] = {}
        for s in store.stops(sweep["sweep_id"]):
            stops.setdefault(series[s["series"]], set()).add((s["reason"], s["processes"]))
    ran: dict[int, list[int]] = {}
    for r in runs:
        ran.setdefault(r.threads, []).append(r.process)
    return {t: sorted(p) for t, p in ran.items()}, stops


def _run(tmp_path: Path, processes: int, target: str, budget: str) -> int:
    exp = write(tmp_path / "e.yaml", FILE % (processes, target, budget))
    return Sweep(PROJECT, tmp_path / "results", show=False).run(exp).exit_code


def test_a_target_stops_at_its_own_rule_and_the_other_keeps_its_count(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    tight = [300e-6 * f for f in (1.0, 1.002, 0.998, 1.001, 0.999, 1.0, 1.0, 1.0)]
    _fake(monkeypatch, {1: tight, 2: tight})
    assert _run(tmp_path, 5, "0.02", "300") == 0
    ran, stops = _stored(tmp_path / "results")
    # the target's series: planned with 8, stopped at 3 (met); the other: its 5, no stops
    assert ran == {1: [1, 2, 3], 2: [1, 2, 3, 4, 5]}
    assert stops == {1: {("target met", 3)}}


def test_a_targets_budget_counts_its_own_runs_only(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # ±2.9% at 3 processes, ±1.1% at 6, ±1% only at 7: reachable by 8, not met before 7;
    # every run takes 10 s. The target's budget of 65 s allows rounds while its own time and
    # one more round stay within it: 3 → 4 (40 s) → 5 (50) → 6 (60), stopped before 7
    # (70 > 65). Had the other target's 6 runs (60 s) counted, it would have stopped at 3.
    values = [300e-6 * f for f in (1.0, 1.012, 0.989, 1.011, 0.99, 1.01, 0.99, 1.0)]
    _fake(monkeypatch, {1: values, 2: values}, wall_s=10.0)
    assert _run(tmp_path, 6, "0.01", "65") == 0
    ran, stops = _stored(tmp_path / "results")
    assert ran == {1: [1, 2, 3, 4, 5, 6], 2: [1, 2, 3, 4, 5, 6]}
    assert stops == {1: {("time budget", 6)}}


@pytest.mark.torch
def test_real_torch_stops_one_target_at_its_rule(tmp_path: Path,
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    facts_probed_once(monkeypatch)  # the stops on real noise are judged, not the facts
    exp = write(tmp_path / "e.yaml", (FILE % (2, "0.5", "300")).replace("max_processes: 8",
                                                                        "max_processes: 5"))
    assert main(["run", str(exp), "--results", str(tmp_path / "results"), "--quiet"]) == 0
    ran, stops = _stored(tmp_path / "results")
    assert ran[2] == [1, 2]  # the fixed count
    assert 3 <= len(ran[1]) <= 5 and ran[1] == list(range(1, len(ran[1]) + 1))
    reasons = {reason for reason, _ in stops[1]}
    assert reasons <= {"target met", "noise floor", "max processes"}, stops
    assert {p for _, p in stops[1]} == {len(ran[1])}
    assert set(stops) == {1}


WARM = """\
version: 1
defaults: {shape: [32, 32], reps: 3}
experiments:
  warm:
    mode: mm
    cache: [warm]
    threads: [1]
    precision_target: {target: 0.5, min_processes: 3, max_processes: 4}
    targets: [{program: jax, device: cpu}, {program: torch, device: cpu}]
"""


@pytest.mark.torch
@needs_jax
def test_real_jax_warm_series_takes_rounds_and_stops_on_all_its_processes(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A warm series (JAX's compilation cache, ensured before its first process) in an
    experiment without a cold run: its processes take rounds beside torch's, and its stop
    counts every one of them, the first (which ensured the cache) included."""
    facts_probed_once(monkeypatch)  # the rounds and stops are judged, not the facts
    exp = write(tmp_path / "e.yaml", WARM)
    assert main(["run", str(exp), "--results", str(tmp_path / "results"), "--quiet"]) == 0
    store = Store(tmp_path / "results")
    with store.reading():
        (sweep,) = store.sweeps()
        rows = store.query("SELECT role, definition_json FROM runs ORDER BY started_at")
        stops = store.stops(sweep["sweep_id"])
    measured = [RunDef.from_definition(json.loads(r["definition_json"])) for r in rows
                if r["role"] == "measure"]
    jax = [r for r in measured if r.program == "jax"]
    assert [r.cache_action for r in jax][:1] == ["ensure"] and len(jax) >= 3
    assert [r.process for r in measured] == sorted(r.process for r in measured)  # rounds
    mine = [s for s in stops if s["series"] == jax[0].series_id]
    assert mine and {s["processes"] for s in mine} == {len(jax)}, (mine, len(jax))
    assert {s["reason"] for s in mine} <= {"target met", "noise floor", "max processes"}


def test_a_pilot_of_one_stops_at_the_budget_with_its_reason_named(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The chapter's `sizes` (pilot 1): when the first round uses the budget, every series
    stops at 1 process with `time budget`, and the report names each figure and why."""
    from orchestrator.data import dataset
    from orchestrator.report import process_table, tables
    values = [300e-6] * 3
    ran = _fake(monkeypatch, {1: values, 2: values}, wall_s=10.0)
    text = (FILE % (2, "0.02", "15")).replace(
        "min_processes: 3, max_processes: 8", "min_processes: 3, max_processes: 3, pilot: 1"
    ).replace("      - {program: torch, device: cpu, threads: [2]}\n", "")
    exp = write(tmp_path / "e.yaml", text)
    assert Sweep(PROJECT, tmp_path / "results", show=False).run(exp).exit_code == 0
    assert [r.process for r in ran] == [1]
    _ran, stops = _stored(tmp_path / "results")
    assert stops == {1: {("time budget", 1)}}
    missed = process_table.missed_targets(tables.prepare(dataset.load(tmp_path / "results")))
    assert len(missed) == 2 and all("no interval at 1 process, target ±2% (time budget)" in m
                                    for m in missed), missed
