"""Figure 1: per-run overhead of `run` against hyperfine and a bare subprocess loop."""

from __future__ import annotations

import json
import os
import shlex
import shutil
import subprocess
import time
from collections.abc import Callable
from pathlib import Path
from statistics import median
from typing import Any

from figures.common import (
    FAKE_PYTHON,
    PROJECT,
    PYTHON,
    _rusage_s,
    experiments,
    loadavg,
    ms,
    others_busy,
    say,
    store_rows,
    write_exe,
)
from orchestrator.data.store import Store
from orchestrator.records import RunDef
from orchestrator.run import runner
from orchestrator.run.machine import wait_idle
from orchestrator.run.runner import RunContext
from orchestrator.run.sweep import parse_record

# ---- 1. per-run overhead -----------------------------------------------------------------------


def fake_argv(fake: Path) -> list[str]:
    """Exactly the argv the orchestrator gives the fake interpreter."""
    run = RunDef(experiment="overhead", program="torch", device="cpu", mode="mm",
                 shape=(1024, 1024), reps=20)
    return runner.program_argv(run, RunContext(PROJECT, str(fake), PROJECT, {}), None)


def own_cpu(argv: list[str]) -> tuple[float, float | None, int]:
    """(wall s, CPU s the process itself used (its children not counted), exit code).

    The CPU is the on-CPU time of its main thread, read from /proc/PID/schedstat while the
    process is a zombie (exited, not yet reaped): Linux only; None elsewhere. All three programs
    measured this way (hyperfine, the orchestrator) run one thread."""
    start = time.perf_counter()
    proc = subprocess.Popen(argv, cwd=PROJECT, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)
    cpu = None
    if hasattr(os, "waitid") and Path(f"/proc/{proc.pid}/schedstat").exists():
        os.waitid(os.P_PID, proc.pid, os.WEXITED | os.WNOWAIT)
        cpu = int(Path(f"/proc/{proc.pid}/schedstat").read_text().split()[0]) / 1e9
    code = proc.wait()
    return time.perf_counter() - start, cpu, code


def bare_loop(argv: list[str], n: int) -> tuple[float, float]:
    """(wall, CPU of this process) per run of a plain subprocess.run loop."""
    cpu0, start = _rusage_s(), time.perf_counter()
    for _ in range(n):
        subprocess.run(argv, cwd=PROJECT, capture_output=True, check=False)
    return (time.perf_counter() - start) / n, (_rusage_s() - cpu0) / n


def hyperfine_loop(argv: list[str], n: int, tmp: Path) -> dict[str, float | None]:
    """hyperfine's whole wall time / n, its own CPU / n, and its mean time of the program."""
    out = tmp / "hyperfine.json"
    wall, cpu, code = own_cpu(["hyperfine", "-N", "--runs", str(n), "--style", "none",
                               "--export-json", str(out),
                               " ".join(shlex.quote(a) for a in argv)])
    if code != 0:
        raise SystemExit(f"hyperfine failed with exit code {code}")
    return {"per_run": wall / n, "cpu": cpu / n if cpu is not None else None,
            "mean": json.loads(out.read_text())["results"][0]["mean"]}


def orchestrator_loop(exp: Path, fake: Path, n: int, results: Path) -> dict[str, Any]:
    """The real command line; per run from the store: the period of the run loop."""
    shutil.rmtree(results, ignore_errors=True)
    t0 = time.time()
    wall, cpu, code = own_cpu([PYTHON, "-m", "orchestrator", "run", str(exp), "--results",
                               str(results), "--python", str(fake), "--quiet"])
    if code != 0:
        raise SystemExit(f"orchestrator run failed with exit code {code}")
    runs = store_rows(results, "SELECT started_at, ended_at, wall_s, status FROM runs "
                               "ORDER BY started_at")
    assert len(runs) == n and all(r["status"] == "ok" for r in runs), "fake runs must be ok"
    period = (runs[-1]["started_at"] - runs[0]["started_at"]) / max(n - 1, 1)
    return {"per_run": period, "total_per_run": wall / n, "startup": runs[0]["started_at"] - t0,
            "program_wall": median([r["wall_s"] for r in runs]), "cpu": cpu}


