"""sizes.png: per device, time against matmul size on log-log axes, for every target.

Each target's line is its time (the kernels' own time where a profiler measured it, else the
queued device time, else with sync: sizes.py's basis), marked per size. Drawn with it: the
launch floor, the smallest with-sync time measured on that device (no call returns faster),
and the compute roofline of each known peak, max(flop / peak FLOP/s, bytes / bandwidth): no
matmul of that size can run faster. The rows come from the section (sizes.size_rows with the
peaks added: `peak_flops`, `peak_bw`, `peak_name`).
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from matplotlib.figure import Figure
from matplotlib.ticker import FuncFormatter, NullFormatter

from orchestrator.report import sizes, styles
from orchestrator.report.plot_style import tick

SampleSets = dict[str, np.ndarray]
TICK_SIZES = 32  # sizes labelled on a panel's x axis; above: 32 of them, evenly on the log axis


def draw(rows: pd.DataFrame, _sets: SampleSets) -> Figure | str:
    """One panel per device; a string says why nothing was drawn."""
    if rows.empty:
        return "no matmul timing at any size in this data"
    if (rows.groupby(sizes.KEYS, dropna=False)["n"].nunique() < 2).all():
        return "every target was measured at one size only (a point, not a curve)"
    devices = list(dict.fromkeys(rows["device"]))
    cols = min(2, len(devices))  # two panels a row keep three or four devices on one page
    nrows = -(-len(devices) // cols)
    figure = Figure(figsize=(7.5 * cols, 4.6 * nrows), layout="constrained")
    for i, device in enumerate(devices):
        _panel(figure.add_subplot(nrows, cols, i + 1), rows[rows["device"] == device],
               str(device))
    return figure


def _panel(ax: object, rows: pd.DataFrame, device: str) -> None:
    groups = [g for _, g in rows.groupby(sizes.KEYS, dropna=False, sort=False)]
    # a target measured at one size is a point, not a curve: it is left out, and said
    curves = [g for g in groups if g["n"].nunique() > 1]
    alone = [g for g in groups if g["n"].nunique() <= 1]
    if curves:
        rows = pd.concat(curves)
    n_all = sorted(set(rows["n"]))
    grid = np.geomspace(min(n_all) / 1.2, max(n_all) * 1.2, 64)
    for group in curves:
        basis = ", ".join(dict.fromkeys(group["basis"]))
        first = group.iloc[0]
        look = styles.style(str(first["framework"]), str(first["label"]), first["threads_key"])
        ax.plot(group["n"], group["time_s"], marker=look.marker, color=look.color,
                ls=look.linestyle, markerfacecolor=look.color if look.filled else "white",
                label=f"{sizes.target_name(first)} ({basis})")
    if alone:
        names = ", ".join(sizes.target_name(g.iloc[0]) for g in alone)
        ax.text(0.99, 0.01, f"at one size only, not drawn: {names}" if curves else
                "every target at one size only: no curve to draw", transform=ax.transAxes,
                ha="right", va="bottom", fontsize=7, color="dimgray", wrap=True)
    floor = rows["with_sync"].min()
    if pd.notna(floor):
        ax.axhline(floor, color="gray", ls=":", label=f"launch floor {tick(floor)} "
                   "(smallest with sync)")
    drawn: set[tuple[str, float]] = set()
    peaks = rows.dropna(subset=["peak_flops"]).drop_duplicates(["peak_name", "peak_flops"])
    for _, r in peaks.iterrows():  # one roofline per peak
        key = (str(r["peak_name"]), float(r["peak_flops"]))
        if key in drawn:
            continue
        drawn.add(key)
        bw = r["peak_bw"] if pd.notna(r["peak_bw"]) else 0.0
        roof = [max(2 * n ** 3 / r["peak_flops"], (12 * n * n / bw) if bw else 0.0) for n in grid]
        ax.plot(grid, roof, ls="--", lw=1, color="black", alpha=0.4 + 0.3 * (len(drawn) % 2),
                label=f"roofline {r['peak_name']} ({r['peak_flops'] / 1e12:.4g} TFLOP/s)")
    ax.set_xscale("log", base=2)
    shown = [float(v) for v in (*rows["time_s"], floor) if pd.notna(v) and v > 0]
    ax.set_yscale("log")
    if shown:  # the axes fit the data (a roofline far below the times does not stretch them)
        lo, hi = min(shown), max(shown)
        ax.set_ylim(lo / 3 if lo == hi else lo / 1.6, hi * 3 if lo == hi else hi * 1.6)
    ticks = _ticks(n_all)
    ax.set_xticks(ticks, [f"{n:.0f}" for n in ticks], rotation=45)
    ax.yaxis.set_major_formatter(FuncFormatter(tick))
    ax.yaxis.set_minor_formatter(NullFormatter())
    ax.grid(True, which="major", alpha=0.35)
    ax.set_xlabel("matmul size n (n×n f32, log scale" + (
        f"; {len(ticks)} of the {len(n_all)} sizes labelled)" if len(ticks) < len(n_all)
        else ")"))
    ax.set_ylabel("time per matmul (log scale)")
    ax.set_title(f"How cost grows on {device}: time against size")
    ax.legend(loc="upper left", fontsize=7, framealpha=0.8)


def _ticks(sizes_measured: list[float]) -> list[float]:
    """The sizes labelled on the x axis: all of them up to TICK_SIZES, else at most
    TICK_SIZES of them, each the measured size nearest a point evenly spaced on the log axis
    and at least 0.8 of a spacing from the one before (a label per size was 1,666 rotated
    labels at 5000 runs: unreadable, and 6 s of drawing a panel)."""
    if len(sizes_measured) <= TICK_SIZES:
        return sizes_measured
    logs = np.log(np.asarray(sizes_measured))
    step = (logs[-1] - logs[0]) / (TICK_SIZES - 1)
    kept: list[int] = []
    for point in np.linspace(logs[0], logs[-1], TICK_SIZES):
        i = int(np.abs(logs - point).argmin())
        if not kept or logs[i] - logs[kept[-1]] >= 0.8 * step:
            kept.append(i)
    return [float(sizes_measured[i]) for i in kept]
