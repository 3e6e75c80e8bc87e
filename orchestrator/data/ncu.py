"""Read Nsight Compute's CSV (`ncu --csv --metrics gpu__time_duration.sum`) into kernel times.

A profile run (role `profile`) starts its program under ncu with `--profile-from-start off`
and the program's `--profile-window`, so the CSV holds the kernels of one block of --reps
matmuls. This module turns that CSV into `kernel_time` figures with profiler `ncu`: per kernel
(name, grid, block) its launches and min / median duration (stats `kernel_min`,
`kernel_median`, column `kernel` = `NAME [grid (x, y, z) block (x, y, z)]`), and, where the
launches divide evenly into --reps matmuls, the time of one matmul (the sum of its kernels,
grouped by launch order) as stats `min` / `median` with `kernel` ''.

It reads what ncu really writes: `==PROF==` / `==WARNING==` / `==ERROR==` lines around the
CSV, the program's own stdout mixed in when ncu wrote to stdout, values with thousands
separators (`"57,760"`) and the duration in ns, us, ms or s. Anything else (no file, no CSV
header, a cut row, a unit it does not know, no kernel at all) is a `NcuError` with the reason,
never an exception of another kind: the caller records a failed profile run.
"""

from __future__ import annotations

import csv
import math
import re
import statistics
from dataclasses import dataclass

from orchestrator.records import CacheState, Figure

ARTIFACT = "ncu.csv"  # the profile run's stored CSV (run/profile.py writes it)
METRIC = "gpu__time_duration.sum"
METHOD_TEXT = "kernel time (ncu)"  # the L2-flushed variant's: 'kernel time (ncu_flushed)'
PROFILER = "ncu"  # the dataset's `profiler` of a warm-L2 profile run (vocabulary.PROFILERS)
# ncu's unit names for a duration, both its short and its long spellings
_UNITS = {"ns": 1e-9, "nsecond": 1e-9, "us": 1e-6, "usecond": 1e-6, "µs": 1e-6, "ms": 1e-3,
          "msecond": 1e-3, "s": 1.0, "second": 1.0}
# the figures one profile run may add: two per distinct kernel (name, grid, block) plus two per
# matmul; one block of --reps matmuls runs a few kernels, so a CSV naming more is not that
MAX_KERNELS = 256
# launches one matmul may make (cuBLAS: one or two, a split-K pair; XLA, cubecl: a few): a CSV
# with more per matmul of the window is refused as it is read, so a million launches inside
# the size cap never become a million objects (a report of one died of memory)
MAX_LAUNCHES_PER_MATMUL = 16
# a kernel name (a C++ template instance) is a few KiB at most; csv's own limit is 128 KiB
MAX_FIELD = 64 * 1024
_NEEDED = ("ID", "Kernel Name", "Block Size", "Grid Size", "Metric Name", "Metric Unit",
           "Metric Value")


# ASCII decimals only: int() and float() would also take '١', '５', '1_000', 'nan', '-1'
_ID = re.compile(r"[0-9]{1,12}")
_VALUE = re.compile(r"(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][-+]?[0-9]{1,3})?")


class NcuError(ValueError):
    """ncu's output cannot give kernel times; the message says why (one line)."""


@dataclass(frozen=True)
class Launch:
    """One kernel launch ncu profiled."""

    index: int  # ncu's ID: launch order in the window
    name: str
    grid: str  # '(8, 16, 1)', as ncu writes it
    block: str
    seconds: float

    @property
    def kernel(self) -> str:
        """The dataset's `kernel`: the name with its launch shape."""
        return f"{self.name} [grid {self.grid} block {self.block}]"


@dataclass(frozen=True)
class Where:
    """What the figures belong to: the profiled run's program, label, shape and op."""

    framework: str
    label: str
    device: str
    shape: str
    op: str = "matmul"
    profiler: str = PROFILER  # 'ncu' (L2 warm) or 'ncu_flushed' (vocabulary.PROFILERS)


def read_launches(text: str, reps: int | None = None) -> list[Launch]:
    """Every launch of the duration metric in ncu's CSV output, in launch order; with `reps`
    (the window's matmuls), refused past MAX_LAUNCHES_PER_MATMUL each, as soon as it is."""
    cap = MAX_LAUNCHES_PER_MATMUL * reps if reps else None
    lines = text.splitlines()
    start = next((i for i, line in enumerate(lines) if line.startswith('"ID",')), None)
    if start is None:
        errors = [line for line in lines if line.startswith("==ERROR==")]
        raise NcuError(errors[0] if errors else
                       f"no CSV header in ncu's output ({len(lines)} lines)")
    header = _row(lines[start], start + 1)
    missing = [name for name in _NEEDED if name not in header]
    if missing:
        raise NcuError(f"ncu's CSV header (line {start + 1}) lacks {', '.join(missing)}")
    col = {name: header.index(name) for name in _NEEDED}
    launches: list[Launch] = []
    kernels: set[str] = set()
    for number, line in enumerate(lines[start + 1:], start + 2):
        if not line.startswith('"'):  # ==PROF== lines, the program's stdout
            continue
        row = _row(line, number)
        if len(row) != len(header):
            raise NcuError(f"ncu's CSV line {number} has {len(row)} of {len(header)} fields "
                           "(cut short?)")
        if row[col["Metric Name"]] != METRIC:
            continue
        launch = Launch(_int(row[col["ID"]], number), row[col["Kernel Name"]],
                        row[col["Grid Size"]], row[col["Block Size"]],
                        _seconds(row[col["Metric Value"]], row[col["Metric Unit"]], number))
        launches.append(launch)
        kernels.add(launch.kernel)
        if len(kernels) > MAX_KERNELS:
            raise NcuError(f"ncu's CSV names more than {MAX_KERNELS} distinct kernels (line "
                           f"{number}), the most one profile run may add (not one block of "
                           "matmuls?)")
        if cap is not None and len(launches) > cap:
            raise NcuError(f"ncu's CSV holds more than {cap} launches (line {number}): "
                           f"{MAX_LAUNCHES_PER_MATMUL} per matmul of the window's {reps} "
                           "(not one block of matmuls?)")
    if not launches:
        raise NcuError(f"ncu profiled no kernel ({METRIC}): did the program mark its window "
                       "(--profile-window)?")
    return sorted(launches, key=lambda launch: launch.index)


