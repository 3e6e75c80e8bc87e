"""The report's exporters over a section's tables and plots, for every page the report makes
(report.md, compare.md, history.md and their CSVs and PNGs): a table as CSV (`write_csv`), a
section as Markdown (`section_lines`: its tables, `markdown_table`, their notes, `note_lines`,
its findings, near-identical ones as one bullet), each section's plot drawn and saved as PNG
(`write_plots`, `save`). The writer (report.md), compare and history write their files with
these; the drawers themselves are plots.py's and sizes_plot.py's.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pandas as pd
from matplotlib.figure import Figure

from orchestrator.report import digest, escape
from orchestrator.report.section import Drawer, SampleSets, Section, Table

DPI = 120
# A plot that cannot be drawn: its file name and why, for report.md.
Skipped = tuple[str, str]


def write_csv(table: Table, out: Path, lineterminator: str = "\n",
              partial: str | None = None) -> Path:
    """The CSV exporter: a table as `out/NAME.csv`, its cells as they are (compare.csv ends
    its lines in CRLF, as the csv module wrote it). A partial report's CSV says so in a first
    column, `partial`, on every row: a CSV read alone must not pass for the sweep's."""
    path = out / f"{table.name}.csv"
    frame = table.frame if partial is None else table.frame.assign(**{"partial": partial})[
        ["partial", *table.frame.columns]]
    frame.to_csv(path, index=False, lineterminator=lineterminator)
    return path


# ---- PNG --------------------------------------------------------------------------------------


def write_plots(wanted: list[tuple[str, Drawer, pd.DataFrame]], sets: SampleSets,
                out: Path) -> tuple[list[Path], list[Skipped]]:
    """Draw each section's plot (its file name, its drawer, the rows it selected: the section
    registry, report/registry.py, names them) where the rows allow it.

    Returns the files and the plots skipped, with why, in the order given: the report's
    (report.md lists the skipped ones).
    """
    written, skipped = [], []
    for name, draw, rows in wanted:
        figure = draw(rows, sets)
        if isinstance(figure, str):
            skipped.append((name, figure))
            continue
        written.append(save(figure, out / name))
    return written, skipped


def save(figure: Figure, path: Path, dpi: int = DPI, software: str | None = None) -> Path:
    """The PNG exporter: a drawn figure, trimmed to what it shows; `software` tags the file
    with its writer (compare.png's, by which `compare` knows its own file)."""
    figure.savefig(path, dpi=dpi, bbox_inches="tight",
                   **({"metadata": {"Software": software}} if software else {}))
    return path


# ---- Markdown ---------------------------------------------------------------------------------


def section_lines(section: Section, csv: bool = True, missing: bool = True) -> list[str]:
    """The Markdown exporter: a section's heading, what it shows, its tables (each with its
    notes and, where it was written as its own CSV, its file name), its findings (near-identical
    ones as one bullet), what it closes with and its plot. `compare` writes no CSV per table
    (`csv=False`); the report names its missing tables once at the top (`missing=False`)."""
    lines = [f"## {section.title}", "", *([section.intro, ""] if section.intro else [])]
    drawn = [t for t in section.tables if missing or t.missing is None]
    for table in drawn:
        if len(drawn) > 1:
            lines += [f"### {table.title}", ""]
        if table.missing is not None:
            lines += [f"_No table: {table.missing}._", ""]
            continue
        lines += [*markdown_table(table.frame), "", *note_lines(table.notes),
                  *([f"CSV: `{table.name}.csv`", ""] if csv else [])]
    if section.warnings:
        lines += [_bullet(group) for group in digest.grouped(section.warnings)]
        lines.append("")
    lines += [line for paragraph in section.closing for line in (paragraph, "")]
    if section.plot:
        lines += [f"![{section.title}]({section.plot})", ""]
    return lines


def _bullet(group: list[str]) -> str:
    """One finding, or near-identical ones: the first in full, then what the others are about
    (each in full in warnings.csv)."""
    if len(group) == 1:
        return f"- {group[0]}"
    others = "; ".join(digest.subject(w) for w in group[1:])
    return f"- {group[0]} _(and {len(group) - 1} more like it: {others}; warnings.csv has " \
        "each in full)_"


def note_lines(notes: list[str]) -> list[str]:
    """A table's notes under it, each its own paragraph: what a cell holds (the cold spread's
    `min / median / max`, not three runs in order), where its numbers come from."""
    return [line for note in dict.fromkeys(notes) for line in (f"Note: {note}", "")]


def markdown_table(frame: pd.DataFrame) -> list[str]:
    """A GitHub-flavoured Markdown table; '|' inside cells (max|x - ...|) is escaped, and so is
    what would be HTML or a bidi control (report/escape.py)."""
    def cells(values: list[Any]) -> str:
        return "| " + " | ".join(_cell(v) for v in values) + " |"

    lines = [cells(list(frame.columns)), "|" + "|".join(" --- " for _ in frame.columns) + "|"]
    # column by column (tolist), not row by row: iterating a pyarrow text column a cell at a
    # time was most of writing a 5000-run report.md (114,000 lines)
    columns = [frame.iloc[:, i].tolist() for i in range(frame.shape[1])]
    lines += [cells(list(row)) for row in zip(*columns, strict=True)] if columns else \
        [cells([]) for _ in range(len(frame))]
    return lines


def _cell(value: Any) -> str:
    text = "" if value is None or (not isinstance(value, str) and pd.isna(value)) else str(value)
    return escape.markdown_cell(text)
