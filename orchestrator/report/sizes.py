"""How cost grows: each target's time against the matmul's size, throughput and % of peak.

Per target (framework, build label with its arithmetic tag, device, threads) and size, three
clocks, each the smallest min over the runs that timed it: the kernels' own time
(`kernel_time`, a profiler's per-matmul min), the device timer with the launch gap kept out
(`device_time_queued`) and the host clock with sync (`with_sync`). The time a target's
throughput is computed from is the first of these that exists (its `basis`).

Throughput model, for a = M×N, b = N×M, c = M×M in f32: 2·M·N·M flop, and at least the three
matrices moved once, 4·(M·N + N·M + M·M) bytes (compulsory traffic; caches that miss move more).
% of peak is against peaks.py's entry for the device and the run's arithmetic, "peak unknown"
where it has none. The cost model t ≈ a + b·n³ is fitted per target by least squares on the
relative error (the times span decades); a size whose time is more than `HOLDS` away from the
model is where it stops holding.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import pandas as pd

from orchestrator import vocabulary
from orchestrator.report import peaks
from orchestrator.report.cells import duration
from orchestrator.report.names import column_name, threads_column

BYTES_PER_VALUE = 4  # f32
HOLDS = 0.25  # relative residual beyond which the cost model does not describe a size
KEYS = ["framework", "label", "device", "threads_key"]


def dims(shape: str) -> tuple[int, int] | None:
    """(M, N) of 'MxN'; None for anything else."""
    try:
        m, n = (int(v) for v in str(shape).split("x"))
    except ValueError:
        return None
    return (m, n) if m > 0 and n > 0 else None


def flop(shape: str) -> float | None:
    """2·M·N·M: a is M×N, b is N×M."""
    d = dims(shape)
    return None if d is None else 2.0 * d[0] * d[1] * d[0]


def bytes_moved(shape: str) -> float | None:
    """Compulsory traffic: a, b read once and c written once, 4 bytes each."""
    d = dims(shape)
    return None if d is None else float(BYTES_PER_VALUE * (2 * d[0] * d[1] + d[0] * d[0]))


def size_n(shape: str) -> float | None:
    """The side of the square matmul of the same flop count: M for a square shape."""
    d = dims(shape)
    return None if d is None else (d[0] * d[0] * d[1]) ** (1 / 3)


def arithmetic(recorded: object, peak: peaks.Peak) -> str:
    """The arithmetic a target's % of peak is held against: the one recorded for its runs
    (printed by the program or inferred from its accuracy arrays); where none is, FP32 on a
    device with one f32 arithmetic (no TF32 peak: a CPU, an Apple GPU), else '' (unknown: on an
    NVIDIA GPU cuBLAS, cubecl or XLA may pick TF32, and JAX's default does, so a JAX or burn
    run without an accuracy run is neither held against the FP32 peak nor the TF32 one)."""
    if recorded in ("fp32", "tf32"):
        return str(recorded)
    return "fp32" if peak.tf32 is None else ""


def percent_text(value: float | None, peak: peaks.Peak, arith: str) -> str:
    """% of the peak of `arith`; 'arithmetic unknown' where the device's peak depends on it."""
    if not arith and peak.fp32 is not None:
        return "arithmetic unknown"
    return percent(value, peak.flops(arith))


def size_rows(fig: pd.DataFrame) -> pd.DataFrame:
    """One row per target and shape: the three clocks (seconds or NaN), the basis, the time."""
    clocks = vocabulary.size_bases()  # (method, basis name), the preferred first
    methods = {m for m, _ in clocks}
    rows = fig[fig["method"].isin(methods) & (fig["stat"] == "min")
               & fig["shape"].map(lambda s: dims(s) is not None)]
    if "kernel" in rows:  # per matmul only, never one kernel of several
        rows = rows[rows["kernel"].isna() | (rows["kernel"].astype(object) == "")]
    if rows.empty:
        return pd.DataFrame()
    # threads tell CPU targets apart; a GPU target is one whatever its host threads
    threads = rows["threads_key"].astype("Float64")
    rows = rows.assign(threads_key=threads.where(rows["device"] == "cpu", pd.NA))
    table = rows.pivot_table(index=[*KEYS, "shape"], columns="method", values="value_s",
                             aggfunc="min", dropna=False).reset_index()
    table = table.dropna(subset=[m for m in methods if m in table], how="all")
    for method in methods:
        if method not in table:
            table[method] = np.nan
    table["n"] = table["shape"].map(size_n)
    basis = [next((name for m, name in clocks if pd.notna(r[m])), "") for _, r in
             table.iterrows()]
    table["basis"] = basis
    table["time_s"] = [r[m] for (_, r), b in zip(table.iterrows(), basis, strict=True)
                       for m, name in clocks if name == b]
    # a zero, negative or non-finite time has no throughput and no place on a log axis: the
    # report's impossible-time checks name it; the growth tables leave it out
    times = pd.to_numeric(table["time_s"], errors="coerce")
    table = table[np.isfinite(times) & (times > 0)].copy()
    # each target's recorded arithmetic ('' where none: arithmetic() decides per device)
    if "precision" in rows:
        told = rows.assign(precision=rows["precision"].astype(object).where(
            rows["precision"].isin(["fp32", "tf32"]), ""))
        first = told.groupby(KEYS, dropna=False)["precision"].agg(
            lambda s: next((v for v in s if v), "")).reset_index()
        table = table.merge(first, on=KEYS, how="left")
    else:
        table["precision"] = ""
    # the machine's facts a peak needs: the GPU board's power limit, the CPU clock recorded
    facts = [c for c in ("gpu_power_limit_w", "cpu_freq_mhz") if c in rows]
    if facts:
        first = rows.groupby(KEYS, dropna=False)[facts].agg(
            lambda s: s.dropna().iloc[0] if s.notna().any() else np.nan).reset_index()
        table = table.merge(first, on=KEYS, how="left")
    return table.sort_values([*KEYS, "n"]).reset_index(drop=True)


