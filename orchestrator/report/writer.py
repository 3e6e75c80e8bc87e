"""`python -m orchestrator report`: the chapter's tables as Markdown and CSV, and plots as PNG.

`write(data, out)` renders whatever the dataset covers, on any platform: one `report.md` with a
section per table, the measurement warnings under each table, and every table also as its own
CSV (methods.csv, first_call.csv, ...) holding the same display strings. A table or plot the data
cannot fill is named in report.md with the reason, never silently left out.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd

from orchestrator.data.dataset import Dataset
from orchestrator.report import checks, plots, ratios, tables, timing_tables
from orchestrator.report.checks import Thresholds
from orchestrator.report.spread import sample_sets
from orchestrator.report.tables import Table

REPORT_NAME = "report.md"


@dataclass
class Section:
    """A heading, a sentence on what the table shows, its tables, and what to mind."""

    title: str
    intro: str
    tables: list[Table]
    warnings: list[str] = field(default_factory=list)
    plot: str | None = None  # the PNG shown under the section, when it was drawn


def write(data: Dataset, out: Path, *, thresholds: Thresholds | None = None) -> list[Path]:
    """Write report.md, one CSV per table and the plots into `out`; return the files."""
    th = thresholds or Thresholds()
    out.mkdir(parents=True, exist_ok=True)
    fig = tables.prepare(data)
    sets = sample_sets(data.samples)
    written, skipped = plots.write_plots(fig, sets, out)
    drawn = {p.name for p in written}
    sections = build_sections(data, fig, sets, th)
    for section in sections:
        section.plot = section.plot if section.plot in drawn else None
    written += [_write_csv(t, out) for s in sections for t in s.tables if t.missing is None]
    report = out / REPORT_NAME
    report.write_text(render(data, sections, skipped, th), encoding="utf-8")
    return [report, *written]


def build_sections(data: Dataset, fig: pd.DataFrame, sets: checks.SampleSets,
                   th: Thresholds) -> list[Section]:
    """The report's sections in the chapter's order, then what goes beyond it."""
    builders: list[Callable[[], Section]] = [
        lambda: _methods(fig, sets, th), lambda: _first_call(fig, th),
        lambda: _cpu(fig, sets, data.host, th), lambda: _accuracy(fig, th),
        lambda: _warmup(fig, th), lambda: _statistics(fig, sets),
        lambda: _failures(data.figures),
    ]
    return [build() for build in builders]


def _methods(fig: pd.DataFrame, sets: checks.SampleSets, th: Thresholds) -> Section:
    rows = timing_tables.methods_rows(fig)
    return Section(
        "1. Timing methods on the accelerator",
        "Each method timed the same matmul in one process (first call excluded): min and "
        "median of the timed runs, and the 1-minute load average around the runs.",
        [timing_tables.methods_table(fig)],
        checks.call_overhead(rows, th) + checks.no_time(rows) + checks.short_window(rows, th)
        + checks.spread(rows, sets, th)
        + checks.load(rows, th), "methods.png")


def _first_call(fig: pd.DataFrame, th: Thresholds) -> Section:
    rows = fig[(fig["device"] != "cpu") & fig["method"].isin(list(tables.FIRST_CALL_METHODS))]
    return Section(
        "2. First call across processes",
        "The first matmul of each process: when the call returned and when a sync after it "
        "returned. For burn, process 1 starts from a cold autotune cache, process 2 finds it "
        "warm.", [timing_tables.first_call_table(fig)],
        checks.first_call_cost(fig[fig["device"] != "cpu"], th) + checks.load(rows, th),
        "first_call.png")


def _cpu(fig: pd.DataFrame, sets: checks.SampleSets, host: dict[str, Any],
         th: Thresholds) -> Section:
    rows = fig[(fig["device"] == "cpu") & fig["method"].isin(tables.TIMING_METHODS)]
    return Section(
        "3. CPU builds and threads",
        "Minimum time of `with sync` (else `no sync`) per build and thread count; the BLAS "
        "PyTorch's build uses, when the host facts recorded it.",
        [timing_tables.cpu_table(fig, host), timing_tables.cpu_first_call_table(fig)],
        checks.cpu_sync(rows, th) + checks.thread_mismatch(fig) + checks.thread_gain(
            timing_tables.cpu_rows(fig, ["with_sync", "no_sync"]), th)
        + checks.spread(rows, sets, th) + checks.load(rows, th), "cpu_threads.png")


def _accuracy(fig: pd.DataFrame, th: Thresholds) -> Section:
    rows = tables.accuracy_rows(fig)
    notes = checks.bitwise_summary(rows) + checks.accuracy(rows, th)
    max_ref = tables.global_max_ref(fig)
    if max_ref:
        notes.insert(0, f"max |ref| = {max_ref} (one value for all builds, as printed).")
    return Section(
        "4. Same numbers from every build",
        "c = a @ b with a = sin(k), b = cos(k) in every build, against a float64 reference "
        "computed from the build's own f32 inputs, and against torch cpu.",
        [tables.accuracy_table(fig)], notes)


def _warmup(fig: pd.DataFrame, th: Thresholds) -> Section:
    rows = fig[fig["method"] == "warmup_timed_run"]
    return Section(
        "5. The warm-up puzzle",
        "burn: one warm-up without sync (result dropped, or kept alive unread), then timed "
        "runs that each end with a sync, on a cold and on a warm autotune cache.",
        [timing_tables.warmup_table(fig)],
        checks.warmup_first_run(rows, th) + checks.load(rows, th), "warmup.png")


def _statistics(fig: pd.DataFrame, sets: checks.SampleSets) -> Section:
    return Section(
        "6. Beyond the chapter: spread, confidence and ratios",
        "From the raw samples: each median with its 95% confidence interval (order "
        "statistics), and burn / PyTorch time ratios of the same measurement with a bootstrap "
        "95% interval of the median ratio (fixed seed).",
        [ratios.spread_table(fig, sets), ratios.ratio_table(fig, sets)])


def _failures(figures: pd.DataFrame) -> Section:
    return Section("7. Runs skipped or failed",
                   "Runs that measured nothing, with the reason recorded for them.",
                   [tables.failures_table(figures)], tables.unexpected_successes(figures))


def _write_csv(table: Table, out: Path) -> Path:
    path = out / f"{table.name}.csv"
    table.frame.to_csv(path, index=False)
    return path


# ---- Markdown -------------------------------------------------------------------------------


def render(data: Dataset, sections: list[Section], skipped: list[plots.Skipped],
           th: Thresholds) -> str:
    """The whole report.md."""
    lines = ["# Timing report", "", *_source_lines(data, th), ""]
    for section in sections:
        lines += _section_lines(section)
    if skipped:
        lines += ["## Plots not drawn", ""]
        lines += [f"- `{name}`: {why}." for name, why in skipped]
        lines.append("")
    return "\n".join(lines).rstrip() + "\n"


def _source_lines(data: Dataset, th: Thresholds) -> list[str]:
    host = data.host or {}
    runs = data.figures["run_id"].dropna().unique()
    logs = [r.removeprefix("log:") for r in runs if str(r).startswith("log:")]
    lines = [f"Source: captured log `{logs[0]}`." if logs else
             f"Source: results store, {len(runs)} runs."]
    facts = [("host", host.get("cpu_model")), ("OS", host.get("os")),
             ("GPUs", ", ".join(g.get("name", "") for g in host.get("gpus") or [])),
             ("torch", (host.get("torch") or {}).get("version")), ("burn", host.get("burn")),
             ("rustc", host.get("rustc"))]
    lines += [f"{name}: {value}." for name, value in facts if value]
    if data.figures["load1_before"].isna().all() and data.figures["load1_after"].isna().all():
        lines.append("The load average was not recorded (a captured log does not carry it).")
    lines.append(f"Warning thresholds: load above {th.load1:g}, median/min above "
                 f"{th.spread:g}, first run above {th.first_run:g}× a steady run.")
    return lines


def _section_lines(section: Section) -> list[str]:
    lines = [f"## {section.title}", "", section.intro, ""]
    for table in section.tables:
        if len(section.tables) > 1:
            lines += [f"### {table.title}", ""]
        if table.missing is not None:
            lines += [f"_No table: {table.missing}._", ""]
            continue
        lines += [*markdown_table(table.frame), "", f"CSV: `{table.name}.csv`", ""]
    if section.warnings:
        lines += [f"- {w}" for w in section.warnings]
        lines.append("")
    if section.plot:
        lines += [f"![{section.title}]({section.plot})", ""]
    return lines


def markdown_table(frame: pd.DataFrame) -> list[str]:
    """A GitHub-flavoured Markdown table; '|' inside cells (max|x - ...|) is escaped."""
    def cells(values: list[Any]) -> str:
        return "| " + " | ".join(_cell(v) for v in values) + " |"

    lines = [cells(list(frame.columns)), "|" + "|".join(" --- " for _ in frame.columns) + "|"]
    lines += [cells(list(row)) for row in frame.itertuples(index=False, name=None)]
    return lines


def _cell(value: Any) -> str:
    text = "" if value is None or (not isinstance(value, str) and pd.isna(value)) else str(value)
    return text.replace("|", "\\|").replace("\n", " ")
