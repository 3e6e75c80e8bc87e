"""The orchestrator's own cost, measured side by side with its peers (issue 5).

    .venv/bin/python bench/harness.py [--quick] [--json OUT.json] [--only FIGURE ...]

Five figures, each measured in this one run (BENCHMARKS.md explains them and keeps the latest):

1. Per-run overhead: `python -m orchestrator run` running a trivial program N times (a fresh
   process each, output parsed and each run committed to the results store) against hyperfine
   (`hyperfine -N --runs N`) and a bare `subprocess.run` loop running the same program as often.
2. Interference: what the orchestrator process does while a measured program runs (on-CPU
   time, wake-ups, threads), seen from inside the measured program and by getrusage.
3. Rebuilds: `python -m orchestrator build experiments.yaml` with everything up to date, cargo's
   own no-op check for comparison, and (not with --quick) after touching a shared source file.
4. Parsing: lines per second of `parse_text` on a synthetic 1,000,000-line log.
5. Sweep time: the default CPU sweep (`run experiments.yaml`) split into builds, waiting, measured
   runs and the orchestrator's own time (--quick: a 128x128 copy with 5 repetitions).

The machine may be shared and noisy: figure 1 runs in interleaved rounds, waits (bounded,
--wait-quiet) for other processes to calm down before each, measures how much of the machine
they used during it, and summarises the rounds where that stayed under a quarter. The load
average is printed beside the figures. Nothing here asserts a time; the tests never do either.
hyperfine: `apt-get update && apt-get install -y hyperfine` (Debian, Ubuntu), `brew install
hyperfine` (macOS); without it the other figures are still printed.
"""

from __future__ import annotations

import argparse
import hashlib
import itertools
import json
import os
import platform
import re
import resource
import shlex
import shutil
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import yaml

from orchestrator.data.parse import parse_text
from orchestrator.data.store import Store
from orchestrator.programs.cargo import Builder
from orchestrator.run import runner
from orchestrator.run.machine import capabilities, host_facts
from orchestrator.run.runner import RunContext
from orchestrator.run.sweep import Sweep, parse_record
from orchestrator.spec.plan import RunDef, builds_needed

PROJECT = Path(__file__).resolve().parent.parent
PYTHON = sys.executable
SUMMARY_LINE = "cpu 1024x1024 matmul with sync, 20 runs: min 1.000ms median 1.100ms"
# Stands in for the Python interpreter that runs bench_py: ignores its arguments, prints one
# valid summary line. `-c` is the orchestrator's probe for torch: answer "present", print nothing.
FAKE_PYTHON = f"""#!/bin/sh
case "$1" in -c) exit 0;; esac
printf '%s\\n' '{SUMMARY_LINE}'
"""
# Sleeps, and looks at its parent (the orchestrator) from inside the measured window: on-CPU
# time of all the parent's threads (ns, /proc/PID/task/*/schedstat), its thread count and its
# context switches (each one a wake-up or a preemption).
PROBE = """#!{python}
import os, sys, time
if sys.argv[1:2] == ["-c"]:
    sys.exit(0)
PARENT = os.getppid()
def parent():
    tasks = os.listdir(f"/proc/{{PARENT}}/task")
    cpu = 0
    for task in tasks:
        with open(f"/proc/{{PARENT}}/task/{{task}}/schedstat") as f:
            cpu += int(f.read().split()[0])
    switches = 0
    with open(f"/proc/{{PARENT}}/status") as f:
        for line in f:
            if line.startswith(("voluntary_ctxt_switches", "nonvoluntary_ctxt_switches")):
                switches += int(line.split()[1])
    return cpu, len(tasks), switches
cpu0, threads0, sw0 = parent()
time.sleep({seconds})
cpu1, threads1, sw1 = parent()
print("cpu 1024x1024 matmul with sync, 20 runs: min 1.000s median 1.000s")
print(f"# parent cpu_ns {{cpu1 - cpu0}} threads {{max(threads0, threads1)}} switches {{sw1 - sw0}}")
"""
PROBE_LINE = re.compile(r"# parent cpu_ns (\d+) threads (\d+) switches (\d+)")


# ---- small helpers ---------------------------------------------------------------------------


def say(text: str = "") -> None:
    print(text, flush=True)


def loadavg() -> str:
    return " ".join(f"{x:.2f}" for x in os.getloadavg())


def ms(seconds: float | None) -> str:
    return "n/a" if seconds is None else f"{seconds * 1e3:.3f} ms"


