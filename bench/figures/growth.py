"""Figure 6: the orchestrator's own growth with the number of runs in a store (issue 25).

For N runs (50, 500, 5000; --quick: 50, 500): an experiments file of N runs (torch cuda,
torch cpu and burn cuda targets over N/3 sizes), its `plan`; a store of N runs written
through the store's own API (Store.begin_sweep, Store.record_run with parse_record, as a
sweep writes them) from real H200 runs (docs/results/h200-2026-12-01: their stdout with samples, GPU
state and cache record, the shape in each line set to the run's); the bookkeeping per run (parse
and record one more run into a store that holds N, durable as in a sweep); and `export`,
`report` and `compare` (the store against itself) of that store, each a fresh process, with its
wall and CPU time and peak memory (ru_maxrss from wait4). Each figure is held against a goal.
Unless --quick, the largest N again as few targets of many processes each (MANY_PROCESSES):
the shape of a long study, where each figure's interval is the two-level bootstrap.

`--limits`: the same at what one dataset may hold (dataset.READ_FIGURES, READ_SAMPLES): the
most runs under the figure limit, a store of sample lines ten times as long under the sample
limit, and one run past the figure limit, which every reader refuses (its time to refuse).
`--baseline TREE`: each command also run by another checkout's orchestrator (TREE, with its
own .venv) on the same store and printed beside, before and after in one run.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import time
from pathlib import Path
from typing import Any

import yaml

from figures.common import PROJECT, PYTHON, orchestrator, say, store_rows
from orchestrator.data.dataset import READ_FIGURES, READ_SAMPLES
from orchestrator.data.store import Store
from orchestrator.experiments import config
from orchestrator.experiments.plan import expand
from orchestrator.records import RunRecord
from orchestrator.run.sweep import parse_record

SOURCE = PROJECT / "docs" / "results" / "h200-2026-12-01"
# (what, goal in CPU seconds at 5000 runs, on the project's 2-core box); memory goal for every
# step. "A few seconds" for a report is out of reach while a report draws a plot and writes a
# table per target (5000 runs of N/3 sizes: 1,667 targets); linear and under 30 s is the goal.
GOALS = {"plan": 2.0, "export": 10.0, "report": 30.0, "compare": 30.0}
# the other shape of a large store: 3 targets x 10 sizes x 167 processes = 5010 runs (the first
# 5000 kept), where every figure has the processes for the two-level bootstrap and the drift
# check has 5000 points; it found both quadratic or slow (BENCHMARKS.md, 2026-12-04)
MANY_PROCESSES = 167
BOOKKEEPING_GOAL_MS = 20.0  # parse + one durable transaction, whatever N is
MEMORY_GOAL_MIB = 1024.0
TARGETS = [{"program": "torch", "device": "cuda"}, {"program": "torch", "device": "cpu"},
           {"program": "burn", "build": "cuda", "device": "cuda"}]


def _experiments(path: Path, runs: int, processes: int = 1) -> Path:
    """N runs as the targets over N/3 sizes, one process each; or, with `processes`, as
    that many processes of each target at as few sizes as make N (a long study's shape)."""
    per_size = len(TARGETS) * processes
    sizes = runs // per_size if processes == 1 else -(-runs // per_size)
    growth = {"mode": "mm", "targets": TARGETS,
              "shapes": [[64 + 8 * i] * 2 for i in range(max(1, sizes))]}
    if processes > 1:
        growth["processes"] = processes
    path.write_text(yaml.safe_dump({
        "version": 1, "defaults": {"reps": 20},
        "builds": {"cuda": {"crate": "exec-gpu", "features": ["cuda"], "requires": ["cuda"]}},
        "experiments": {"growth": growth}}))
    return path


def _templates() -> dict[str, dict[str, Any]]:
    """A real run of each target kind from the H200 store: stdout, state, cache record."""
    rows = store_rows(SOURCE, "SELECT definition_json, stdout, stderr, state_json, cache_json, "
                              "env_json, argv_json FROM runs WHERE experiment IN "
                              "('methods', 'cpu') AND status='ok' AND role='measure'")
    found: dict[str, dict[str, Any]] = {}
    for row in rows:
        run = json.loads(row["definition_json"])
        found.setdefault(f"{run['program']} {run['device']}", row)
    return found


def _scaled(stdout: bytes, scale: int) -> bytes:
    """The run's output with each `# samples` line `scale` times as long (and its summary line
    saying so): the same store in figures, `scale` times the sample values."""
    if scale == 1:
        return stdout
    lines = []
    for line in stdout.decode().splitlines():
        if line.startswith("# samples") and ": " in line:
            head, values = line.split(": ", 1)
            line = f"{head}: {' '.join(values.split() * scale)}"
        lines.append(re.sub(r", (\d+) runs: ", lambda m: f", {int(m[1]) * scale} runs: ", line))
    return ("\n".join(lines) + "\n").encode()


def _record(planned: Any, template: dict[str, Any], scale: int = 1) -> RunRecord:
    run = planned.run
    shape = f"{run.shape[0]}x{run.shape[1]}"
    stdout = _scaled(bytes(template["stdout"]), scale).replace(b"1024x1024", shape.encode())
    now = time.time()
    return RunRecord(run=run, started_at=now, ended_at=now + 2.0, wall_s=2.0, returncode=0,
                     load_before={"load1": 0.1}, load_after={"load1": 0.2},
                     argv=json.loads(template["argv_json"] or "[]"),
                     env=json.loads(template["env_json"] or "{}"), cwd=str(PROJECT),
                     cache=json.loads(template["cache_json"] or "null"),
                     state=json.loads(template["state_json"] or "null"), stdout=stdout,
                     stderr=bytes(template["stderr"] or b""))


def _fill(results: Path, exp: Path, runs: int, scale: int = 1) -> tuple[float, float]:
    """A store of `runs` runs; (seconds to write them, ms of bookkeeping per run at the end)."""
    caps: dict[str, str | None] = dict.fromkeys(["cuda", "linux", "x86_64", "torch"])
    cfg = config.load(exp)
    planned = expand(cfg, caps, 16)[:runs]
    templates = _templates()
    host = store_rows(SOURCE, "SELECT host_json FROM sweeps LIMIT 1")[0]["host_json"]
    start = time.perf_counter()
    store = Store(results, durable=False)  # the filling is not what is measured
    with store.writing():
        sweep, _ = store.begin_sweep(exp, json.loads(host), [], True,
                                     planned=[p.run.run_id for p in planned])
        for p in planned[:-20]:
            rec = _record(p, templates[f"{p.run.program} {p.run.device}"], scale)
            store.record_run(sweep, rec, parse_record(rec))
    filled = time.perf_counter() - start
    last = planned[-20:]
    durable = Store(results)  # as a sweep writes: one durable transaction per run
    with durable.writing():
        start = time.perf_counter()
        for p in last:
            rec = _record(p, templates[f"{p.run.program} {p.run.device}"], scale)
            durable.record_run(sweep, rec, parse_record(rec))
        per_run = (time.perf_counter() - start) / max(len(last), 1) * 1e3
        durable.end_sweep(sweep, "complete")
    return filled, per_run


def cli(*args: str, tree: Path = PROJECT) -> tuple[float, float, int, float]:
    """(wall seconds, peak MiB, exit code, CPU seconds) of `python -m orchestrator ARGS`, a
    fresh process (`tree`: another checkout's, with its .venv). The CPU time (user + sys)
    carries over from a shared, loaded machine; the wall time does not."""
    python = PYTHON if tree == PROJECT else str(tree / ".venv" / "bin" / "python")
    start = time.perf_counter()
    proc = subprocess.Popen([python, "-m", "orchestrator", *args], cwd=tree,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    _pid, status, usage = os.wait4(proc.pid, 0)
    proc.returncode = os.waitstatus_to_exitcode(status)
    return (time.perf_counter() - start, usage.ru_maxrss / 1024, proc.returncode,
            usage.ru_utime + usage.ru_stime)


def _commands(folder: Path, exp: Path, tree: Path, tag: str) -> dict[str, Any]:
    """plan, export, report and compare (the store against itself) by `tree`'s orchestrator,
    their outputs in folders of their own (`tag`)."""
    results = folder / "results"
    return {"plan": cli("plan", str(exp), "--assume", "cuda", tree=tree),
            "export": cli("export", str(results), "--csv", str(folder / f"d{tag}.csv"),
                          tree=tree),
            "report": cli("report", str(results), "--out", str(folder / f"report{tag}"),
                          tree=tree),
            "compare": cli("compare", str(results), str(results), "--out",
                           str(folder / f"compare{tag}"), tree=tree)}


def _one(tmp: Path, runs: int, scale: int = 1, baseline: Path | None = None,
         name: str = "", processes: int = 1) -> dict[str, Any]:
    folder = tmp / f"growth-{name or runs}"
    folder.mkdir()
    exp = _experiments(folder / "growth.yaml", runs, processes)
    out: dict[str, Any] = {"runs": runs}
    filled, per_run = _fill(folder / "results", exp, runs, scale)
    out["fill_s"], out["bookkeeping_ms"] = filled, per_run
    out.update(_commands(folder, exp, PROJECT, ""))
    if baseline is not None:
        out["before"] = _commands(folder, exp, baseline, "-before")
    out["figures"], out["samples"] = (
        store_rows(folder / "results", f"SELECT count(*) n FROM {t}")[0]["n"]
        for t in ("figures", "samples"))
    return out


def _cells(row: dict[str, Any]) -> str:
    before = row.get("before") or {}
    return "; ".join(
        f"{k} CPU {row[k][3]:.2f} s (wall {row[k][0]:.2f} s) {row[k][1]:.0f} MiB "
        f"(exit {row[k][2]})" + (f" [before: CPU {before[k][3]:.2f} s, {before[k][1]:.0f} MiB"
                                 f", exit {before[k][2]}]" if k in before else "")
        for k in GOALS)


def figure_growth(quick: bool, tmp: Path, sizes: tuple[int, ...] | None = None,
                  baseline: Path | None = None, limits: bool = False) -> list[dict[str, Any]]:
    say("## 6. Growth with the store: plan, bookkeeping, export, report, compare against runs")
    say(f"goals at 5000 runs: {', '.join(f'{k} < {v:g} s' for k, v in GOALS.items())}; "
        f"bookkeeping < {BOOKKEEPING_GOAL_MS:g} ms a run; peak memory < {MEMORY_GOAL_MIB:g} MiB"
        + (f"; [before]: the same by {baseline}" if baseline else ""))
    rows = []
    for runs in sizes or ((50, 500) if quick else (50, 500, 5000)):
        row = _one(tmp, runs, baseline=baseline)
        rows.append(row)
        say(f"{runs:>5} runs ({row['figures']} figures, {row['samples']} sample values): "
            f"filled in {row['fill_s']:.1f} s; bookkeeping {row['bookkeeping_ms']:.1f} ms/run; "
            + _cells(row))
    judged = [rows[-1]]
    if not quick:  # the same runs as few targets of many processes: per-figure statistics
        many = _one(tmp, rows[-1]["runs"], baseline=baseline, name="processes",
                    processes=MANY_PROCESSES)
        many["processes"] = MANY_PROCESSES
        say(f"{many['runs']:>5} runs as {MANY_PROCESSES} processes a target "
            f"({many['figures']} figures, {many['samples']} sample values): " + _cells(many))
        judged.append(many)
    for row in judged:
        _verdicts(row)
    if len(rows) > 1:
        a, b = rows[-2], rows[-1]
        scale = b["runs"] / a["runs"]
        growth = ", ".join(f"{k} ×{b[k][3] / max(a[k][3], 1e-9):.1f}" for k in GOALS)
        say(f"  {a['runs']} → {b['runs']} runs (×{scale:g}), CPU: {growth} (linear: ×{scale:g}; "
            "start-up makes small stores look flatter)")
    rows += judged[1:]  # after the ×10 line, which compares the N/3 stores only
    if limits:
        rows += _at_the_limits(tmp)
    return [replace_tuples(r) for r in rows]


def _verdicts(row: dict[str, Any]) -> None:
    shape = f", {row['processes']} processes a target" if "processes" in row else ""
    for key, goal in GOALS.items():
        wall, mib, _, cpu = row[key]
        met = "met" if cpu < goal and mib < MEMORY_GOAL_MIB else "NOT met"
        say(f"  {key} at {row['runs']} runs{shape}: CPU {cpu:.2f} s (wall {wall:.2f} s) / "
            f"{mib:.0f} MiB against {goal:g} s / {MEMORY_GOAL_MIB:g} MiB: {met}")


# a growth store's run holds ~16.3 figures and ~113 sample values (~1,133 with sample lines ten
# times as long): the most runs under each limit, and one store past the figure limit
LIMIT_STORES = (("figure limit", 6100, 1), ("sample limit", 882, 10), ("past the limit", 6200, 1))


def _at_the_limits(tmp: Path) -> list[dict[str, Any]]:
    say(f"### at what one dataset may hold: {READ_FIGURES} figures, {READ_SAMPLES} sample values")
    rows = []
    for name, runs, scale in LIMIT_STORES:
        row = _one(tmp, runs, scale, name=name.replace(" ", "-"))
        row["limit"] = name
        rows.append(row)
        say(f"  {name}: {runs} runs ({row['figures']} figures, {row['samples']} sample values"
            f"{', sample lines x' + str(scale) if scale > 1 else ''}): " + _cells(row))
        if any(row[k][2] for k in GOALS if k != "plan"):  # refused: what the user is told
            row["refusal"] = _refusal(tmp / f"growth-{name.replace(' ', '-')}" / "results")
            say(f"    report says: {row['refusal']}")
    return rows


def _refusal(results: Path) -> str:
    """The last line `report` prints of a store it refuses (what a user reads)."""
    _wall, code, output = orchestrator("report", str(results))
    lines = [line for line in output.splitlines() if line.strip()]
    return f"(exit {code}) {lines[-1] if lines else ''}"


def replace_tuples(row: dict[str, Any]) -> dict[str, Any]:
    """JSON-friendly: (wall, MiB, exit) as a dict."""
    def one(value: Any) -> Any:
        if isinstance(value, tuple):
            return {"wall_s": value[0], "peak_mib": value[1], "exit": value[2], "cpu_s": value[3]}
        return {k: one(v) for k, v in value.items()} if isinstance(value, dict) else value
    return {k: one(v) for k, v in row.items()}
