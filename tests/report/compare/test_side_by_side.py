"""`report A B`: the chapter's M2 Max listings and the committed H200 store in one report."""

from __future__ import annotations

import csv
from pathlib import Path

import pytest

from orchestrator.cli import main

from ...conftest import PROJECT

CHAPTER = PROJECT / "tests" / "data" / "chapter_listings.log"
H200 = PROJECT / "docs" / "results" / "h200-2026-11-30"


@pytest.fixture(scope="module")
def report(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("side_by_side")
    assert main(["report", str(CHAPTER), str(H200), "--out", str(out)]) == 0
    return out


def _rows(path: Path) -> list[dict[str, str]]:
    with path.open(encoding="utf-8") as fh:
        return list(csv.DictReader(fh))


def test_each_side_has_its_machine_line_and_column_group(report: Path) -> None:
    text = (report / "report.md").read_text(encoding="utf-8")
    assert "- **A** = `chapter_listings.log`: accelerators metal, mps; GPU not recorded" in text
    assert ("- **B** = `h200-2026-11-30@20261130-154152-599978`: accelerators cuda; "
            "GPU NVIDIA H200") in text
    for title in ("1. Timing methods", "2. First call", "3. CPU builds and threads",
                  "4. Same numbers", "5. The warm-up puzzle"):
        assert f"## {title}" in text


def test_methods_stand_side_by_side_with_both_sides_figures(report: Path) -> None:
    rows = {r["method"]: r for r in _rows(report / "methods.csv")}
    # chapter: 'mps 1024x1024 matmul with sync, 20 runs: min 535.250µs median 1.118ms'
    assert rows["with sync"]["A: PyTorch mps median"] == "1.118ms"
    assert rows["with sync"]["A: burn metal min"] == "651.666µs"
    # the H200 report's own methods table holds the same cells
    h200 = {r["method"]: r for r in _rows(H200 / "report" / "methods.csv")}
    assert rows["with sync"]["B: PyTorch cuda median"] == h200["with sync"]["PyTorch cuda median"]
    assert list(rows)[:2] == ["no sync", "with sync"]  # the chapter's order, not sorted


def test_builds_and_processes_line_up(report: Path) -> None:
    cpu = {r["build"]: r for r in _rows(report / "cpu_threads.csv")}
    assert cpu["PyTorch CPU"]["A: 1 thread"] == "832.209µs"
    assert cpu["PyTorch CPU"]["B: 16 threads"] != ""
    accuracy = {r["build"]: r for r in _rows(report / "accuracy.csv")}
    # a log's 'burn flex template' and a store's 'flex(template)' are one build
    assert accuracy["burn flex(template)"]["A: max|x - f64 ref|"] == "2.227e-06"
    assert accuracy["burn flex(template)"]["B: max|x - f64 ref|"] != ""
    first = {(r["framework"], r["process"]): r for r in _rows(report / "first_call.csv")}
    assert first[("burn", "1")]["A: first call after sync"] == "3.600s"
    assert first[("burn", "1")]["B: cache"] == "cold"  # the first-call experiment's process 1


def test_a_bad_side_is_one_line_exit_two(tmp_path: Path,
                                         capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["report", str(H200), str(tmp_path / "missing"), "--out", str(tmp_path / "r")])
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 2 and len(err) == 1 and "no such results folder" in err[0]


def test_report_html_of_two_sides_in_chromium(report: Path) -> None:
    """report.html beside report.md: one grouped header cell per side naming it, every table
    of report.md, every contents link landing."""
    from tests.report.chromium import file_url, open_page

    from ..test_html_report import CHECKS, _tables_in

    groups = "[...document.querySelectorAll('th.group')].map(t => t.innerText)"
    seen = open_page(file_url(report / "report.html"), f"({{...{CHECKS}, groups: {groups}}})")
    assert seen.errors == []
    got = seen.result
    assert got["tables"] == _tables_in((report / "report.md").read_text(encoding="utf-8"))
    assert got["tables"] >= 4 and got["broken"] == [] and len(got["toc"]) == got["tables"]
    assert got["csv"] and all((report / name).is_file() for name in got["csv"])
    assert "A\nchapter_listings.log" in got["groups"]
    assert "B\nh200-2026-11-30@20261130-154152-599978" in got["groups"]
