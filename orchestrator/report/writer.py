"""`python -m orchestrator report`: the chapter's tables as Markdown and CSV, and plots as PNG.

`write(data, out)` renders whatever the dataset covers, on any platform: one `report.md` with a
section per table, each table's notes (what its cells hold) and the measurement warnings under
it, and every table also as its own CSV (methods.csv, first_call.csv, ...) holding the same
display strings. A table or plot the data cannot fill is named in report.md with the reason,
never silently left out. The writer builds the parts (the sections, their plots, the lessons,
the opening) and hands them to the exporters (exporters.py: Markdown, CSV, PNG; html_report.py:
report.html).
"""

from __future__ import annotations

from pathlib import Path

from orchestrator import programs
from orchestrator.data import outputs
from orchestrator.data.dataset import Dataset
from orchestrator.report import escape, exporters, html_report, summary, tables
from orchestrator.report.opening import Opening
from orchestrator.report.sample_sets import sample_sets
from orchestrator.report.section import Thresholds
from orchestrator.report.sections import Section, build_sections

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
    written, skipped = exporters.write_plots(
        [(s.plot, s.draw, s.rows) for s in sections if s.plot and s.draw], sets, out)
    drawn = {p.name for p in written}
    for section in sections:
        section.plot = section.plot if section.plot in drawn else None
    shown = [t for s in sections for t in s.tables if t.missing is None]
    found = Opening.of(fig, sections, summary.lessons(fig, sets, {t.name for t in shown}))
    every = found.warnings_table()  # every finding in full, where there is one
    written += [exporters.write_csv(t, out, partial=partial)
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


# ---- Markdown -------------------------------------------------------------------------------


def render(data: Dataset, sections: list[Section], skipped: list[exporters.Skipped],
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
        lines += exporters.section_lines(section, missing=False)
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
