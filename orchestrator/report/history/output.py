"""`python -m orchestrator history RESULTS... [--out DIR] [--fail-on slower]` and what it writes:
history.md, .html and .csv, one PNG per figure group, the terminal.

The report's exporters (report/exporters.py: a Markdown table, a CSV, a PNG) over the history
(report/history/course.py). history.md lists the sweeps in time order with what
changed at each step, then the change points, each with what else changed at that step, then
each group's courses (a figure per row, a sweep per column). history.csv has one row per
figure and sweep, with the step into it judged. `history-GROUP.png` draws each figure of a
group over the sweeps with its 95% interval, change points marked. history.html is history.md
as a page (report/html_report.py), the plots inline. Files of those names that
`history` did not write are never overwritten (data/outputs.py).

`run` is the command as a plain function: it reads the sweeps (timeline), builds each figure's
course and its change points (course), writes and prints them. Its exit code is a CI gate's:
1 where a figure's step into the latest sweep has a verdict named by `fail_on` (a decided
slowdown: `slower`), else 0 (`gate`); bad input is an InputError (exit 2).
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

import pandas as pd
from matplotlib.figure import Figure
from rich.console import Console
from rich.table import Table as RichTable
from rich.text import Text

from orchestrator.data import outputs
from orchestrator.report import exporters, html_report, plot_style
from orchestrator.report.cells import duration
from orchestrator.report.compare.rows import key_fields
from orchestrator.report.compare.tables import ci_cell, ratio_cell
from orchestrator.report.history import course, timeline
from orchestrator.report.history.course import Course, History, Step
from orchestrator.report.section import Section
from orchestrator.report.tables import Table

MARK = "<!-- written by `python -m orchestrator history` -->"
PNG_SOFTWARE = "orchestrator history"
PLOT_FIGURES = 10  # lines in one group's plot: its change points first, then the most moved
MARKS = {"slower": "▲", "faster": "▼"}
COLOURS = {"slower": "red", "faster": "cyan"}


def _changed_text(h: History, step: Step) -> str:
    found = h.changes.get((step.before, step.after), [])
    return "; ".join(str(c) for c in found) or "nothing recorded"


def sweeps_table(h: History) -> Table:
    rows = []
    for i, s in enumerate(h.sweeps):
        since = "" if i == 0 else "; ".join(str(c) for c in h.changes.get((i - 1, i), [])) \
            or ("—" if (i - 1, i) in h.changes else "no figure in common with the sweep before")
        rows.append({"#": i, "started (UTC)": s.when, "sweep": s.name, "host": s.host,
                     "project commit": s.commit[:12], "what changed since the sweep before":
                     since})
    return Table("sweeps", "Sweeps, oldest first", pd.DataFrame(rows))


def change_points_table(h: History) -> Table:
    rows = [{"section": c.section, "figure": c.figure, "step": f"#{s.before} → #{s.after}",
             "before": duration(s.row.a), "after": duration(s.row.b),
             "ratio": ratio_cell(s.row), "95% CI": ci_cell(s.row), "basis": s.row.basis,
             "p (corrected)": f"{s.row.p_holm:.2g}" if s.row.p_holm is not None else "",
             "verdict": s.row.verdict, "what else changed": _changed_text(h, s)}
            for c, s in h.change_points()]
    return Table("change_points", "Change points", pd.DataFrame(rows))


def groups(h: History) -> dict[str, list[Course]]:
    found: dict[str, list[Course]] = {}
    for c in h.courses:
        found.setdefault(c.section, []).append(c)
    return found


def course_table(h: History, section: str, courses: list[Course]) -> Table:
    rows = []
    for c in courses:
        cells = {f"#{i}": "" for i in range(len(h.sweeps))}
        for p in c.points:
            cells[f"#{p.sweep}"] = duration(p.value)
        for s in c.steps:
            if s.changed:
                cells[f"#{s.after}"] += f" {MARKS[s.row.verdict]}"
        rows.append({"figure": c.figure, **cells})
    return Table(f"courses_{slug(section)}", section, pd.DataFrame(rows))


def slug(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-") or "figures"


def _title(h: History) -> str:
    return f"history: {len(h.sweeps)} sweeps, {len(h.courses)} figures"


def _intro(h: History) -> str:
    e = h.min_effect
    word = "Holm" if h.correction == "holm" else "Benjamini-Hochberg"
    judged = sum(s.row.p_value is not None for c in h.courses for s in c.steps)
    return ("Each figure over the sweeps (the geometric mean of its process values, its 95% "
            "interval over processes). Each step of a figure (its sweep before → this one) is "
            "judged as `compare` judges a figure: B/A over processes, Welch's t on the log "
            f"process values; a change point where the change is beyond ±{e:.0%} at 5% over "
            f"all {judged} judged steps of the history, corrected by {word} (▲ slower, "
            "▼ faster). Noise between sweeps is `inconclusive` or `same`, never a change point.")


NO_CHANGE = "No change point: no figure moved beyond the band at the family's error rate."


def render_markdown(h: History, plot_names: dict[str, str]) -> str:
    out = [MARK, f"# {_title(h)}", "", _intro(h), ""]
    for table in (sweeps_table(h), change_points_table(h)):
        out += [f"## {table.title}", ""]
        out += exporters.markdown_table(table.frame) if not table.frame.empty else [NO_CHANGE]
        out.append("")
    for section, courses in groups(h).items():
        table = course_table(h, section, courses)
        out += [f"## {section}", "", *exporters.markdown_table(table.frame), ""]
        if section in plot_names:
            out += [f"![{section}]({plot_names[section]})", ""]
    return "\n".join(out)


def render_html(h: History, plot_names: dict[str, str], out: Path) -> str:
    """history.html: history.md's sweeps, change points (with what else changed at each) and
    each group's table with its plot (a PNG in `out`) inline, through the report's page."""
    points = change_points_table(h)
    if points.frame.empty:
        points.missing = NO_CHANGE.removesuffix(".")
    parts = [Section(t.title, "", [t]) for t in (sweeps_table(h), points)]
    parts += [Section(section, "", [course_table(h, section, courses)],
                      plot=plot_names.get(section)) for section, courses in groups(h).items()]
    page = html_report.sections_page(_title(h), [_intro(h)], parts, out)
    return page.replace("\n", f"\n{MARK}\n", 1)  # after the doctype: no quirks mode


CSV_FIELDS = ("section", "figure", *key_fields(), "experiment", "sweep_index", "sweep",
              "started_utc", "host", "value_s", "lo_s", "hi_s", "processes", "step_from",
              "ratio", "ratio_lo", "ratio_hi", "basis", "p_value", "p_corrected", "verdict",
              "what_changed")


def csv_table(h: History) -> Table:
    rows = []
    for c in h.courses:
        into = {s.after: s for s in c.steps}
        for p in c.points:
            s, sweep = into.get(p.sweep), h.sweeps[p.sweep]
            row = {"section": c.section, "figure": c.figure,
                   **dict(zip([*key_fields(), "experiment"], c.key, strict=True)),
                   "sweep_index": p.sweep, "sweep": sweep.name, "started_utc": sweep.when,
                   "host": sweep.host, "value_s": p.value, "lo_s": p.lo, "hi_s": p.hi,
                   "processes": p.processes}
            if s is not None:
                row.update(step_from=s.before, ratio=s.row.ratio, ratio_lo=s.row.lo,
                           ratio_hi=s.row.hi, basis=s.row.basis, p_value=s.row.p_value,
                           p_corrected=s.row.p_holm, verdict=s.row.verdict,
                           what_changed=_changed_text(h, s))
            rows.append(row)
    return Table("history", "history", pd.DataFrame(rows, columns=list(CSV_FIELDS)))


def _plotted(courses: list[Course]) -> list[Course]:
    def moved(c: Course) -> float:
        values = [p.value for p in c.points if p.value > 0]
        return max(values) / min(values) if values else 1.0

    ranked = sorted(courses, key=lambda c: (not any(s.changed for s in c.steps), -moved(c)))
    return [c for c in ranked if len(c.points) > 1][:PLOT_FIGURES]


def draw(h: History, section: str, courses: list[Course]) -> Figure:
    shown = _plotted(courses)
    fig, ax = plot_style.figure(10, 5)
    values = []
    names = [c.figure for c in shown]
    for n, c in enumerate(shown):
        # one name in two experiments (the methods' and the first calls' `with sync`)
        label = c.figure if names.count(c.figure) == 1 else f"{c.figure} ({c.key[-1]})"
        colour = plot_style.COLORS[n % len(plot_style.COLORS)]
        xs = [p.sweep for p in c.points]
        ys = [p.value for p in c.points]
        values += ys + [v for p in c.points for v in (p.lo, p.hi) if v is not None]
        low = [p.value - p.lo if p.lo is not None else 0.0 for p in c.points]
        high = [p.hi - p.value if p.hi is not None else 0.0 for p in c.points]
        ax.errorbar(xs, ys, yerr=[low, high], color=colour, marker="o", ms=3, lw=1,
                    capsize=2, label=label)
        for s in c.steps:
            if s.changed:
                y = next(p.value for p in c.points if p.sweep == s.after)
                ax.plot([s.after], [y], "^" if s.row.verdict == "slower" else "v", ms=11,
                        color="red" if s.row.verdict == "slower" else "tab:blue",
                        mfc="none", mew=2)
    plot_style.time_axis(ax, values, log_above=1.0)  # figures of many levels: always log
    ax.set_xticks(range(len(h.sweeps)), [f"#{i}\n{s.when}" for i, s in
                                         enumerate(h.sweeps)], fontsize=7)
    ax.set_xlabel("sweep, oldest first (open triangles: change points, ▲ slower ▼ faster)")
    ax.set_ylabel("time over processes, 95% interval" + plot_style.scale_word(ax))
    more = f" ({len(shown)} of {len(courses)} figures: changed first, then the most moved)" \
        if len(shown) < len(courses) else ""
    ax.set_title(f"{section}{more}", fontsize=9)
    if shown:
        plot_style.legend(ax)
    return fig


def _ours(path: Path) -> bool:
    try:
        with path.open("rb") as file:
            head = file.read(4096)
    except OSError:
        return False
    if path.suffix == ".md":
        return head.startswith(MARK.encode())
    if path.suffix == ".html":
        return head.startswith(b"<!DOCTYPE html>\n" + MARK.encode())
    if path.suffix == ".csv":
        return head.split(b"\n", 1)[0].strip() == ",".join(CSV_FIELDS).encode()
    return head.startswith(b"\x89PNG") and PNG_SOFTWARE.encode() in head


def write(h: History, out: Path, inputs: outputs.Inputs = outputs.NO_INPUTS) -> list[Path]:
    """history.md, history.html, history.csv and history-GROUP.png in `out`, refusing files
    not ours."""
    def render(stage: Path) -> list[Path]:
        names = {section: f"history-{slug(section)}.png" for section, courses
                 in groups(h).items() if _plotted(courses)}
        written = []
        for section, name in names.items():
            written.append(exporters.save(draw(h, section, groups(h)[section]), stage / name,
                                          software=PNG_SOFTWARE))
        md, page = stage / "history.md", stage / "history.html"
        md.write_text(render_markdown(h, names), encoding="utf-8")
        page.write_text(render_html(h, names, stage), encoding="utf-8")
        return [md, page, exporters.write_csv(csv_table(h), stage), *written]

    return outputs.write_folder(out, "--out", "history", inputs, render, _ours)


def show(h: History, console: Console) -> None:
    """The sweeps and the change points on the terminal."""
    sweeps = RichTable("#", "started (UTC)", "sweep", "what changed", title="history")
    for row in sweeps_table(h).frame.itertuples(index=False):
        sweeps.add_row(str(row[0]), row[1], Text(row[2]), Text(row[5]))
    console.print(sweeps)
    points = RichTable("figure", "step", "ratio", "95% CI", "verdict", "what else changed",
                       title="change points")
    for c, s in h.change_points():
        points.add_row(Text(c.figure), f"#{s.before} → #{s.after}", ratio_cell(s.row),
                       ci_cell(s.row), Text(s.row.verdict, style=COLOURS[s.row.verdict]),
                       Text(_changed_text(h, s)))
    console.print(points if h.change_points() else "no change point")
    last = h.last_step()
    counts = {v: sum(s.row.verdict == v for _c, s in last) for v in
              dict.fromkeys(s.row.verdict for _c, s in last)}
    console.print(f"last step (into #{len(h.sweeps) - 1}): " + (", ".join(
        f"{n} {v}" for v, n in counts.items()) or "no figure in common with an earlier sweep"))


# ---- the command ------------------------------------------------------------------------------


def gate(h: History, fail_on: list[str]) -> list[str]:
    """The figures whose step into the latest sweep has a verdict of `fail_on`, in words."""
    return [f"{c.figure}: {s.row.verdict} {s.row.ratio:.3g}× (#{s.before} → #{s.after})"
            for c, s in h.last_step() if s.row.verdict in fail_on and s.row.ratio is not None]


def run(results: list[str], out: Path, last: int | None, min_effect: float, correction: str,
        fail_on: list[str], console: Console, sources: list[Path] | None = None) -> int:
    """`python -m orchestrator history`: read the sweeps, build each figure's course, write
    the files, print the sweeps and change points; the exit code is the CI gate's."""
    h = course.build(timeline.load(results, last), min_effect, correction)
    written = write(h, out, outputs.Inputs.of(sources or []))
    # a table for a wide terminal; piped (CI logs) rich would squeeze it into 80 columns
    show(h, Console(highlight=False, width=None if sys.stdout.isatty() else 160))
    console.print(f"wrote {', '.join(str(p) for p in written)}", markup=False)
    failed = gate(h, fail_on)
    for line in failed:
        console.print(f"fail: {line}", markup=False)
    return 1 if failed else 0