def target_name(row: pd.Series) -> str:
    name = column_name(str(row["framework"]), str(row["label"]))
    if row["device"] == "cpu" and pd.notna(row["threads_key"]):
        name += f", {threads_column(int(row['threads_key']))}"
    return name


def peak_for(row: pd.Series, host: dict[str, object]) -> peaks.Peak:
    threads = int(row["threads_key"]) if pd.notna(row["threads_key"]) else None
    power = row.get("gpu_power_limit_w")
    return peaks.device_peak(str(row["device"]), host, threads,
                             float(power) if power is not None and pd.notna(power) else None,
                             row.get("cpu_freq_mhz") if pd.notna(row.get("cpu_freq_mhz"))
                             else None)


def percent(value: float | None, peak: float | None) -> str:
    if value is None or peak is None:
        return "peak unknown"
    return f"{100 * value / peak:.1f}%"


def tflops(shape: str, seconds: float) -> float | None:
    work = flop(shape)
    return None if work is None or not seconds > 0 else work / seconds


# ---- the cost model --------------------------------------------------------------------------


@dataclass(frozen=True)
class Fit:
    """t ≈ a + b·n³, the relative residual per size, and where the model holds."""

    a: float
    b: float
    residuals: dict[float, float]  # n -> (model - measured) / measured

    def predict(self, n: float) -> float:
        return self.a + self.b * n ** 3

    def outside(self) -> list[float]:
        return [n for n, r in self.residuals.items() if abs(r) > HOLDS]


def fit_cost(n: list[float], t: list[float]) -> Fit | None:
    """Least squares of (a + b·n³ - t) / t with a, b ≥ 0; None with fewer than 3 sizes."""
    if len(n) < 3 or any(not v > 0 for v in t):
        return None
    x, y = np.asarray(n, dtype=float), np.asarray(t, dtype=float)
    design = np.column_stack([1 / y, x ** 3 / y])
    (a, b), *_ = np.linalg.lstsq(design, np.ones_like(y), rcond=None)
    if a < 0:  # no negative floor: a pure n³ law, fitted the same way
        a, b = 0.0, float(np.sum(x ** 3 / y) / np.sum((x ** 3 / y) ** 2))
    if b < 0:  # no growth at all: a constant
        a, b = float(len(y) / np.sum(1 / y)), 0.0
    residuals = {float(v): float((a + b * v ** 3 - w) / w) for v, w in zip(x, y, strict=True)}
    return Fit(float(a), float(b), residuals)


def crossing(n: list[float], values: list[float], level: float = 1.0) -> float | None:
    """The first size where `values` crosses `level`, interpolated in log-log; None if never."""
    for i in range(1, len(n)):
        lo, hi = values[i - 1], values[i]
        if not (lo > 0 and hi > 0) or (lo - level) * (hi - level) > 0 or lo == hi:
            continue
        f = (math.log(level) - math.log(lo)) / (math.log(hi) - math.log(lo))
        return float(math.exp(math.log(n[i - 1]) + f * (math.log(n[i]) - math.log(n[i - 1]))))
    return None


def fit_text(name: str, shapes: list[str], fit: Fit | None) -> str:
    if fit is None:
        return (f"{name}: no cost model: it needs 3 sizes or more, this data has "
                f"{len(shapes)} ({', '.join(shapes)}).")
    off = fit.outside()
    words = ", ".join(f"{v:.0f} ({100 * fit.residuals[v]:+.0f}%)" for v in off)
    where = (f"it holds within {HOLDS:.0%} at every size" if not off else
             f"it stops holding at {words}")
    return (f"{name}: t ≈ {duration(fit.a)} + {fit.b:.3e} s·n³ "
            f"(= {2 / fit.b / 1e12:.2f} TFLOP/s asymptotically); {where}."
            if fit.b > 0 else f"{name}: t ≈ {duration(fit.a)}, no growth with n; {where}.")