def median(values: list[float]) -> float:
    return statistics.median(values)


def orchestrator(*args: str, stderr: Any = subprocess.STDOUT) -> tuple[float, int, str]:
    """(wall seconds, exit code, output) of `python -m orchestrator ARGS` in a fresh process."""
    start = time.perf_counter()
    done = subprocess.run([PYTHON, "-m", "orchestrator", *args], cwd=PROJECT, text=True,
                          stdout=subprocess.PIPE, stderr=stderr, check=False)
    return time.perf_counter() - start, done.returncode, done.stdout


def _rusage_s() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def write_exe(path: Path, text: str) -> Path:
    path.write_text(text)
    path.chmod(0o755)
    return path


def experiments(path: Path, processes: int) -> Path:
    path.write_text(yaml.safe_dump({
        "version": 1,
        "experiments": {"overhead": {"title": "per-run overhead", "mode": "mm",
                                     "processes": processes,
                                     "targets": [{"program": "torch", "device": "cpu"}]}},
    }))
    return path


def store_rows(results: Path, sql: str) -> list[dict[str, Any]]:
    db = sqlite3.connect(results / "results.sqlite")
    db.row_factory = sqlite3.Row
    try:
        return [dict(row) for row in db.execute(sql)]
    finally:
        db.close()


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
        store = Store(tmp / ("store-durable" if durable else "store-no-fsync"))
        with store.writing():
            if not durable:  # for comparison only: the orchestrator never does this
                store.db.execute("PRAGMA synchronous=OFF")
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


def busy_others(seconds: float = 0.5) -> float:
    """Fraction of all cores busy over `seconds` while this harness sleeps (others' load)."""
    if not Path("/proc/stat").exists():
        return 0.0
    busy0, total0 = _stat_jiffies()
    time.sleep(seconds)
    busy1, total1 = _stat_jiffies()
    return (busy1 - busy0) / max(total1 - total0, 1)


def _stat_jiffies() -> tuple[int, int]:
    """(busy, total) jiffies of all cores since boot."""
    values = [int(x) for x in Path("/proc/stat").read_text().split("\n")[0].split()[1:]]
    idle = values[3] + values[4]
    return sum(values) - idle, sum(values)


def _tree_cpu_s() -> float:
    """CPU of this process and of every child it has waited for."""
    own = resource.getrusage(resource.RUSAGE_SELF)
    kids = resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + kids.ru_utime + kids.ru_stime


@contextmanager
def others_busy(into: list[float]) -> Iterator[None]:
    """Append the fraction of the machine that other processes kept busy during the block."""
    if not Path("/proc/stat").exists():
        yield
        into.append(0.0)
        return
    busy0, total0 = _stat_jiffies()
    mine0 = _tree_cpu_s()
    yield
    busy1, total1 = _stat_jiffies()
    hz = os.sysconf("SC_CLK_TCK")
    others = (busy1 - busy0) - (_tree_cpu_s() - mine0) * hz
    into.append(max(others, 0.0) / max(total1 - total0, 1))


def wait_quiet(max_wait_s: float, busy_below: float = 0.25) -> float:
    """Wait (bounded) until others use less than a quarter of the machine; the last reading."""
    deadline = time.monotonic() + max_wait_s
    busy = busy_others()
    while busy > busy_below and time.monotonic() < deadline:
        time.sleep(2)
        busy = busy_others()
    return busy


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
        wait_quiet(max_wait_s)
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


# ---- 2. interference ----------------------------------------------------------------------------


def _probe_lines(stdout: bytes | str) -> dict[str, int]:
    text = stdout.decode() if isinstance(stdout, bytes) else stdout
    match = PROBE_LINE.search(text)
    if match is None:
        raise SystemExit(f"probe printed no '# parent' line: {text!r}")
    cpu, threads, switches = (int(g) for g in match.groups())
    return {"cpu_ns": cpu, "threads": threads, "switches": switches}


