"""report/exporters.py: a table as Markdown and CSV, as every page the report makes writes it
(report.md, compare.md, history.md); the PNGs are tests/report/test_plots.py's."""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from orchestrator.report import exporters
from orchestrator.report.findings import Kind
from orchestrator.report.section import Section, Table


def test_a_markdown_table_escapes_pipes_and_html_and_leaves_no_value_empty() -> None:
    frame = pd.DataFrame({"max|x - ref|": ["1|2", None], "b": [1.5, "<b>"]})
    assert exporters.markdown_table(frame) == [
        "| max\\|x - ref\\| | b |", "| --- | --- |", "| 1\\|2 | 1.5 |", "|  | &lt;b&gt; |"]


def test_a_partial_reports_csv_says_so_on_every_row(tmp_path: Path) -> None:
    table = Table("figures", "Figures", pd.DataFrame({"x": [1, 2]}))
    path = exporters.write_csv(table, tmp_path, partial="first report")
    assert path == tmp_path / "figures.csv"
    assert path.read_text() == "partial,x\nfirst report,1\nfirst report,2\n"
    crlf = exporters.write_csv(table, tmp_path, lineterminator="\r\n")
    assert crlf.read_bytes() == b"x\r\n1\r\n2\r\n"


def test_a_section_in_markdown_its_tables_notes_findings_and_plot() -> None:
    section = Section("1. Methods", "What each method measured.", [
        Table("methods", "Methods", pd.DataFrame({"a": ["1"]}), notes=["n", "n"]),
        Table("energy", "Energy", pd.DataFrame(), missing="no energy counter")],
        warnings=[Kind.WIDE_SPREAD.says(f"torch at {x}×") for x in (2, 3, 4)], plot="m.png")
    lines = exporters.section_lines(section)
    assert lines[:4] == ["## 1. Methods", "", "What each method measured.", ""]
    assert lines[4:12] == ["### Methods", "", "| a |", "| --- |", "| 1 |", "", "Note: n", ""]
    assert "CSV: `methods.csv`" in lines and "_No table: no energy counter._" in lines
    assert sum(line.startswith("- **wide spread**") for line in lines) == 1  # one bullet
    assert lines[-2:] == ["![1. Methods](m.png)", ""]
    shorter = exporters.section_lines(section, csv=False, missing=False)
    assert "CSV: `methods.csv`" not in shorter and "### Methods" not in shorter
