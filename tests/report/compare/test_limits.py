"""compare at a scale the input cap admits: compare.png stays a figure one
can read (at most PLOT_ROWS rows, the most changed, and says so), the terminal table likewise
(TERMINAL_ROWS), and compare.md names what the picture leaves out; below the caps nothing
changes. Real logs: the chapter's listings copied at distinct shapes, B's times scaled."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from PIL import Image

from orchestrator import cli
from orchestrator.report.compare import output as compare_output

pytestmark = pytest.mark.slow  # two logs of a few thousand figures: about 20 s here
CHAPTER = Path(__file__).resolve().parents[2] / "data" / "chapter_listings.log"
_TIME = re.compile(r"(\d+\.\d+)(ns|µs|ms|s)\b")


def _log(path: Path, copies: int, scale: float) -> Path:
    text = CHAPTER.read_text(encoding="utf-8")
    parts = []
    for i in range(copies):
        factor = 1 + scale * ((i % 5) - 2) / 2
        copy = text.replace("1024x1024", f"{i + 1}x1024")
        parts.append(_TIME.sub(lambda m, f=factor: f"{float(m[1]) * f:.3f}{m[2]}", copy))
    path.write_text("".join(parts), encoding="utf-8")
    return path


def test_a_comparison_of_thousands_of_figures_draws_the_most_changed_and_says_so(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    a, b = _log(tmp_path / "a.log", 30, 0.0), _log(tmp_path / "b.log", 30, 0.4)
    out = tmp_path / "cmp"
    assert cli.main(["compare", str(a), str(b), "--out", str(out)]) == 0
    printed = capsys.readouterr().out
    rows = sum(1 for _ in (out / "compare.csv").open(encoding="utf-8")) - 1
    assert rows > compare_output.TERMINAL_ROWS  # every figure is still in the CSV
    md = (out / "compare.md").read_text(encoding="utf-8")
    assert f"compare.png draws {compare_output.PLOT_ROWS} of the " in md
    assert f"{compare_output.TERMINAL_ROWS} of " in printed and "figures shown" in printed
    with Image.open(out / "compare.png") as png:  # 110 dpi, 0.28 in a row, 1.5 in of frame
        assert png.height < 110 * (1.5 + 0.28 * compare_output.PLOT_ROWS) + 400


def test_a_small_comparison_draws_every_figure_without_a_note(tmp_path: Path) -> None:
    a, b = _log(tmp_path / "a.log", 1, 0.0), _log(tmp_path / "b.log", 1, 0.4)
    out = tmp_path / "cmp"
    assert cli.main(["compare", str(a), str(b), "--out", str(out)]) == 0
    assert "compare.png draws" not in (out / "compare.md").read_text(encoding="utf-8")
