"""The "How cost grows" section's tables and findings, from sizes.size_rows.

One table per target (size, the three clocks, the basis, TFLOP/s, % of peak, bytes moved and
the bandwidth that implies), the peaks table the percentages are held against, and the
findings: where the launch gap (with sync - kernel, or - queued device time) equals the kernel
time, where burn / PyTorch of the same arithmetic crosses 1, and each target's cost model.
"""

from __future__ import annotations

import re
from typing import Any

import pandas as pd

from orchestrator import programs, vocabulary
from orchestrator.report import peaks, sizes
from orchestrator.report.cells import duration
from orchestrator.report.findings import Kind
from orchestrator.report.names import threads_column
from orchestrator.report.tables import Table, empty


def _slug(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "_", text.lower()).strip("_")


def _targets(rows: pd.DataFrame) -> list[pd.DataFrame]:
    return [group for _, group in rows.groupby(sizes.KEYS, dropna=False, sort=False)]


def _number(value: float | None, scale: float, digits: int = 3) -> str:
    return "" if value is None else f"{value / scale:.{digits}g}"


def target_table(group: pd.DataFrame, host: dict[str, Any]) -> Table:
    first = group.iloc[0]
    name = sizes.target_name(first)
    peak = sizes.peak_for(first, host)
    arith = sizes.arithmetic(first.get("precision", ""), peak)
    out = []
    for _, r in group.iterrows():
        rate = sizes.tflops(r["shape"], r["time_s"])
        moved = sizes.bytes_moved(r["shape"])
        out.append({
            "size": r["shape"], "with sync": duration(r["with_sync"]),
            "device time queued": duration(r["device_time_queued"]),
            "kernel time": duration(r["kernel_time"]), "basis": r["basis"],
            "TFLOP/s": _number(rate, 1e12),
            "% of peak": sizes.percent_text(rate, peak, arith),
            "bytes moved (MB)": _number(moved, 1e6),
            "GB/s at that traffic": _number(None if moved is None else moved / r["time_s"], 1e9),
        })
    notes = [f"Peak: {peak.device}: {peak.source}."]
    return Table(f"sizes_{_slug(name)}", f"{name}: time and throughput against size",
                 pd.DataFrame(out), notes=notes)


def peaks_table(rows: pd.DataFrame, host: dict[str, Any]) -> Table:
    """The peaks the section's percentages are held against, each with its source."""
    seen: dict[str, peaks.Peak] = {}
    for group in _targets(rows):
        peak = sizes.peak_for(group.iloc[0], host)
        seen.setdefault(peak.device, peak)
    out = [{"device": p.device,
            "FP32 TFLOP/s": _number(p.fp32, 1e12, 4) or "peak unknown",
            "TF32 dense TFLOP/s": _number(p.tf32, 1e12, 4) or "—",
            "memory GB/s": _number(p.bandwidth, 1e9, 4) or "unknown",
            "source": p.source} for p in seen.values()]
    return Table("peaks", "The peaks held against (orchestrator/report/peaks.py)",
                 pd.DataFrame(out))


def size_tables(rows: pd.DataFrame, host: dict[str, Any]) -> list[Table]:
    if rows.empty:
        return [empty("sizes", "Time against size", "no matmul timing at any size in this data "
                      "(with sync, device time queued or kernel time, min)")]
    return [*(target_table(g, host) for g in _targets(rows)), peaks_table(rows, host)]


def with_peaks(fig: pd.DataFrame, host: dict[str, Any]) -> pd.DataFrame:
    """sizes.size_rows plus each target's peak (FLOP/s of its arithmetic, bandwidth, name)."""
    rows = sizes.size_rows(fig)
    if rows.empty:
        return rows
    found = [sizes.peak_for(r, host) for _, r in rows.iterrows()]
    arith = [sizes.arithmetic(told, p) for p, told in zip(found, rows["precision"], strict=True)]
    return rows.assign(
        arithmetic=arith,
        peak_flops=[p.flops(a) for p, a in zip(found, arith, strict=True)],
        peak_known=[p.fp32 is not None for p in found],
        peak_fp32=[p.fp32 for p in found],
        peak_bw=[p.bandwidth for p in found], peak_name=[p.device for p in found])