def figure_interference(quick: bool, tmp: Path) -> dict[str, Any]:
    say("## 2. Interference: the orchestrator while a measured program runs (1 s of sleep)")
    result: dict[str, Any] = {}
    if not Path("/proc/self/task").is_dir():
        say("needs Linux /proc for the inside view; getrusage only")
    probe = write_exe(tmp / "probe", PROBE.format(python=PYTHON, seconds=1.0))
    env = {"PATH": os.environ["PATH"]}
    waits = {"pidfd wait (now)": getattr(runner, "_wait_exit", None),
             "Popen.wait(timeout) polling (before)": getattr(runner, "_poll_exit", None)}
    for name, wait in waits.items():
        if wait is None:
            continue
        saved = runner._wait_exit
        runner._wait_exit = wait
        try:
            before = _rusage_s()
            outcome = runner.spawn([str(probe)], env, PROJECT, 60)
            used = _rusage_s() - before
        finally:
            runner._wait_exit = saved
        seen = _probe_lines(outcome.stdout) if Path("/proc/self/task").is_dir() else {}
        result[name] = {**seen, "rusage_s": used, "wall_s": outcome.wall_s}
        say(f"runner.spawn, {name}: parent on-CPU during the run {seen.get('cpu_ns', 0) / 1e6:.3f}"
            f" ms, {seen.get('switches', '?')} context switches, {seen.get('threads', '?')} "
            f"thread(s); getrusage across spawn() {used * 1e3:.2f} ms; wall_s {outcome.wall_s:.4f}"
            " s for 1 s of sleep")
    # how late the exit is noticed: the same short programs, waited for both ways
    if "Popen.wait(timeout) polling (before)" in result:
        late = {}
        for seconds in (0.02, 0.2):
            walls: dict[str, list[float]] = {name: [] for name in waits}
            for _ in range(3 if quick else 7):
                for name, wait in waits.items():
                    saved = runner._wait_exit
                    runner._wait_exit = wait
                    try:
                        walls[name].append(runner.spawn(["sleep", str(seconds)], env, PROJECT,
                                                        60).wall_s)
                    finally:
                        runner._wait_exit = saved
            now, before = (median(v) for v in walls.values())
            late[seconds] = before - now
        result["late_exit_s"] = late
        say("polling noticed the exit later than the pidfd by "
            + ", ".join(f"{v * 1e3:.1f} ms for a {k * 1e3:.0f} ms program"
                        for k, v in late.items())
            + " (median wall_s, both ways): time added to wall_s and to the sweep")
    # the whole command line, progress output on (to a file), 3 runs of the probe
    exp = experiments(tmp / "probe.yaml", 3)
    results = tmp / "results-probe"
    with open(tmp / "probe-progress.txt", "w") as progress:
        orchestrator("run", str(exp), "--results", str(results), "--python", str(probe),
                     stderr=progress)
    rows = store_rows(results, "SELECT stdout, wall_s FROM runs ORDER BY started_at")
    seen_all = [_probe_lines(r["stdout"]) for r in rows]
    result["cli"] = seen_all
    say("python -m orchestrator run (3 runs of the probe): parent on-CPU during each run "
        + ", ".join(f"{s['cpu_ns'] / 1e6:.3f} ms" for s in seen_all)
        + "; context switches " + ", ".join(str(s["switches"]) for s in seen_all)
        + "; threads " + ", ".join(str(s["threads"]) for s in seen_all))
    result["threads_in_harness"] = threading.active_count()
    say(f"threading.active_count() in this process after the runs: {threading.active_count()}")
    return result


# ---- 3. rebuilds -------------------------------------------------------------------------------


def _build_lines(stdout: str) -> list[str]:
    return [line for line in stdout.splitlines() if line.startswith(("ok ", "failed"))]


def _all_fresh(stdout: str) -> bool:
    """Every build that succeeds was up to date (a failure is retried by cargo every time)."""
    ok = [line for line in _build_lines(stdout) if line.startswith("ok ")]
    return bool(ok) and all("(up to date)" in line for line in ok)


def _expected_failures(stdout: str) -> int:
    return sum(line.startswith("failed (expected)") for line in _build_lines(stdout))


def _built_seconds(stdout: str) -> float:
    return sum(float(x) for x in re.findall(r"built in ([0-9.]+) s", stdout))


@contextmanager
def touched(path: Path) -> Iterator[bytes]:
    """Append a comment to `path`; put the exact bytes back afterwards, whatever happens,
    unless someone else changed the file meanwhile (then say so and leave it)."""
    original = path.read_bytes()
    edited = original + b"\n// touched by bench/harness.py to time a rebuild; removed after\n"
    path.write_bytes(edited)
    try:
        yield original
    finally:
        if path.read_bytes() == edited:
            path.write_bytes(original)
        else:
            say(f"WARNING: {path} changed during the rebuild (another editor?): not restored; "
                "remove the harness's comment line by hand")


