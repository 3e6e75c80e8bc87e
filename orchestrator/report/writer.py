"""`python -m orchestrator report`: the chapter's tables as Markdown and CSV, and plots as PNG.

`write(data, out)` renders whatever the dataset covers, on any platform: one `report.md` with a
section per table, each table's notes (what its cells hold) and the measurement warnings under
it, and every table also as its own CSV (methods.csv, first_call.csv, ...) holding the same
display strings. A table or plot the data
cannot fill is named in report.md with the reason, never silently left out.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pandas as pd

from orchestrator import programs
from orchestrator.data import outputs
from orchestrator.data.dataset import Dataset
from orchestrator.report import digest, escape, html_report, plots, summary, tables
from orchestrator.report.checks import Thresholds
from orchestrator.report.opening import Opening
from orchestrator.report.sample_sets import sample_sets
from orchestrator.report.sections import Section, build_sections
from orchestrator.report.tables import Table

REPORT_NAME = "report.md"
TITLE = "Timing report"
WRITER = "report"  # data/outputs.py: what wrote a folder's files


def write(data: Dataset, out: Path, *, thresholds: Thresholds | None = None,
          inputs: outputs.Inputs = outputs.NO_INPUTS, partial: str | None = None,
          scope: str | None = None, registry: programs.Registry | None = None) -> list[Path]:
    """Write report.md, one CSV per table and the plots into `out`; return the files. Files
    there that an earlier report did not write, or an input, are refused (data/outputs.py).
    `partial`: why this is a first report (builds still going on), said at its top; `scope`:
    which part of a store it shows where the store holds more (the latest of its sweeps);
    `registry`: whose programs name the builds and whose sections it shows (None: active)."""
    with programs.use(registry):
        return outputs.write_folder(
            out, "--out", WRITER, inputs,
            lambda stage: _render(data, stage, thresholds, partial, scope), legacy_report)


def _render(data: Dataset, out: Path, thresholds: Thresholds | None,
            partial: str | None = None, scope: str | None = None) -> list[Path]:
    text, written, (toc, body) = _whole(data, out, thresholds, partial, scope)
    page = html_report.page(TITLE, toc, [html_report.title_html(TITLE), *body])
    report = out / REPORT_NAME
    report.write_text(text, encoding="utf-8")
    html = out / html_report.PAGE_NAME
    html.write_text(page, encoding="utf-8")
    return [report, html, *written]


def whole(data: Dataset, out: Path, thresholds: Thresholds | None = None,
          registry: programs.Registry | None = None
          ) -> tuple[str, list[Path], html_report.Body]:
    """report.md's text, the CSVs and plots it names (written into `out`) and report.html's
    contents after its title (a variant sweep's report after its column groups:
    report/compare/side_by_side.py)."""
    with programs.use(registry):
        return _whole(data, out, thresholds)


def _whole(data: Dataset, out: Path, thresholds: Thresholds | None,
           partial: str | None = None, scope: str | None = None
           ) -> tuple[str, list[Path], html_report.Body]:
    """report.md's text, the CSVs and plots it names (written into `out`), report.html's
    contents after its title."""
    th = (thresholds or Thresholds()).for_host(data.host)  # the load limit scales with cores
    fig = tables.prepare(data)
    sets = sample_sets(data.samples)
    sections = build_sections(data, fig, sets, th)
    # each plot from the rows its section selected, the rows of its tables and checks
    written, skipped = plots.write_plots(
        [(s.plot, s.draw, s.rows) for s in sections if s.plot and s.draw], sets, out)
    drawn = {p.name for p in written}
    for section in sections:
        section.plot = section.plot if section.plot in drawn else None
    shown = [t for s in sections for t in s.tables if t.missing is None]
    found = Opening.of(fig, sections, summary.lessons(fig, sets, {t.name for t in shown}))
    every = found.warnings_table()  # every finding in full, where there is one
    written += [write_csv(t, out, partial=partial)
                for t in [*shown, *([every] if len(every.frame) else [])]]
    text = render(data, sections, skipped, th, found, partial, scope)
    top = [*([f"**{partial[0].upper()}{partial[1:]}.**"] if partial else []),
           *([f"**Note: {scope}.**"] if scope else []),
           *(f"**Warning: {gap}.**" for gap in data.gaps())]
    body = html_report.report_body(found, skipped, _source_lines(data, th), top, out)
    return text, written, body


def legacy_report(path: Path) -> bool:
    """A file a report from before manifests wrote: its report.md (first line '# Timing
    report') or a CSV or plot that report.md names."""
    try:
        text = (path.parent / REPORT_NAME).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return False
    if not text.startswith("# Timing report"):
        return False
    return path.name == REPORT_NAME or f"`{path.name}`" in text or f"]({path.name})" in text


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


# ---- Markdown -------------------------------------------------------------------------------


def render(data: Dataset, sections: list[Section], skipped: list[plots.Skipped],
           th: Thresholds, found: Opening | None = None, partial: str | None = None,
           scope: str | None = None) -> str:
    """The whole report.md: what was found first, then the sections that have something to
    show (the rest named once, under the findings). `scope`: which part of a store it shows
    where the store holds more (the latest of its sweeps)."""
    if found is None:
        fig = tables.prepare(data)
        found = Opening.of(fig, sections, summary.lessons(fig, {}, set()))
    lines = ["# Timing report", ""]
    if partial:  # the first thing said: this is not the sweep's report yet
        lines += [f"**{partial[0].upper()}{partial[1:]}.**", ""]
    if scope:  # before the source lines: not the whole store
        lines += [f"**Note: {scope}.**", ""]
    # then: a sweep not finished, or rows of the store left out (data.gaps)
    lines += [*(f"**Warning: {gap}.**\n" for gap in data.gaps()), *found.markdown(), "",
              *_source_lines(data, th), ""]
    for section in found.layout.sections:
        lines += section_lines(section, missing=False)
    if skipped:
        lines += ["## Plots not drawn", ""]
        lines += [f"- `{name}`: {why}." for name, why in skipped]
        lines.append("")
    return "\n".join(escape.markdown(line) for line in lines).rstrip() + "\n"


def _source_lines(data: Dataset, th: Thresholds) -> list[str]:
    host = data.host or {}
    runs = data.figures["run_id"].dropna().unique()
    logs = [r.removeprefix("log:") for r in runs if str(r).startswith("log:")]
    lines = [f"Source: captured log `{logs[0]}`." if logs else
             f"Source: results store, {len(runs)} runs."]
    facts = [("host", host.get("cpu_model")), ("OS", host.get("os")),
             ("GPUs", ", ".join(g.get("name", "") for g in host.get("gpus") or [])),
             # each program's own lines (torch, burn and rustc, JAX), as its facts recorded
             *(fact for p in programs.active().programs for fact in p.source_facts(host)),
             ("Nsight Compute", host.get("ncu")), ("project commit", host.get("git_commit")),
             # provenance the programs printed (burn's CUDA backend and kernel compiler)
             *((row.name, row.read(data.headers, host)) for p in programs.active().programs
               for row in p.fact_rows() if row.in_source)]
    lines += [f"{name}: {value}." for name, value in facts if value]
    if data.figures["load1_before"].isna().all() and data.figures["load1_after"].isna().all():
        lines.append("The load average was not recorded (a captured log does not carry it).")
    lines.append(f"Warning thresholds: load above {th.load_words()}, median/min above "
                 f"{th.spread:g}, first run above {th.first_run:g}× a steady run.")
    return lines


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
