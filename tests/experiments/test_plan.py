"""Sweeps expand into runs; skip reasons come from the host's capabilities."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path
from typing import get_args

import pytest

from orchestrator.errors import InputError
from orchestrator.experiments import config, plan
from orchestrator.experiments.config import Capability
from orchestrator.experiments.plan import builds_needed, expand
from orchestrator.records import RunDef

from ..conftest import PROJECT

NO_GPU = {"cuda": "needs an NVIDIA GPU", "mps": "needs MPS", "metal": "needs macOS",
          "vulkan": "needs Vulkan", "macos": "needs macOS", "linux": None, "x86_64": None,
          "arm64": "needs arm64", "apple-silicon": "needs Apple silicon", "torch": None,
          "jax": None, "avx512f": None}
NVIDIA = {**NO_GPU, "cuda": None}


def file_order(cfg: config.ExperimentsFile) -> config.ExperimentsFile:
    """The file with `defaults.order.interleave: false`: these tests read runs by their
    position in the file (interleaving, the default, is tests/experiments/test_order.py's)."""
    order = config.Order(interleave=False)
    return cfg.model_copy(update={"defaults": cfg.defaults.model_copy(update={"order": order})})


def _plan(caps: dict[str, str | None], cores: int = 16, only: list[str] | None = None):
    cfg = file_order(config.load(PROJECT / "experiments.yaml"))
    return cfg, expand(cfg, caps, cores, only)


def test_cpu_machine_runs_cpu_experiments_and_skips_gpu_ones_with_reasons() -> None:
    _cfg, planned = _plan(NO_GPU, cores=2)
    runnable = [p.run.describe() for p in planned if p.skip_reason is None
                and p.run.experiment != "sizes-cpu"]
    sizes = [p.run.describe() for p in planned if p.run.experiment == "sizes-cpu"
             and p.skip_reason is None]
    # the CPU size sweep: every Linux build at its thread count, 6 sizes each
    assert len(sizes) == 24 and sizes[0] == "sizes-cpu: torch cpu mm 64x64, threads 2"
    assert sizes[-1] == "sizes-cpu: burn x86-v4 flex mm 1024x1024, threads 2"
    assert runnable == [
        "first-call: jax cpu mm 1024x1024, cold cache, process 1/2",
        "first-call: jax cpu mm 1024x1024, warm cache, process 2/2",
        "first-call: jax cpu mm 1024x1024, cold cache, process 1/2, repeat 2",
        "first-call: jax cpu mm 1024x1024, warm cache, process 2/2, repeat 2",
        "first-call: jax cpu mm 1024x1024, cold cache, process 1/2, repeat 3",
        "first-call: jax cpu mm 1024x1024, warm cache, process 2/2, repeat 3",
        "jax-first-call: jax cpu mm 1024x1024, cold cache, process 1/2",
        "jax-first-call: jax cpu mm 1024x1024, warm cache, process 2/2",
        "jax-first-call: jax cpu mm 1024x1024, cold cache, process 1/2, repeat 2",
        "jax-first-call: jax cpu mm 1024x1024, warm cache, process 2/2, repeat 2",
        "jax-first-call: jax cpu mm 1024x1024, cold cache, process 1/2, repeat 3",
        "jax-first-call: jax cpu mm 1024x1024, warm cache, process 2/2, repeat 3",
        # Inductor's C++ backend on the CPU (its CUDA twins skipped with the reason)
        "compile: torch cpu mm 256x256, compile, cold cache, process 1/2",
        "compile: torch cpu mm 256x256, compile, warm cache, process 2/2",
        "compile: torch cpu mm 256x256, compile:max-autotune, cold cache, process 1/2",
        "compile: torch cpu mm 256x256, compile:max-autotune, warm cache, process 2/2",
        "compile-methods: torch cpu mm 1024x1024, threads 2",
        "compile-methods: torch cpu mm 1024x1024, threads 2, compile, warm cache",
        "compile-accuracy: torch cpu accuracy 1024x1024",
        "compile-accuracy: torch cpu accuracy 1024x1024, compile",
        "cpu: torch cpu mm 1024x1024, threads 1",
        "cpu: torch cpu mm 1024x1024, threads 2",
        "cpu: burn template flex mm 1024x1024, threads 1",
        "cpu: burn default flex mm 1024x1024, threads 1",
        "cpu: burn default flex mm 1024x1024, threads 2",
        "cpu: burn x86-v4 flex mm 1024x1024, threads 1",
        "cpu: burn x86-v4 flex mm 1024x1024, threads 2",
        "cpu: jax cpu mm 1024x1024, threads 1",
        "cpu: jax cpu mm 1024x1024, threads 2",
        "accuracy: torch cpu accuracy 256x256",
        "accuracy: torch cpu accuracy 1024x1024",
        "accuracy: burn template flex accuracy 256x256",
        "accuracy: burn template flex accuracy 1024x1024",
        "accuracy: burn default flex accuracy 256x256",
        "accuracy: burn default flex accuracy 1024x1024",
        "accuracy: burn x86-v4 flex accuracy 256x256",
        "accuracy: burn x86-v4 flex accuracy 1024x1024",
        "accuracy: jax cpu accuracy 256x256",
        "accuracy: jax cpu accuracy 1024x1024",
        "failed-build: burn accelerate flex mm 1024x1024",
    ]
    skipped = {p.skip_reason for p in planned if p.skip_reason}
    assert skipped == {"needs an NVIDIA GPU", "needs MPS", "needs macOS", "needs Apple silicon"}
    assert [p.expect_failure for p in planned if p.run.build == "accelerate"] == [True]


def test_gpu_machine_cold_series_and_warm_up_puzzle() -> None:
    _cfg, planned = _plan(NVIDIA, only=["first-call", "warmup"])
    burn = [p.run for p in planned if p.skip_reason is None and p.run.program == "burn"]
    first = [(r.process, r.cache, r.cache_action) for r in burn if r.experiment == "first-call"]
    # cold only before process 1; each of the 3 repeats a full series with its own driver cache
    assert first == [(1, "cold", "delete"), (2, "warm", "none")] * 3
    series = [(p.run.repeat, p.cold_series) for p in planned if p.skip_reason is None
              and p.run.program == "burn" and p.run.experiment == "first-call"]
    firsts = [p.run.run_id for p in planned if p.run.program == "burn" and p.skip_reason is None
              and p.run.experiment == "first-call" and p.run.process == 1]
    assert series == [(r, firsts[r - 1]) for r in (1, 2, 3) for _ in (1, 2)]
    assert len(set(firsts)) == 3
    warm = [(r.cache, r.cache_action, r.warmup) for r in burn if r.experiment == "warmup"]
    assert warm == [("cold", "delete", "dropped"), ("cold", "delete", "kept"),
                    ("warm", "ensure", "dropped"), ("warm", "ensure", "kept")]
    torch = [p.run for p in planned if p.skip_reason is None and p.run.program == "torch"]
    assert [(r.process, r.cache, r.precision) for r in torch] == [
        (1, "none", None), (2, "none", None), (1, "none", "tf32"), (2, "none", "tf32")]


def test_auto_threads_is_the_core_count_and_duplicates_collapse() -> None:
    _cfg, planned = _plan(NO_GPU, cores=1, only=["cpu"])
    torch = [p.run.threads for p in planned if p.run.program == "torch"]
    assert torch == [1]  # 'auto' on one core is the same run as threads 1


def test_run_ids_follow_the_definition() -> None:
    _cfg, a = _plan(NO_GPU, cores=2, only=["cpu"])
    _cfg, b = _plan(NO_GPU, cores=2, only=["cpu"])
    assert [p.run.run_id for p in a] == [p.run.run_id for p in b]
    assert len({p.run.run_id for p in a}) == len(a)
    _cfg, c = _plan(NO_GPU, cores=4, only=["cpu"])  # 'auto' now means 4: new runs
    assert {p.run.run_id for p in a} != {p.run.run_id for p in c}


def test_a_cold_and_a_warm_series_plan_their_shared_warm_process_once(tmp_path: Path) -> None:
    """`cache: [cold, warm]` with 2 processes: process 2 of each series finds the cache warm,
    one definition and one run id; planned twice, the second run would replace the first's
    record (one run id, one record), so the plan holds it once, in the cold series."""
    path = tmp_path / "cw.yaml"
    path.write_text("version: 1\ndefaults: {shape: [64, 64], reps: 3, order: {interleave: "
                    "false}}\nexperiments:\n  cw:\n    mode: mm\n    processes: 2\n"
                    "    cache: [cold, warm]\n    targets: [{program: torch, device: cpu, "
                    "exec: [compile]}]\n", encoding="utf-8")
    planned = expand(config.load(path), NO_GPU, 2)
    assert [p.run.describe() for p in planned] == [
        "cw: torch cpu mm 64x64, compile, cold cache, process 1/2",
        "cw: torch cpu mm 64x64, compile, warm cache, process 2/2",
        "cw: torch cpu mm 64x64, compile, warm cache, process 1/2"]
    assert len({p.run.run_id for p in planned}) == 3
    assert planned[1].cold_series == planned[0].run.run_id  # it follows the cold process


def test_builds_needed_only_for_runnable_runs(tmp_path: Path) -> None:
    cfg, planned = _plan(NO_GPU)
    assert list(builds_needed(cfg, planned)) == ["template", "default", "x86-v4", "accelerate"]
    cfg, planned = _plan(NVIDIA, only=["methods"])
    assert list(builds_needed(cfg, planned)) == ["cuda"]


def test_run_ids_of_the_experiments_file_never_change() -> None:
    """A run id hashes the run's definition: resume and the committed stores depend on it.
    tests/data/plan_run_ids.json was computed before the records moved into records.py
    (every capability present, 8 cores); the same file must give the same ids, in file order.
    Runs added since with a new axis (torch's `precision: tf32`, first-call's repeats 2 and
    3) are new runs: not pinned; so are profile runs (`profile: [ncu]`), each right after
    its measured run, whose id is unchanged; and so are the size sweeps and JAX's
    runs: new programs' runs are new runs, the pinned ones keep their ids; so are
    the accuracy runs at 1024² (accuracy evidence at every timed shape); so
    are the compiled and graph runs (`exec`, and the compile experiments' eager
    runs beside them)."""
    want = json.loads((PROJECT / "tests" / "data" / "plan_run_ids.json").read_text())
    caps: dict[str, str | None] = dict.fromkeys(get_args(Capability))
    # in file order (the pinned list's); the interleaved default plans the same ids reordered
    planned = expand(file_order(config.load(PROJECT / "experiments.yaml")), caps, 8)
    # the methods experiment's energy block (`energy_s: 5`) makes its runs new measurements,
    # and its stopping target plans each series with max_processes: without
    # both, the definitions of its first processes are the pinned ones
    def pinned(run: RunDef) -> RunDef:
        return replace(run, energy_s=None, processes=1) if run.experiment == "methods" else run
    assert [[pinned(p.run).run_id, pinned(p.run).describe()] for p in planned
            if p.run.precision is None and p.run.repeat == 1 and p.run.profile is None
            and p.run.experiment not in ("sizes", "sizes-cpu") and p.run.program != "jax"
            and p.run.params["exec"] is None and not p.run.experiment.startswith("compile")
            and not (p.run.experiment == "methods" and p.run.process > 1)
            and not (p.run.mode == "accuracy" and p.run.shape == (1024, 1024))] == want
    assert all(p.run.energy_s == 5 for p in planned if p.run.experiment == "methods")


def test_a_plan_past_the_run_limit_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every count within its own limit can still multiply into a plan too big to run."""
    monkeypatch.setattr(plan, "MAX_RUNS", 5)
    cfg = config.load(PROJECT / "experiments.yaml")
    with pytest.raises(InputError, match="experiment 'cpu' takes the plan past 5 runs"):
        expand(cfg, NO_GPU, 2, ["cpu"])


def _plan_output(tmp_path: Path, capsys: pytest.CaptureFixture[str], shapes: int) -> str:
    from orchestrator import cli
    exp = tmp_path / "e.yaml"
    exp.write_text("version: 1\nexperiments:\n  sizes:\n    mode: mm\n"
                   "    targets: [{program: torch, device: cpu}]\n"
                   f"    shapes: [{', '.join(f'[{64 + i}, {64 + i}]' for i in range(shapes))}]\n",
                   encoding="utf-8")
    assert cli.main(["plan", str(exp), "--results", str(tmp_path / "none")]) == 0
    return capsys.readouterr().err


def test_a_plan_past_plan_table_runs_prints_a_line_per_run(
        tmp_path: Path, capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    """A table of 5000 runs took rich 2.8 s to lay out (20,000 wrapped lines): past
    PLAN_TABLE runs, one tab-separated line each; up to it, the table as ever."""
    from orchestrator import cli
    monkeypatch.setattr(cli, "PLAN_TABLE", 3)
    table = _plan_output(tmp_path, capsys, 3)
    assert "┃ experiment" in table and "\t" not in table
    lines = _plan_output(tmp_path, capsys, 4).splitlines()
    assert lines[0].endswith("4 runs, more than the 3 shown as a table: one line each, "
                             "experiment, run, will and why tab-separated")
    assert sorted(line.split("\t") for line in lines[1:5]) == [
        ["sizes", f"torch cpu mm {n}x{n}", "run", ""] for n in (64, 65, 66, 67)]
    assert "┃" not in "".join(lines) and lines[-1] == "4 run, 0 skip, 0 done"