def _timed_builds(args: list[str], times: int) -> tuple[list[float], str]:
    walls, out = [], ""
    for _ in range(times):
        wall, _code, out = orchestrator("build", "experiments.yaml", *args)
        walls.append(wall)
        if not _all_fresh(out):
            say("WARNING: a build was not up to date (sources changed meanwhile?)")
    return walls, out


def figure_builds(quick: bool, tmp: Path) -> dict[str, Any]:
    say("## 3. Rebuilds: python -m orchestrator build experiments.yaml")
    result: dict[str, Any] = {}
    sweep = Sweep(PROJECT, tmp / "unused", PYTHON, show=False)
    config, planned = sweep.plan(PROJECT / "experiments.yaml", None)
    needed = builds_needed(config, planned)
    failing = {name for name, build in needed.items() if build.expect_failure}
    # the experiments whose builds can all succeed here: `build --only` them
    clean = [name for name, exp in config.experiments.items()
             if not any(t.build in failing for t in exp.targets)]
    wall, _code, out = orchestrator("build", "experiments.yaml")
    if not _all_fresh(out):
        say(f"(first call had work to do: {wall:.1f} s; builds are now up to date)")
    times = 3 if quick else 5
    walls, out = _timed_builds([], times)
    fails = _expected_failures(out)
    result.update(all_wall=median(walls), builds=len(_build_lines(out)), expected_failures=fails)
    say(f"all {len(_build_lines(out))} builds: {median(walls):.3f} s (median of {times}; min "
        f"{min(walls):.3f} s): the stamps match, no cargo for the builds that succeed"
        + (f"; cargo runs again for the {fails} expected failure(s) ({', '.join(sorted(failing))}"
           "): a failure is never taken as up to date" if fails else ""))
    if failing:
        walls, out = _timed_builds(["--only", *clean], times)
        result["ok_wall"] = median(walls)
        say(f"the {len(_build_lines(out))} builds that succeed (--only {' '.join(clean)}): "
            f"{median(walls):.3f} s (min {min(walls):.3f} s); no cargo at all")
    # the peer: cargo's own check that there is nothing to do, build by build
    builder = Builder(PROJECT)
    if builder.cargo is not None:
        cargo_walls = {}
        for name, build in needed.items():
            start = time.perf_counter()
            subprocess.run(builder.cargo_argv(build), cwd=builder.rust_dir, capture_output=True,
                           check=False)
            cargo_walls[name] = time.perf_counter() - start
        ok_walls = [w for n, w in cargo_walls.items() if n not in failing]
        result["cargo_noop"] = sum(ok_walls)
        say(f"cargo itself, nothing to do: {sum(ok_walls):.3f} s for the {len(ok_walls)} builds "
            f"that succeed ({', '.join(f'{w:.2f}' for w in ok_walls)} s): what the stamps save"
            + "".join(f"; failing {n}: {w:.2f} s" for n, w in cargo_walls.items()
                      if n in failing))
    if quick:
        say("touched rebuild: skipped (--quick)")
        return result
    source = PROJECT / "bench_rust" / "bench-core" / "src" / "format.rs"
    digest = hashlib.sha256(source.read_bytes()).hexdigest()
    with touched(source):
        wall, code, out = orchestrator("build", "experiments.yaml")
    result["touched_wall"] = wall
    result["touched_cargo"] = _built_seconds(out)
    say(f"after touching {source.relative_to(PROJECT)}: {wall:.1f} s, exit {code}; cargo "
        f"compiled the {len(re.findall('built in', out))} builds that succeed in "
        f"{_built_seconds(out):.1f} s of it:")
    for line in _build_lines(out):
        name = line.split(": ", 1)[0]
        found = re.search(r"\((built in [0-9.]+ s|up to date)\)", line)
        say(f"  {name}: {found.group(1) if found else line.split(': ', 1)[-1][:80]}")
    wall, code, out = orchestrator("build", "experiments.yaml")
    result["restore_wall"] = wall
    same = hashlib.sha256(source.read_bytes()).hexdigest() == digest
    _w, _c, check = orchestrator("build", "experiments.yaml")
    say(f"restored byte-identical: {same}; rebuilt in {wall:.1f} s; now up to date: "
        f"{_all_fresh(check)}")
    return result


# ---- 4. parsing -------------------------------------------------------------------------------


