"""Each plot against the data it draws: its series, their colours and markers, its title's
shapes, its axes. The figures come from the drawers themselves (report/plots.py,
sizes_plot.py), drawn from the rows their sections selected, as the writer draws them."""

from __future__ import annotations

from pathlib import Path

import pytest
from matplotlib.colors import to_hex
from matplotlib.figure import Figure

from orchestrator.data import dataset
from orchestrator.data.dataset import Dataset
from orchestrator.report import styles, tables
from orchestrator.report.checks import Thresholds
from orchestrator.report.sample_sets import sample_sets
from orchestrator.report.sections import Section, build_sections
from tests.report.test_writer import chapter_dataset

from ..conftest import PROJECT

CPU_SIZES = PROJECT / "docs" / "results" / "cpu-sizes-2026-12-04" / "results"


def drawn(data: Dataset) -> dict[str, Figure | str]:
    sets = sample_sets(data.samples)
    sections: list[Section] = build_sections(data, tables.prepare(data), sets, Thresholds())
    return {s.plot: s.draw(s.rows, sets) for s in sections if s.plot and s.draw}


@pytest.fixture(scope="module")
def cpu_sizes() -> dict[str, Figure | str]:
    """A real CPU sweep (the 2-core box, docs/results): a size sweep of four builds, and the
    `cpu` experiment's runs at 1024x1024 only."""
    return drawn(dataset.load(Path(CPU_SIZES)))


@pytest.fixture(scope="module")
def chapter() -> dict[str, Figure | str]:
    return drawn(chapter_dataset())


def legend(fig: Figure) -> list[str]:
    return [t.get_text() for t in fig.axes[0].get_legend().get_texts()]


def test_sizes_draws_curves_only_each_build_its_colour(cpu_sizes) -> None:
    fig = cpu_sizes["sizes.png"]
    assert isinstance(fig, Figure)
    ax = fig.axes[0]
    curves = [line for line in ax.get_lines() if not line.get_label().startswith(
        ("launch floor", "roofline"))]
    assert [c.get_label() for c in curves] == [
        "burn flex, 2 threads (with sync)", "burn flex(template), 1 thread (with sync)",
        "burn flex+x86-v4, 2 threads (with sync)", "PyTorch cpu, 2 threads (with sync)"]
    assert all(len(c.get_xdata()) >= 2 for c in curves)  # no point posing as a curve
    colours = [to_hex(c.get_color()) for c in curves]
    assert len(set(colours)) == len(colours)
    assert colours[3] == styles.color("torch", "cpu") and colours[0] == styles.color("burn",
                                                                                      "flex")
    assert [c.get_marker() for c in curves] == ["s", "s", "s", "o"]
    assert [c.get_linestyle() for c in curves] == ["--", "-", "--", "--"]  # threads: 2, 1, 2, 2
    assert ax.get_title() == "How cost grows on cpu: time against size"
    low, high = ax.get_ylim()  # fits the data: within a factor 2 of the times drawn
    times = [y for c in curves for y in c.get_ydata()]
    assert min(times) / 2 <= low <= min(times) and max(times) <= high <= max(times) * 2


def test_sizes_of_one_size_only_is_not_drawn(chapter) -> None:
    assert chapter["sizes.png"] == "every target was measured at one size only (a point, " \
        "not a curve)"


def test_cpu_threads_title_names_only_the_shape_it_draws(cpu_sizes) -> None:
    fig = cpu_sizes["cpu_threads.png"]
    ax = fig.axes[0]
    assert ax.get_title().startswith("CPU builds × threads: 1024x1024 f32 matmul,")
    assert "128x128" not in ax.get_title() and "also measured at 5 other shapes" in ax.get_title()
    assert legend(fig) == ["1 thread", "2 threads"]
    bars = [p for p in ax.patches if p.get_height() > 0]
    ticks = [t.get_text().replace("\n", " ") for t in ax.get_xticklabels()]
    assert len(bars) == 4 and len(ticks) == 4  # four builds at 1024x1024, one bar each
    # each bar its build's colour: the same as in sizes.png
    assert {to_hex(b.get_facecolor()) for b in bars} == {
        styles.color("burn", "flex+x86-v4"), styles.color("burn", "flex(template)"),
        styles.color("burn", "flex"), styles.color("torch", "cpu")}
    low, high = ax.get_ylim()  # a linear axis from 0, the tallest bar near the top
    assert low == 0 and max(b.get_height() for b in bars) > 0.8 * high


def test_chapter_cpu_threads_log_axis_has_no_empty_half(chapter) -> None:
    ax = chapter["cpu_threads.png"].axes[0]
    heights = [p.get_height() for p in ax.patches if p.get_height() > 0]
    assert ax.get_yscale() == "log"
    low, high = ax.get_ylim()
    assert high <= max(heights) * 2.5 and low >= min(heights) / 2.5
    assert ax.get_title().startswith("CPU builds × threads: 1024x1024 f32 matmul")


def test_methods_legend_names_each_target_in_its_colour_and_marker(chapter) -> None:
    fig = chapter["methods.png"]
    ax = fig.axes[0]
    handles = ax.get_legend().legend_handles
    assert legend(fig) == ["PyTorch mps", "burn metal"]
    assert [to_hex(h.get_facecolor()[0]) for h in handles] == [
        styles.color("torch", "mps"), styles.color("burn", "metal")]
    assert "1024x1024 f32 matmul" in ax.get_title()


def test_warmup_lines_are_their_builds_colour(chapter) -> None:
    ax = chapter["warmup.png"].axes[0]
    lines = ax.get_lines()
    assert len(lines) == len(legend(chapter["warmup.png"])) == 3
    # the chapter's warm-up listing names no device: burn's unnamed build, one colour
    assert {to_hex(line.get_color()) for line in lines} == {styles.color("burn", "")}
    assert len({line.get_linestyle() for line in lines}) == 3  # told apart by their style


def test_a_build_keeps_its_colour_whatever_else_is_plotted() -> None:
    assert styles.color("burn", "flex") != styles.color("torch", "cpu")
    assert styles.color("torch", "cuda [tf32]") == styles.color("torch", "cuda")
    assert styles.color("burn", "flex + x86-v4") == styles.color("burn", "flex+x86-v4")
    assert styles.color("newfw", "thing") == styles.color("newfw", "thing")
    assert styles.style("torch", "cuda [tf32]").filled is False
