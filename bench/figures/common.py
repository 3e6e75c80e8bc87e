"""What every figure of the harness shares: the project, the fake interpreter, running the
CLI, reading a results store, how busy the others kept the machine."""

from __future__ import annotations

import os
import resource
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import yaml

from orchestrator.data.store import Store
from orchestrator.run.machine import cpu_jiffies

PROJECT = Path(__file__).resolve().parent.parent.parent
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


# ---- small helpers ---------------------------------------------------------------------------


def say(text: str = "") -> None:
    print(text, flush=True)


def loadavg() -> str:
    return " ".join(f"{x:.2f}" for x in os.getloadavg())


def ms(seconds: float | None) -> str:
    return "n/a" if seconds is None else f"{seconds * 1e3:.3f} ms"


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
    """Rows of a results store, read the way export and report read it."""
    store = Store(results)
    with store.reading():
        return store.query(sql)


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
    busy0, total0 = cpu_jiffies()
    mine0 = _tree_cpu_s()
    yield
    busy1, total1 = cpu_jiffies()
    hz = os.sysconf("SC_CLK_TCK")
    others = (busy1 - busy0) - (_tree_cpu_s() - mine0) * hz
    into.append(max(others, 0.0) / max(total1 - total0, 1))
