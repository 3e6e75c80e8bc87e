"""Figure 2: what the orchestrator does while a measured program runs, seen from inside it."""

from __future__ import annotations

import os
import re
import threading
from pathlib import Path
from statistics import median
from typing import Any

from figures.common import (
    PROJECT,
    PYTHON,
    _rusage_s,
    experiments,
    orchestrator,
    say,
    store_rows,
    write_exe,
)
from orchestrator.run import runner

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