def synthetic_log(lines: int) -> str:
    """A log like a long sweep's: section and program headers, summaries, samples, first calls,
    warm-up lines and lines of no known form, in a fixed mix."""
    samples = " ".join(f"{0.004 + i * 1e-5:.6e}" for i in range(20))
    block = [
        "### burn flex threads 2 process {i}",
        "burn 0.22.1, features [std, flex, simd, rayon], rayon threads 2",
        "flex: device init 1.{i:03d}ms",
        "flex 1024x1024 matmul first call: 3.{i:03d}ms",
        "flex 1024x1024 matmul no sync, 20 runs: min 4.{i:03d}ms median 4.612ms",
        f"# samples flex 1024x1024 matmul no sync: {samples}",
        "flex 1024x1024 matmul with sync, 20 runs: min 4.113ms median 4.{i:03d}ms",
        f"# samples flex 1024x1024 matmul with sync: {samples}",
        "torch 2.9.1, threads 2",
        "cpu 1024x1024 matmul + sum().item(), 20 runs: min 651.666µs median 688.{i:03d}µs",
        "warm-up dropped, timed run 1: after sync 3.{i:03d}s",
        "note: a line of no known form {i}",
        "",
    ]
    out: list[str] = []
    i = 0
    while len(out) < lines:
        out.extend(line.format(i=i % 1000) for line in block)
        i += 1
    return "\n".join(out[:lines]) + "\n"


def figure_parse(quick: bool, sweep: dict[str, Any] | None) -> dict[str, Any]:
    lines = 1_000_000
    say(f"## 4. Parsing: parse_text on a synthetic {lines:,}-line log")
    text = synthetic_log(lines)
    times = []
    for _ in range(1 if quick else 3):
        start = time.perf_counter()
        parsed = parse_text(text)
        times.append(time.perf_counter() - start)
    best = min(times)
    result = {"lines": lines, "bytes": len(text.encode()), "seconds": best,
              "lines_per_s": lines / best, "figures": len(parsed.figures),
              "samples": len(parsed.samples), "unknown": len(parsed.unknown)}
    say(f"{lines / best:,.0f} lines/s ({len(text.encode()) / best / 1e6:.0f} MB/s): {best:.2f} s "
        f"for {len(parsed.figures):,} figures, {len(parsed.samples):,} sample lines, "
        f"{len(parsed.unknown):,} unknown lines kept")
    if sweep:
        parse_s = sweep["stdout_lines"] / result["lines_per_s"]
        result["sweep_parse_s"] = parse_s
        say(f"the sweep of figure 5 printed {sweep['stdout_lines']:,} lines in its "
            f"{sweep['runs']} runs: parsing them takes ~{parse_s * 1e3:.2f} ms, against "
            f"{sweep['run_s']:.1f} s of measured runs ({parse_s / sweep['run_s']:.1e} of it)")
    return result


# ---- 5. sweep time ------------------------------------------------------------------------------


