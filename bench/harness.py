"""The orchestrator's own cost, measured side by side with its peers (issue 5).

    .venv/bin/python bench/harness.py [--quick] [--json OUT.json] [--only FIGURE ...]

Seven figures, each measured in this one run (BENCHMARKS.md explains them and keeps the latest):

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
6. Growth: plan, bookkeeping per run, export, report and compare (time, peak memory) against
   the number of runs in a store: 50, 500, 5000 (--quick: 50, 500), each against its goal.
7. Limits: parse, report and compare of captured logs at a quarter, half and all of the 16 MiB
   input cap (--quick: a quarter).

The machine may be shared and noisy: figure 1 runs in interleaved rounds, waits (bounded,
--wait-quiet) for other processes to calm down before each, measures how much of the machine
they used during it, and summarises the rounds where that stayed under a quarter. The load
average is printed beside the figures. Nothing here asserts a time; the tests never do either.
hyperfine: `apt-get update && apt-get install -y hyperfine` (Debian, Ubuntu), `brew install
hyperfine` (macOS); without it the other figures are still printed.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from figures.builds import figure_builds
from figures.common import loadavg, say
from figures.growth import figure_growth
from figures.interference import figure_interference
from figures.limits import figure_limits
from figures.overhead import figure_overhead
from figures.parsing import figure_parse
from figures.sweep import figure_sweep

from orchestrator.run.machine import cpu_model

# ---- main ---------------------------------------------------------------------------------------


def machine() -> dict[str, Any]:
    hyperfine = shutil.which("hyperfine")
    version = subprocess.run([hyperfine, "--version"], capture_output=True, text=True,
                             check=False).stdout.strip() if hyperfine else "not installed"
    return {"date": time.strftime("%Y-%m-%d %H:%M %Z"), "nproc": os.cpu_count(),
            "cpu": cpu_model(), "os": f"{platform.system()} {platform.release()}",
            "python": platform.python_version(), "hyperfine": version, "load": loadavg()}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true",
                        help="fewer rounds, no touched rebuild, a small sweep (a minute or two)")
    parser.add_argument("--json", type=Path, help="also write every figure here")
    parser.add_argument("--wait-quiet", type=float, default=60, metavar="S",
                        help="before each round of figure 1, wait up to S s for others to use "
                             "under a quarter of the machine (default 60)")
    parser.add_argument("--runs", nargs="+", type=int, metavar="N",
                        help="figure 6 at these store sizes (default 50 500 5000)")
    parser.add_argument("--limits", action="store_true",
                        help="figure 6 also at what one dataset may hold, and past it")
    parser.add_argument("--baseline", type=Path, metavar="TREE",
                        help="figure 6 also by another checkout's orchestrator (TREE, with its "
                             ".venv) on the same stores: before and after side by side")
    parser.add_argument("--only", nargs="+", choices=["overhead", "interference", "builds",
                                                      "parse", "sweep", "growth", "limits"],
                        help="these figures only")
    args = parser.parse_args()
    facts = machine()
    say(f"# orchestrator benchmarks, {facts['date']}")
    say(f"{facts['nproc']} cores ({facts['cpu']}), {facts['os']}, Python {facts['python']}, "
        f"{facts['hyperfine']}; load {facts['load']}")
    wanted = set(args.only or ["overhead", "interference", "builds", "parse", "sweep",
                               "growth", "limits"])
    results: dict[str, Any] = {"machine": facts, "quick": args.quick}
    with tempfile.TemporaryDirectory(prefix="orchestrator-bench-") as name:
        tmp = Path(name)
        figures: list[tuple[str, Callable[[], Any]]] = [
            ("overhead", lambda: figure_overhead(args.quick, tmp, args.wait_quiet)),
            ("interference", lambda: figure_interference(args.quick, tmp)),
            ("builds", lambda: figure_builds(args.quick, tmp)),
            ("sweep", lambda: figure_sweep(args.quick, tmp)),
            ("parse", lambda: figure_parse(args.quick, results.get("sweep"))),
            ("growth", lambda: figure_growth(args.quick, tmp, tuple(args.runs or ()),
                                             args.baseline, args.limits)),
            ("limits", lambda: figure_limits(args.quick, tmp)),
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
