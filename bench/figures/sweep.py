"""Figure 5: the default CPU sweep split into builds, waiting, runs and the orchestrator."""

from __future__ import annotations

import itertools
import json
import time
from pathlib import Path
from statistics import median
from typing import Any

import yaml

from figures.common import (
    PROJECT,
    PYTHON,
    loadavg,
    ms,
    orchestrator,
    say,
    store_rows,
)
from orchestrator.run.machine import capabilities, host_facts

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