def summary_table(rows: pd.DataFrame) -> Table:
    """Every target and size in one table (`report A B` joins it on target and size)."""
    if rows.empty:
        return empty("sizes", "How cost grows", "no matmul timing at any size in this data")
    out = []
    for _, r in rows.iterrows():
        rate = sizes.tflops(r["shape"], r["time_s"])
        best = r["peak_flops"] if pd.notna(r["peak_flops"]) else None
        unknown = not r["arithmetic"] and r["peak_known"]
        out.append({"target": sizes.target_name(r), "size": r["shape"],
                    "time": duration(r["time_s"]), "basis": r["basis"],
                    "TFLOP/s": _number(rate, 1e12),
                    "% of peak": "arithmetic unknown" if unknown else sizes.percent(rate, best)})
    return Table("sizes", "How cost grows", pd.DataFrame(out))


def _at(n: float | None) -> str:
    return f"n ≈ {n:.0f}" if n is not None else ""


def launch_findings(rows: pd.DataFrame) -> list[str]:
    """Per accelerator target: the size where with sync - kernel time equals the kernel time."""
    lines = []
    for group in _targets(rows):
        if group.iloc[0]["device"] == "cpu":
            continue
        inner = group["kernel_time"].fillna(group["device_time_queued"])
        ok = group["with_sync"].notna() & inner.notna() & (inner > 0)
        if not ok.any():
            continue
        ratio = ((group["with_sync"] - inner) / inner)[ok].tolist()
        n = group["n"][ok].tolist()
        where = sizes.crossing(n, ratio)
        name = sizes.target_name(group.iloc[0])
        if len(n) == 1:
            lines.append(f"{name}: at the one size measured ({n[0]:.0f}) the launch gap is "
                         f"{ratio[0]:.2f}× the kernel time: no crossing can be found.")
            continue
        lines.append(f"{name}: the launch gap (with sync - kernel or queued device time) equals "
                     f"the kernel time at {_at(where)}" if where else
                     f"{name}: the launch gap is {'above' if ratio[0] > 1 else 'below'} the "
                     f"kernel time at every size measured ({n[0]:.0f}-{n[-1]:.0f}).")
    return lines


def crossover_findings(rows: pd.DataFrame) -> list[str]:
    """Each candidate / the reference (burn / PyTorch) per device and arithmetic, on the same
    basis, and where it crosses 1."""
    lines = []
    found = programs.reference()
    if found is None:
        return lines
    ref = found[0]
    for (device, threads), per_device in rows.groupby(["device", "threads_key"], dropna=False):
        torch = per_device[per_device["framework"] == ref.name]
        for mine in programs.candidates():
            burn = per_device[per_device["framework"] == mine.name]
            where = "" if pd.isna(threads) or device != "cpu" else \
                f", {threads_column(int(threads))}"
            lines += _crossings(burn, torch, f"{mine.title} {{}} / {ref.title} {{}} on "
                                f"{device}{where}")
    return lines


def _crossings(burn: pd.DataFrame, torch: pd.DataFrame, words: str) -> list[str]:
    """One candidate's targets against the reference's of one device: `words` names a pair.
    Each pair is read on one clock both measured (a common basis), never a candidate's queued
    time against the reference's kernel time: the clock both have at the most sizes (the
    preferred one on a tie); a preferred clock both have at fewer sizes is added beside it."""
    lines = []
    for (blabel, b), (tlabel, t) in ((x, y) for x in burn.groupby("label")
                                     for y in torch.groupby("label")):
        arith = {str(x["arithmetic"].iloc[0]) for x in (b, t)}
        if len(arith) != 1:  # one arithmetic (two unknowns, a chapter log's, taken as equal)
            continue
        both = b.merge(t, on="shape", suffixes=("_b", "_t")).sort_values("n_b")
        spans = _common_bases(both)
        if not spans:
            continue
        (name, n, ratio, shapes), *better = spans
        where = sizes.crossing(n, ratio)
        text = (f"{words.format(blabel, tlabel)} ({name}): {_span(shapes, ratio)}"
                + (f"; crosses 1 at {_at(where)}" if where else "; never crosses 1"))
        for other, _, r, s in better:
            text += f"; on the {other} clock, where both have it: {_span(s, r)}"
        lines.append(text + ".")
    return lines