def _row(line: str, number: int) -> list[str]:
    """One CSV line's fields; a field past MAX_FIELD (or a line csv cannot split) is an
    NcuError naming the line, not csv's own error."""
    if len(line) > MAX_FIELD * 16:
        raise NcuError(f"ncu's CSV line {number} is {len(line)} characters long (not read)")
    try:
        row = next(csv.reader([line]))
    except csv.Error as exc:
        raise NcuError(f"ncu's CSV line {number} cannot be read: {exc}") from None
    longest = max((len(field) for field in row), default=0)
    if longest > MAX_FIELD:
        raise NcuError(f"ncu's CSV line {number} has a field of {longest} characters, over "
                       f"the {MAX_FIELD} read (a kernel name is a few KiB)")
    return row


def _int(text: str, number: int) -> int:
    if _ID.fullmatch(text.strip()) is None:
        raise NcuError(f"ncu's CSV line {number}: ID {text!r} is not a number")
    return int(text)


def _seconds(value: str, unit: str, number: int) -> float:
    if unit not in _UNITS:
        raise NcuError(f"ncu's CSV line {number}: unknown duration unit {unit!r}")
    plain = value.replace(",", "").strip()
    seconds = float(plain) * _UNITS[unit] if _VALUE.fullmatch(plain) else float("nan")
    if not math.isfinite(seconds):
        raise NcuError(f"ncu's CSV line {number}: duration {value!r} is not a number")
    return seconds


def figures(launches: list[Launch], reps: int, where: Where) -> list[Figure]:
    """Per kernel: stats kernel_min / kernel_median (runs = launches); per matmul (the sum of
    each run of launches/reps kernels, in launch order) min / median, when that divides."""
    found: list[Figure] = []
    kernels: dict[str, list[float]] = {}
    for launch in launches:
        kernels.setdefault(launch.kernel, []).append(launch.seconds)
    for kernel, seconds in kernels.items():
        found += _figures(where, (("kernel_min", min(seconds)),
                                  ("kernel_median", statistics.median(seconds))),
                          len(seconds), kernel)
    sums = per_matmul(launches, reps)
    if sums:
        found += _figures(where, (("min", min(sums)), ("median", statistics.median(sums))),
                          reps, "")
    return found


def per_matmul(launches: list[Launch], reps: int) -> list[float]:
    """The kernel time of each matmul: the sum of each run of launches/reps kernels, in launch
    order; [] where the launches do not divide into `reps` matmuls. The raw samples behind
    ncu's per-matmul min and median (dataset.load gives them to the report's intervals)."""
    per = len(launches) // reps if reps > 0 else 0
    if not per or per * reps != len(launches):
        return []
    return [sum(launch.seconds for launch in launches[i:i + per])
            for i in range(0, len(launches), per)]


def samples(data: bytes | None, reps: int) -> list[float]:
    """`per_matmul` of a stored `ncu.csv` artifact; [] where there is none or it cannot be read
    (the run's own figures already say so)."""
    if not data:
        return []
    try:
        return per_matmul(read_launches(data.decode("utf-8", "replace"), reps), reps)
    except NcuError:
        return []


def _figures(where: Where, stats: tuple[tuple[str, float], ...], runs: int,
             kernel: str) -> list[Figure]:
    return [Figure(framework=where.framework, label=where.label, device=where.device,
                   shape=where.shape, op=where.op, method="kernel_time",
                   method_text=f"kernel time ({where.profiler})", stat=stat, value=value,
                   runs=runs, threads=None, cache=CacheState.NONE, process=None, warmup=None,
                   iteration=None, section=None, line_no=0, profiler=where.profiler,
                   kernel=kernel) for stat, value in stats]


def read(data: bytes | None, reps: int, where: Where) -> list[Figure]:
    """The figures of a stored `ncu.csv` artifact; NcuError when there is none to read."""
    if data is None:
        raise NcuError("ncu wrote no CSV (no ncu.csv)")
    text = data.decode("utf-8", "replace")
    if not text.strip():
        raise NcuError("ncu's CSV is empty")
    return figures(read_launches(text, reps), reps, where)