def breakdown(fake: Path, n: int, tmp: Path) -> dict[str, float]:
    """The same loop in-process, timed per step: where a run's time goes."""
    steps: dict[str, list[float]] = {"execute": [], "spawn": [], "parse": [], "record": [],
                                     "record_no_fsync": []}
    ctx = RunContext(PROJECT, str(fake), tmp / "scratch", {})
    runs = [RunDef(experiment="overhead", program="torch", device="cpu", mode="mm",
                   shape=(1024, 1024), reps=20, process=i, processes=n) for i in range(1, n + 1)]
    cpu = 0.0
    for durable in (True, False):
        # durable=False for comparison only: the orchestrator never does this
        store = Store(tmp / ("store-durable" if durable else "store-no-fsync"), durable)
        with store.writing():
            sweep_id, _ = store.begin_sweep(experiments(tmp / "b.yaml", n), {}, [], True)
            cpu0 = _rusage_s()
            for run in runs:
                t0 = time.perf_counter()
                rec = runner.execute(run, ctx)
                t1 = time.perf_counter()
                parsed = parse_record(rec)
                t2 = time.perf_counter()
                store.record_run(sweep_id, rec, parsed)
                t3 = time.perf_counter()
                if durable:
                    steps["execute"].append(t1 - t0)
                    steps["spawn"].append(rec.wall_s or 0.0)
                    steps["parse"].append(t2 - t1)
                    steps["record"].append(t3 - t2)
                else:
                    steps["record_no_fsync"].append(t3 - t2)
            if durable:
                cpu = (_rusage_s() - cpu0) / n
    return {**{k: median(v) for k, v in steps.items()}, "cpu": cpu}


