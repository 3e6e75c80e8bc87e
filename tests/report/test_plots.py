"""The report's PNGs: drawn when the data has them, valid, of a readable size; skipped with why."""

from __future__ import annotations

import struct
from pathlib import Path

import pandas as pd
import pytest

from orchestrator.data.dataset import Dataset
from orchestrator.report import exporters, plot_style, tables
from orchestrator.report.checks import Thresholds
from orchestrator.report.sample_sets import sample_sets
from orchestrator.report.sections import build_sections
from tests.report.test_writer import chapter_dataset, synthetic_dataset

PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"
ALL = ["methods.png", "first_call.png", "cpu_threads.png", "warmup.png", "sizes.png"]  # in order


def png_size(path: Path) -> tuple[int, int]:
    """Width and height from the IHDR chunk, after checking the PNG signature."""
    head = path.read_bytes()[:24]
    assert head[:8] == PNG_SIGNATURE, f"{path.name} is not a PNG"
    assert head[12:16] == b"IHDR"
    return struct.unpack(">II", head[16:24])


def draw(data: Dataset, out: Path) -> tuple[list[Path], list[exporters.Skipped]]:
    """The plots as the writer draws them: each from the rows its section selected."""
    sets = sample_sets(data.samples)
    th = Thresholds().for_host(data.host)
    sections = build_sections(data, tables.prepare(data), sets, th)
    return exporters.write_plots([(s.plot, s.draw, s.rows) for s in sections if s.plot and s.draw],
                                 sets, out)


@pytest.mark.parametrize("which", ["chapter", "synthetic"])
def test_every_plot_is_a_readable_png(which: str, tmp_path: Path) -> None:
    data = chapter_dataset() if which == "chapter" else synthetic_dataset()[0]
    written, skipped = draw(data, tmp_path)
    # both timed one shape: no size curve to draw (a point is no curve; sizes.png of a real
    # size sweep: test_plot_content)
    one_size = [("sizes.png", "every target was measured at one size only (a point, not a "
                 "curve)")]
    assert skipped == one_size
    assert [p.name for p in written] == [n for n in ALL if n not in dict(one_size)]
    for path in written:
        width, height = png_size(path)
        # Wide enough for the labels at 120 dpi, not a poster.
        assert 700 <= width <= 2400 and 450 <= height <= 1200, (path.name, width, height)
        assert 15_000 < path.stat().st_size < 2_000_000  # something was drawn


def test_plots_the_data_lacks_are_skipped_with_a_reason(tmp_path: Path) -> None:
    data = chapter_dataset()
    cpu_only = data.figures[data.figures["device"] == "cpu"].reset_index(drop=True)
    written, skipped = draw(Dataset(cpu_only, data.samples, pd.DataFrame(), {}), tmp_path)
    assert [p.name for p in written] == ["cpu_threads.png"]
    assert dict(skipped) == {
        "sizes.png": "every target was measured at one size only (a point, not a curve)",
        "methods.png": "no accelerator timing figures in this data",
        "first_call.png": "no accelerator first-call figures in this data",
        "warmup.png": "no warm-up puzzle runs in this data",
    }
    assert not (tmp_path / "methods.png").exists()


def test_tick_labels_use_time_units() -> None:
    assert [plot_style.tick(v) for v in (2.0, 1e-3, 1e-4, 1e-6, 5e-9)] == [
        "2 s", "1 ms", "100 µs", "1 µs", "5 ns"]
