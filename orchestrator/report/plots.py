"""The report's figures: timing methods, CPU builds × threads, first calls, warm-up (the
sections' drawers; exporters.py draws and saves each as PNG, sizes.png is sizes_plot.py's).

Each plot must be readable without report.md: a title saying what was measured, axes with
units, a legend, and the values written on bars. Timings span six decades (a 791 ns call
overhead, a 3.6 s autotune), so every time axis is logarithmic. matplotlib's object API with
the Agg canvas is used instead of pyplot: no global figure state, no display needed.

Each plot is drawn from the rows its report section selected (sections.Section.rows), the same
rows the section's tables and checks read; a plot only narrows them to what it shows.
"""

from __future__ import annotations

from collections import Counter

import numpy as np
import pandas as pd
from matplotlib.axes import Axes
from matplotlib.figure import Figure
from matplotlib.patches import Patch

from orchestrator import programs, vocabulary
from orchestrator.report import plot_style, styles
from orchestrator.report.cells import duration
from orchestrator.report.names import group_name
from orchestrator.report.section import SampleSets
from orchestrator.report.tables import column_name, cpu_build_name, ordered, threads_column
from orchestrator.report.timing_tables import cpu_rows

HATCHES = ("", "//", "..", "xx", "\\\\", "oo")  # thread counts in cpu_threads.png
LINES = ("-", "--", ":", "-.")  # one build's several series (cache state, warm-up)
# Caps, as compare.png's (compare_output.PLOT_ROWS): a plot with a bar group per process was
# 87,900 px wide at 500 runs (2 GB of pixels at 5000), a title naming every shape 155 in;
# below them nothing changes. Every figure stays in the section's table and CSV.
PLOT_GROUPS = 100  # first-call bar groups (processes) drawn, the first in the table's order


def draw_methods(rows: pd.DataFrame, sets: SampleSets) -> Figure | str:
    """From the section's rows (timing_tables.methods_rows)."""
    timed = rows[rows["stat"].isin(["min", "median"])]
    if timed.empty:
        return "no accelerator timing figures in this data"
    # A method whose every run read no time has no point, but still gets its place and a note.
    counted = rows.loc[(rows["stat"] == "no_time_count") & (rows["value_s"] > 0)
                       & (rows["value_s"] < np.inf), "method"]
    seen = set(timed["method"]) | set(counted)
    methods = [m for m in vocabulary.method_keys(table1=True) if m in seen]
    targets = ordered(timed, ["framework", "label"])
    figure, ax = plot_style.figure(max(7.0, 1.9 * len(methods) + 1.5), 5.0)
    width = 0.8 / len(targets)
    used_samples = False
    for t, (framework, label) in enumerate(targets):
        mine = timed[(timed["framework"] == framework) & (timed["label"] == label)]
        look = styles.style(framework, label)
        color = look.color
        for m, method in enumerate(methods):
            x = m - 0.4 + width * (t + 0.5)
            used_samples |= _method_points(ax, mine[mine["method"] == method], sets, x, width,
                                           color)
        ax.scatter([], [], color=color, s=40, marker=look.marker,
                   label=column_name(framework, label))
    _no_time_notes(ax, rows, methods)
    ax.set_xticks(range(len(methods)), [vocabulary.words(m).replace(" without", "\nwithout")
                                        for m in methods])
    ax.set_xlim(-0.6, len(methods) - 0.4)
    plot_style.time_axis(ax, timed["value_s"].tolist())
    ax.set_ylabel("time per matmul call" + plot_style.scale_word(ax))
    how = "each run a point, bar = median" if used_samples else "▼ min, ● median"
    ax.set_title(f"Timing methods on the accelerator: {plot_style.shape_text(timed)}\n({how})")
    plot_style.legend(ax, title="framework, device")
    return figure


def _method_points(ax: Axes, rows: pd.DataFrame, sets: SampleSets, x: float, width: float,
                   color: str) -> bool:
    """All samples as jittered points when there are samples, else min and median markers."""
    if rows.empty:
        return False
    mins = rows[rows["stat"] == "min"]
    values = sets.get(mins["sample_key"].iloc[0]) if not mins.empty else None
    if values is not None and len(values):
        jitter = np.random.default_rng(len(values)).uniform(-0.3, 0.3, len(values)) * width
        ax.scatter(x + jitter, values, s=14, color=color, alpha=0.6, linewidths=0)
        ax.hlines(np.median(values), x - 0.4 * width, x + 0.4 * width, color="black", lw=1.5)
        return True
    for stat, marker in (("min", "v"), ("median", "o")):
        found = rows.loc[rows["stat"] == stat, "value_s"]
        if not found.empty:
            ax.scatter([x], [found.iloc[0]], marker=marker, s=60, color=color,
                       edgecolors="black", linewidths=0.6, zorder=3)
    return False