def figure_overhead(quick: bool, tmp: Path, max_wait_s: float) -> dict[str, Any]:
    n, rounds = (100, 3) if quick else (300, 5)
    say(f"## 1. Per-run overhead: a trivial program run {n} times, {rounds} interleaved rounds")
    fake = write_exe(tmp / "fake-python", FAKE_PYTHON)
    exp = experiments(tmp / "overhead.yaml", n)
    argv = fake_argv(fake)
    say(f"program: {' '.join(argv)}")
    has_hyperfine = shutil.which("hyperfine") is not None
    if not has_hyperfine:
        say("hyperfine: not installed (Debian/Ubuntu: apt-get update && apt-get install -y "
            "hyperfine; macOS: brew install hyperfine); its column is left out")
    got: dict[str, list[float]] = {}

    def keep(key: str, value: float | None) -> None:
        if value is not None:
            got.setdefault(key, []).append(value)

    def orch() -> None:
        r = orchestrator_loop(exp, fake, n, tmp / "results-overhead")
        for key in ("per_run", "total_per_run", "startup", "program_wall", "cpu"):
            keep(f"orchestrator_{key}", r[key])

    def hyper() -> None:
        for key, value in hyperfine_loop(argv, n, tmp).items():
            keep(f"hyperfine_{key}", value)

    def bare() -> None:
        wall, cpu = bare_loop(argv, n)
        keep("bare_per_run", wall)
        keep("bare_cpu", cpu)

    def inprocess() -> None:
        for key, value in breakdown(fake, n, tmp).items():
            keep(f"step_{key}", value)

    tools: dict[str, Callable[[], None]] = {"orchestrator": orch, "bare": bare,
                                            "in-process": inprocess}
    if has_hyperfine:
        tools["hyperfine"] = hyper
    names = list(tools)
    busy: list[float] = []
    for i in range(rounds):
        wait_idle(max_wait_s)
        with others_busy(busy):
            for name in names[i % len(names):] + names[:i % len(names)]:  # rotate the order
                tools[name]()
    # Summaries over the rounds in which others left the machine mostly alone, if any
    quiet = [i for i, b in enumerate(busy) if b < 0.25]
    summary = (f"the figures below are over the {len(quiet)} round(s) where they kept under 25%"
               if quiet else "no round was quiet: the figures below are over all rounds and "
               "say more about the machine than about the orchestrator")
    quiet = quiet or list(range(rounds))
    got = {k: [v[i] for i in quiet] for k, v in got.items()}
    # the command line's start-up CPU, to take out of its CPU per run
    one = experiments(tmp / "one.yaml", 1)
    startup_cpu = median([c for c in (own_cpu([PYTHON, "-m", "orchestrator", "run", str(one),
                                               "--results", str(tmp / f"results-one-{i}"),
                                               "--python", str(fake), "--quiet"])[1]
                                      for i in range(3)) if c is not None] or [0.0])
    # the durable commit's fsync, per round: record_run with and without it, that round
    fsyncs = [max(a - b, 0.0) for a, b in zip(got["step_record"], got["step_record_no_fsync"],
                                              strict=True)]
    result: dict[str, Any] = {"n": n, "rounds": rounds, "others_busy": busy, "quiet": quiet,
                              "load_after": loadavg(), "startup_cpu": startup_cpu}
    result.update({k: median(v) for k, v in got.items()})
    result.update({f"{k}_min": min(v) for k, v in got.items()})
    steps = {k.removeprefix("step_"): v for k, v in result.items() if k.startswith("step_")}
    if "orchestrator_cpu" in got:
        result["orchestrator_cpu_per_run"] = median(
            [(c - startup_cpu) / n for c in got["orchestrator_cpu"]])
    fsync = median(fsyncs)
    result["durable_commit"] = fsync
    without = median([o - f for o, f in zip(got["orchestrator_per_run"], fsyncs, strict=True)])
    result["orchestrator_without_fsync"] = without
    orch_ms, hyper_ms = result["orchestrator_per_run"], result.get("hyperfine_per_run")
    bare_ms = result["bare_per_run"]
    say(f"others kept {', '.join(f'{b:.0%}' for b in busy)} of the machine busy in the rounds; "
        f"{summary}")
    say(f"orchestrator run     {ms(orch_ms)} per run (median of rounds; min "
        f"{ms(result['orchestrator_per_run_min'])}); its CPU "
        f"{ms(result.get('orchestrator_cpu_per_run'))} per run; start-up "
        f"{result['orchestrator_startup']:.2f} s")
    if hyper_ms is not None:
        say(f"hyperfine -N         {ms(hyper_ms)} per run (min "
            f"{ms(result['hyperfine_per_run_min'])}); its CPU {ms(result.get('hyperfine_cpu'))}"
            f" per run; its mean program time {ms(result['hyperfine_mean'])}")
    say(f"bare subprocess.run  {ms(bare_ms)} per run (min {ms(result['bare_per_run_min'])}); "
        f"its CPU {ms(result['bare_cpu'])} per run")
    say(f"one run in-process:  execute {ms(steps['execute'])} (the program's wall_s "
        f"{ms(steps['spawn'])}), parse {ms(steps['parse'])}, record {ms(steps['record'])} "
        f"({ms(steps['record_no_fsync'])} without the fsync)")
    say(f"orchestrator run without the durable commit's fsync (per round: the CLI's per-run time"
        f" less that round's fsync): {ms(without)} per run")
    if hyper_ms is not None:
        result["ratio"] = orch_ms / hyper_ms
        result["ratio_without_fsync"] = without / hyper_ms
        result["ratio_min"] = result["orchestrator_per_run_min"] / result["hyperfine_per_run_min"]
        say(f"ratio orchestrator / hyperfine: {result['ratio']:.2f}x (best rounds "
            f"{result['ratio_min']:.2f}x; {result['ratio_without_fsync']:.2f}x without the "
            f"durable commit's fsync); orchestrator / bare loop {orch_ms / bare_ms:.2f}x")
    say(f"load after: {result['load_after']}")
    return result