def figure_sweep(quick: bool, tmp: Path) -> dict[str, Any]:
    exp = PROJECT / "experiments.yaml"
    if quick:
        data = yaml.safe_load(exp.read_text())
        data["defaults"]["shape"] = [128, 128]
        data["defaults"]["reps"] = 5
        exp = tmp / "experiments-small.yaml"
        exp.write_text(yaml.safe_dump(data, sort_keys=False))
        say("## 5. Sweep time: experiments.yaml at 128x128, 5 repetitions (--quick)")
    else:
        say("## 5. Sweep time: the default sweep, python -m orchestrator run experiments.yaml")
    results = tmp / "results-sweep"
    start = time.time()
    with open(tmp / "sweep-progress.txt", "w") as progress:
        wall, code, _ = orchestrator("run", str(exp), "--results", str(results), stderr=progress)
    sweep = store_rows(results, "SELECT started_at, ended_at FROM sweeps")[0]
    builds = store_rows(results, "SELECT seconds, fresh FROM builds")
    runs = store_rows(results, "SELECT started_at, ended_at, wall_s, gate_json, status, stdout "
                               "FROM runs ORDER BY started_at")
    sweep_s = sweep["ended_at"] - sweep["started_at"]
    build_s = sum(b["seconds"] or 0 for b in builds)
    wait_s = sum((json.loads(r["gate_json"]) or {}).get("waited_s", 0) for r in runs)
    ran = [r for r in runs if r["wall_s"] is not None]
    run_s = sum(r["wall_s"] for r in ran)
    own_s = sweep_s - build_s - wait_s - run_s
    gaps = [b["started_at"] - a["ended_at"] for a, b in itertools.pairwise(ran)]
    lines = sum((r["stdout"] or b"").count(b"\n") for r in runs)
    # the start-up's parts, each timed again on its own just after the sweep
    facts_start = time.perf_counter()
    host_facts(PROJECT, PYTHON)
    facts_s = time.perf_counter() - facts_start
    caps_start = time.perf_counter()
    capabilities(PYTHON)
    caps_s = time.perf_counter() - caps_start
    import_s, _code, _out = orchestrator("--help")
    result = {"exit": code, "wall": wall, "sweep_s": sweep_s, "build_s": build_s,
              "wait_s": wait_s, "run_s": run_s, "own_s": own_s, "runs": len(ran),
              "records": len(runs), "startup_s": sweep["started_at"] - start,
              "end_s": wall - (sweep["ended_at"] - start), "stdout_lines": lines,
              "gap_median_s": median(gaps) if gaps else 0.0,
              "gap_max_s": max(gaps) if gaps else 0.0, "host_facts_s": facts_s,
              "capabilities_s": caps_s, "cli_start_s": import_s,
              "status": {s: sum(r["status"] == s for r in runs) for s in ("ok", "failed",
                                                                          "skipped")}}
    say(f"command: {wall:.1f} s (exit {code}); {len(ran)} processes run, "
        f"{result['status']['skipped']} runs skipped; load after: {loadavg()}")
    say(f"  start-up before the sweep record (imports, plan, host facts): "
        f"{result['startup_s']:.2f} s; timed again just after: interpreter and imports "
        f"{import_s:.2f} s, capability probes {caps_s:.2f} s, host facts {facts_s:.2f} s (a "
        "Python that imports torch, for its version and BLAS)")
    say(f"  sweep {sweep_s:.1f} s = builds {build_s:.2f} s + waiting {wait_s:.2f} s + measured "
        f"runs {run_s:.1f} s + orchestrator {own_s:.2f} s ({own_s / sweep_s:.1%})")
    say(f"  between two runs: median {ms(result['gap_median_s'])}, max "
        f"{ms(result['gap_max_s'])}")
    return result


# ---- main ---------------------------------------------------------------------------------------


def machine() -> dict[str, Any]:
    model = platform.processor()
    cpuinfo = Path("/proc/cpuinfo")
    if cpuinfo.exists():
        found = re.search(r"^model name\s*:\s*(.+)$", cpuinfo.read_text(), re.M)
        model = found.group(1) if found else model
    hyperfine = shutil.which("hyperfine")
    version = subprocess.run([hyperfine, "--version"], capture_output=True, text=True,
                             check=False).stdout.strip() if hyperfine else "not installed"
    return {"date": time.strftime("%Y-%m-%d %H:%M %Z"), "nproc": os.cpu_count(),
            "cpu": model, "os": f"{platform.system()} {platform.release()}",
            "python": platform.python_version(), "hyperfine": version, "load": loadavg()}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true",
                        help="fewer rounds, no touched rebuild, a small sweep (a minute or two)")
    parser.add_argument("--json", type=Path, help="also write every figure here")
    parser.add_argument("--wait-quiet", type=float, default=60, metavar="S",
                        help="before each round of figure 1, wait up to S s for others to use "
                             "under a quarter of the machine (default 60)")
    parser.add_argument("--only", nargs="+", choices=["overhead", "interference", "builds",
                                                      "parse", "sweep"], help="these figures only")
    args = parser.parse_args()
    facts = machine()
    say(f"# orchestrator benchmarks, {facts['date']}")
    say(f"{facts['nproc']} cores ({facts['cpu']}), {facts['os']}, Python {facts['python']}, "
        f"{facts['hyperfine']}; load {facts['load']}")
    wanted = set(args.only or ["overhead", "interference", "builds", "parse", "sweep"])
    results: dict[str, Any] = {"machine": facts, "quick": args.quick}
    with tempfile.TemporaryDirectory(prefix="orchestrator-bench-") as name:
        tmp = Path(name)
        figures: list[tuple[str, Callable[[], Any]]] = [
            ("overhead", lambda: figure_overhead(args.quick, tmp, args.wait_quiet)),
            ("interference", lambda: figure_interference(args.quick, tmp)),
            ("builds", lambda: figure_builds(args.quick, tmp)),
            ("sweep", lambda: figure_sweep(args.quick, tmp)),
            ("parse", lambda: figure_parse(args.quick, results.get("sweep"))),
        ]
        for key, figure in figures:
            if key in wanted:
                say()
                results[key] = figure()
    if args.json:
        args.json.write_text(json.dumps(results, indent=2, default=str))
    return 0


if __name__ == "__main__":
    sys.exit(main())