def _no_time_notes(ax: Axes, rows: pd.DataFrame, methods: list[str]) -> None:
    """A profile window that read no time has no point to draw: say so on the plot."""
    counts = rows[(rows["stat"] == "no_time_count") & (rows["value_s"] > 0)
                  & (rows["value_s"] < np.inf)]
    for _, row in counts.iterrows():
        if row["method"] not in methods:
            continue
        runs = f" of {int(row['runs'])}" if pd.notna(row["runs"]) else ""
        ax.annotate(f"{column_name(row['framework'], row['label'])}:\n{int(row['value_s'])}"
                    f"{runs} runs\nread no time", (methods.index(row["method"]), 0.03),
                    xycoords=("data", "axes fraction"), ha="center", fontsize=8,
                    color="dimgray")


# ---- 3. CPU builds x threads ----------------------------------------------------------------


def draw_cpu(cpu: pd.DataFrame, sets: SampleSets) -> Figure | str:
    """From the section's CPU figures (timing_tables.cpu_figures), as table 3 picks them: at
    one shape, the one most builds ran (the chapter's 1024x1024 where they all did); each
    build its colour (styles.py), each thread count its hatch."""
    rows = cpu_rows(cpu, vocabulary.cpu_methods())
    rows = rows[rows["stat"] == "min"].dropna(subset=["threads_key"]) if not rows.empty else rows
    if rows.empty:
        return "no CPU timing figures in this data"
    shape = cpu_shape(rows)
    others = sorted({s for s in rows["shape"] if s and s != shape})
    rows = rows[rows["shape"] == shape]
    builds = ordered(rows, ["framework", "label"])
    counts = sorted(int(t) for t in rows["threads_key"].unique())
    figure, ax = plot_style.figure(max(7.0, 2.0 * len(builds) + 1.0), 5.0)
    width = 0.8 / len(counts)
    for c, threads in enumerate(counts):
        values, xs, colors = [], [], []
        for b, (framework, label) in enumerate(builds):
            found = rows[(rows["framework"] == framework) & (rows["label"] == label) &
                         (rows["threads_key"] == threads)]
            x = b - 0.4 + width * (c + 0.5)
            if not found.empty:
                values.append(float(found["value_s"].iloc[0]))
                xs.append(x)
                colors.append(styles.color(framework, label))
            elif label in programs.one_thread_labels():  # the missing bar is by design: say so
                ax.annotate("single\nthread\nonly", (x, 0.02), xycoords=("data", "axes fraction"),
                            ha="center", va="bottom", fontsize=8, color="dimgray")
        bars = ax.bar(xs, values, width * 0.95, color=colors, edgecolor="black", linewidth=0.6,
                      hatch=HATCHES[c % len(HATCHES)], label=threads_column(threads))
        plot_style.bar_labels(ax, bars, values)
    ax.set_xticks(range(len(builds)), [cpu_build_name(f, lab).replace(", ", ",\n")
                                       .replace(" + ", "\n+ ") for f, lab in builds])
    plot_style.time_axis(ax, rows["value_s"].tolist())
    plot_style.headroom(ax, rows["value_s"].tolist())
    ax.set_ylabel("min time per matmul" + plot_style.scale_word(ax))
    also = f"\n(also measured at {len(others)} other shape{'s' * (len(others) != 1)}: " \
        "table 3 and section 6b)" if others else ""
    ax.set_title(f"CPU builds × threads: {shape} f32 matmul, min of the timed runs{also}")
    handles = [Patch(facecolor="white", edgecolor="black", hatch=HATCHES[c % len(HATCHES)],
                     label=threads_column(t)) for c, t in enumerate(counts)]
    ax.legend(handles=handles, title="threads", loc="upper left", bbox_to_anchor=(1.01, 1.0),
              fontsize=9)
    return figure


def cpu_shape(rows: pd.DataFrame) -> str:
    """The shape a CPU plot shows: the one most builds ran, the larger on a tie."""
    counts = rows.groupby("shape")[["framework", "label"]].apply(
        lambda part: len(part.drop_duplicates()))
    return str(max(counts.index, key=lambda s: (counts[s], _area(s))))


def _area(shape: str) -> int:
    parts = [int(p) for p in str(shape).split("x") if p.isdigit()]
    return int(np.prod(parts)) if parts else 0


