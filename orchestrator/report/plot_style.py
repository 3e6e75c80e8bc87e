"""The look the report's plots share: colours, time axes and their ticks, legends, bar labels,
a figure and its title's shapes. plots.py (methods, CPU, first calls, warm-up) and
sizes_plot.py (sizes.png) both draw with these pieces, so neither imports the other's.
"""

from __future__ import annotations

import pandas as pd
from matplotlib.axes import Axes
from matplotlib.figure import Figure
from matplotlib.ticker import FuncFormatter, LogLocator, NullFormatter

from orchestrator.report.cells import duration

COLORS = ["#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b", "#17becf"]
TITLE_SHAPES = 20  # shapes named in a title; above: their count and range


def tick(seconds: float, _pos: object = None) -> str:
    """Axis ticks in the unit a reader expects: '10 µs', '1 ms', '2 s'."""
    if seconds <= 0:
        return "0"
    for scale, unit in ((1.0, "s"), (1e-3, "ms"), (1e-6, "µs"), (1e-9, "ns")):
        if seconds >= scale * 0.999:
            return f"{seconds / scale:.3g} {unit}"
    return f"{seconds:g} s"


def time_axis(ax: Axes, values: list[float], log_above: float = 20.0) -> None:
    """A time y axis: logarithmic when the values span more than `log_above`, else linear.

    Bars on a log axis exaggerate small differences (36 µs against 44 µs looks like a factor
    of ten), so a narrow range keeps a linear axis that starts at zero.
    """
    positive = [v for v in values if v > 0]
    wide = bool(positive) and max(positive) / min(positive) > log_above
    if wide:
        ax.set_yscale("log")
        ax.yaxis.set_major_locator(LogLocator(base=10))
        ax.yaxis.set_minor_formatter(NullFormatter())  # 2..9 × each decade: unlabelled
    else:
        ax.set_ylim(bottom=0)
    ax.yaxis.set_major_formatter(FuncFormatter(tick))
    ax.grid(True, axis="y", which="major", alpha=0.35)


def legend(ax: Axes, title: str | None = None) -> None:
    """Outside the axes, right: a legend never hides a point or a bar label."""
    ax.legend(title=title, loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize=9)


def headroom(ax: Axes, values: list[float] | None = None) -> None:
    """Room above the tallest bar for its value label, and no more: on a log axis the range is
    the data's, half a decade around it at most (a factor 3 on top of matplotlib's margin left
    the upper half of cpu_threads.png empty)."""
    shown = [v for v in values or [] if v > 0]
    if ax.get_yscale() == "log" and shown:
        ax.set_ylim(min(shown) / 2.0, max(shown) * 2.2)
        return
    top = ax.get_ylim()[1]
    ax.set_ylim(top=top * 1.12)


def scale_word(ax: Axes) -> str:
    return " (log scale)" if ax.get_yscale() == "log" else ""


def figure(width: float, height: float) -> tuple[Figure, Axes]:
    figure = Figure(figsize=(width, height), layout="constrained")
    return figure, figure.add_subplot()


def bar_labels(ax: Axes, bars: object, values: list[float]) -> None:
    ax.bar_label(bars, labels=[duration(v) for v in values], fontsize=8, padding=2,
                 rotation=90 if len(values) > 6 else 0)


def shape_text(rows: pd.DataFrame) -> str:
    shapes = sorted({s for s in rows["shape"] if s})
    if len(shapes) > TITLE_SHAPES:  # a title of every shape was 155 in wide at 166 shapes
        return f"{len(shapes)} shapes ({shapes[0]} … {shapes[-1]}) f32 matmul"
    return f"{', '.join(shapes)} f32 matmul" if shapes else "matmul"
