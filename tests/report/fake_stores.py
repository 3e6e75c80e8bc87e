"""Results stores built here from a torch cpu program's printed lines (docs/LINES.md), one run
per process: the statistics' edge cases without running a program. Each process's samples are
given; its summary line is made from them as the program prints it."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from orchestrator.data.durations import format_duration
from orchestrator.data.store import Store
from orchestrator.records import RunDef, RunRecord
from orchestrator.run.sweep import parse_record

Process = dict[str, np.ndarray | float]  # method words -> samples (or one value) of a process


def lines(process: Process, threads: int = 1) -> str:
    out = [f"torch 2.15.0, threads {threads}"]
    for method, values in process.items():
        arr = np.atleast_1d(np.asarray(values, dtype=float))
        out.append(f"cpu 256x256 matmul {method}, {max(len(arr), 20)} runs: min "
                   f"{format_duration(arr.min())} median {format_duration(np.median(arr))}")
        if arr.size > 1:
            out.append(f"# samples cpu 256x256 matmul {method}: "
                       + " ".join(repr(float(v)) for v in arr))
    return "\n".join(out) + "\n"


def store(folder: Path, processes: list[Process], experiment: str = "cpu",
          env: tuple[tuple[str, str], ...] = (), host: dict[str, Any] | None = None) -> Path:
    """One sweep of `len(processes)` processes of one torch cpu target (`host`: its facts)."""
    folder.parent.mkdir(parents=True, exist_ok=True)
    config = folder.parent / f"{folder.name}.yaml"
    config.write_text("version: 1\n", encoding="utf-8")
    s = Store(folder)
    with s.writing():
        sweep, _ = s.begin_sweep(config, host or {"cores_usable": 2}, [], new=True)
        for i, process in enumerate(processes, 1):
            run = RunDef(experiment=experiment, program="torch", device="cpu", mode="mm",
                         shape=(256, 256), reps=20, threads=1, process=i,
                         processes=len(processes), env=env)
            rec = RunRecord(run=run, stdout=lines(process).encode(),
                            load_before={"load1": 0.5}, load_after={"load1": 0.5})
            s.record_run(sweep, rec, parse_record(rec))
        s.end_sweep(sweep, "complete")
    return folder


def spread(centre: float, n: int, rng: np.random.Generator, within: float = 0.01) -> np.ndarray:
    """n samples around `centre` with a relative spread `within`."""
    return centre * np.exp(within * rng.standard_normal(n))