def _span(shapes: list[str], ratio: list[float]) -> str:
    return ", ".join(f"{s} {r:.2f}×" for s, r in zip(shapes, ratio, strict=True))


def _common_bases(both: pd.DataFrame) -> list[tuple[str, list[float], list[float], list[str]]]:
    """(basis, sizes, candidate/reference ratios, shapes) per clock both sides measured: the
    one at the most sizes first, then the clocks preferred to it (fewer sizes)."""
    found = []
    for rank, (method, name) in enumerate(vocabulary.size_bases()):
        pair = [f"{method}_b", f"{method}_t"]
        if not set(pair) <= set(both.columns):
            continue
        ok = both[pair].notna().all(axis=1) & (both[pair[1]] > 0)
        if ok.any():
            rows = both[ok]
            found.append((int(ok.sum()), -rank, name, rows["n_b"].tolist(),
                          (rows[pair[0]] / rows[pair[1]]).tolist(), rows["shape"].tolist()))
    if not found:
        return []
    best = max(found)
    preferred = [f for f in found if f[1] > best[1]]  # higher rank = a better clock
    return [tuple(f[2:]) for f in (best, *sorted(preferred, key=lambda f: -f[1]))]


def fit_findings(rows: pd.DataFrame) -> list[str]:
    lines = []
    for group in _targets(rows):
        fit = sizes.fit_cost(group["n"].tolist(), group["time_s"].tolist())
        lines.append(sizes.fit_text(sizes.target_name(group.iloc[0]),
                                    group["shape"].tolist(), fit))
    return lines


def above_peak(rows: pd.DataFrame) -> list[str]:
    """A figure above its peak: the peak's assumptions (clock, FMA units) did not hold."""
    lines = []
    for _, r in rows.dropna(subset=["peak_flops"]).iterrows():
        rate = sizes.tflops(r["shape"], r["time_s"])
        if rate is not None and rate > r["peak_flops"]:
            lines.append(Kind.ABOVE_PEAK.says(f"{sizes.target_name(r)} {r['shape']} at "
                         f"{100 * rate / r['peak_flops']:.0f}% of {r['peak_name']}: the clock ran "
                         "above the one recorded (turbo), or the peak's assumptions are off."))
    return lines + _above_fp32(rows)


def _above_fp32(rows: pd.DataFrame) -> list[str]:
    """A target of unknown arithmetic faster than the device's FP32 peak did not compute in
    FP32 on its FP32 units: its kernels ran on tensor cores (TF32 or narrower), so its ratios
    against an FP32 run are not like for like (burn 0.22's f32 matmul on an H200: 69 TFLOP/s
    at 4096², FP32's peak 67)."""
    lines = []
    unknown = rows[(rows["arithmetic"] == "") & rows["peak_fp32"].notna()]
    for _, r in unknown.iterrows():
        rate = sizes.tflops(r["shape"], r["time_s"])
        if rate is not None and rate > r["peak_fp32"]:
            lines.append(Kind.ABOVE_FP32.says(
                f"{sizes.target_name(r)} {r['shape']} at {rate / 1e12:.1f} TFLOP/s, above "
                f"{r['peak_name']}'s FP32 peak ({r['peak_fp32'] / 1e12:.1f}): its arithmetic "
                "was not recorded, and it cannot have been plain FP32; its kernels ran on tensor "
                "cores (TF32 or narrower). An accuracy run (`mode: accuracy`) records it."))
    return lines


def findings(rows: pd.DataFrame) -> list[str]:
    if rows.empty:
        return []
    return (launch_findings(rows) + crossover_findings(rows) + fit_findings(rows)
            + above_peak(rows))