# ---- 2. first call --------------------------------------------------------------------------

FIRST_BARS = {"first_call_returned": "call returned", "first_call_after_sync": "after sync"}


def draw_first_call(section_rows: pd.DataFrame, sets: SampleSets) -> Figure | str:
    """From the section's rows (timing_tables.first_call_rows): two of its three methods."""
    rows = section_rows[section_rows["method"].isin(list(FIRST_BARS))]
    if rows.empty:
        return "no accelerator first-call figures in this data"
    groups = ordered(rows, ["unit", "framework", "label", "process", "cache"])
    every = len(groups)
    if every > PLOT_GROUPS:  # the rows of the groups drawn: masks per group over fewer rows
        groups = groups[:PLOT_GROUPS]
        rows = rows[rows["unit"].isin({g[0] for g in groups})]
    figure, ax = plot_style.figure(max(8.0, 2.2 * len(groups) + 2.0), 5.0)
    for k, (method, name) in enumerate(FIRST_BARS.items()):
        values, xs = [], []
        for g, (unit, _framework, label, process, cache) in enumerate(groups):
            found = rows[(rows["unit"] == unit) & (rows["label"] == label) &
                         (rows["method"] == method) & (rows["cache"] == cache) &
                         (rows["process"] == process).fillna(pd.isna(process))]
            if not found.empty:
                values.append(float(found["value_s"].iloc[0]))
                xs.append(g - 0.2 + 0.4 * k)
        bars = ax.bar(xs, values, 0.38, color=plot_style.COLORS[k], label=name)
        plot_style.bar_labels(ax, bars, values)
    # the same run in two experiments (methods and first-call both start a process) would get
    # two identical ticks: those name their experiment
    seen = Counter(tuple(g[1:]) for g in groups)
    ticks = [group_name(*g[1:]) + (f"\n({g[0].split('|', 1)[1]})" if seen[tuple(g[1:])] > 1
                                     else "") for g in groups]
    ax.set_xticks(range(len(groups)), ticks, fontsize=9)
    plot_style.time_axis(ax, rows["value_s"].tolist())
    plot_style.headroom(ax, rows["value_s"].tolist())
    ax.set_ylabel("time of the first matmul" + plot_style.scale_word(ax))
    shown = (f"\n(the first {len(groups)} of {every} processes; table 2, first_call.csv, "
             "has them all)" if every > len(groups) else "")
    ax.set_title("First call in each process: when the call returned, and after sync\n"
                 "(cold cache: autotune runs; warm cache: tuned kernels are read back)" + shown)
    plot_style.legend(ax)
    return figure


# ---- 5. warm-up puzzle ----------------------------------------------------------------------


def draw_warmup(section_rows: pd.DataFrame, sets: SampleSets) -> Figure | str:
    """From the section's rows (timing_tables.warmup_rows) that name their timed run."""
    rows = section_rows.dropna(subset=["iteration"])
    if rows.empty:
        return "no warm-up puzzle runs in this data"
    figure, ax = plot_style.figure(10.0, 5.0)
    for k, (unit, label, cache, warmup) in enumerate(
            ordered(rows, ["unit", "label", "cache", "warmup"])):
        mine = rows[(rows["unit"] == unit) & (rows["label"] == label) &
                    (rows["cache"] == cache) & (rows["warmup"] == warmup)]
        mine = mine.sort_values("iteration")
        name = ", ".join(p for p in (label, f"{cache} cache" if cache else "",
                                     f"warm-up {warmup}" if warmup else "") if p)
        # The run the lesson is about gets its value in the legend (labels on points collide).
        name += f" (run {int(mine['iteration'].iloc[0])}: {duration(mine['value_s'].iloc[0])})"
        look = styles.style(str(mine["framework"].iloc[0]), label)
        ax.plot(mine["iteration"].astype(int), mine["value_s"], marker=look.marker, lw=1.5,
                color=look.color, ls=LINES[k % len(LINES)], label=name)
    runs = sorted(int(i) for i in rows["iteration"].unique())
    ax.set_xticks(runs, [f"run {i}" for i in runs])
    plot_style.time_axis(ax, rows["value_s"].tolist())
    ax.set_xlabel("timed run (each ends with a sync)")
    ax.set_ylabel("time after sync" + plot_style.scale_word(ax))
    ax.set_title("The warm-up puzzle: one warm-up without sync, then timed runs\n"
                 "(run 0 still pays autotune / compilation)")
    plot_style.legend(ax)
    return figure
