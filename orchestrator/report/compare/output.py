"""What `compare` writes: compare.md, compare.csv, compare.png, and a rich table on the terminal.

The files are the report's exporters (report/exporters.py) over compare's sections and tables
(report/compare/tables.py): compare.md lists the differences between the two machines
and settings first, then one table per section `compare` shows (methods, first call, CPU,
warm-up), the figures set apart (different arithmetic or thread count: no verdict), the plain
A/B values (counts, accuracy) and what only one side measured. compare.csv has one row per
matched figure; compare.png draws each ratio B/A with the interval judged on a log axis. A file of
those names that `compare` did not write is never overwritten.
"""

from __future__ import annotations

from pathlib import Path

from matplotlib.figure import Figure  # the object API: Agg renders the PNG, no pyplot state
from rich.console import Console
from rich.table import Table
from rich.text import Text

from orchestrator.data import outputs
from orchestrator.report import escape, exporters, html_report
from orchestrator.report.compare import tables as compare_tables
from orchestrator.report.compare.judging import ONE_VALUE, Comparison
from orchestrator.report.compare.tables import (  # re-exported: what tests and users read here
    CSV_FIELDS,
    EARLIER_FIELDS,
    LEGACY_FIELDS,
    PLOT_ROWS,
    ci_cell,
    notable,
    plot_note,
    plotted,
    ratio_cell,
    value_cell,
)

__all__ = ["CSV_FIELDS", "EARLIER_FIELDS", "LEGACY_FIELDS", "PLOT_ROWS", "TERMINAL_ROWS",
           "draw", "notable", "plot_note", "plotted", "render_markdown", "show", "value_cell",
           "write", "write_csv", "write_png"]

MARK = "<!-- written by `python -m orchestrator compare` -->"
PNG_SOFTWARE = "orchestrator compare"
PNG_DPI = 110
NAMES = {"md": "compare.md", "csv": "compare.csv", "png": "compare.png", "html": "compare.html"}
COLOURS = {"same": "green", "faster": "cyan", "slower": "red", "inconclusive": "yellow",
           ONE_VALUE: "dim"}
PLOT_COLOURS = {"same": "tab:green", "faster": "tab:blue", "slower": "tab:red",
                "inconclusive": "tab:orange", ONE_VALUE: "0.5"}


# ---- Markdown, CSV, PNG: the report's exporters over compare's sections ----------------------


def render_markdown(c: Comparison) -> str:
    """compare.md: what the ratios and verdicts are, then the sections (compare/tables.py)."""
    out = [f"# {_title(c)}", "", _intro(c), ""]
    for section in compare_tables.sections(c):
        out += exporters.section_lines(section, csv=False)
    return "\n".join([MARK, *(escape.markdown(line) for line in out)])


def render_html(c: Comparison, out: Path) -> str:
    """compare.html: compare.md's sections as a page, compare.png (in `out`) inline."""
    page = html_report.sections_page(_title(c), [_intro(c)], compare_tables.sections(c), out,
                                     plot=NAMES["png"])
    return page.replace("\n", f"\n{MARK}\n", 1)  # after the doctype: no quirks mode


def _title(c: Comparison) -> str:
    return f"compare: A = {c.a.name}, B = {c.b.name}"


def _intro(c: Comparison) -> str:
    e = c.min_effect
    return (f"Ratio B/A of the figures over their processes (geometric mean of the process "
           "medians; the process is the unit, each side's processes and cold repeats pooled). "
           f"Verdict with a minimum effect of {e:.0%}: the interval (Welch's t on log process "
           "values; two variants of one sweep: paired by round) is judged at the level "
           f"{_family(c)}: slower/faster where it lies beyond [{1 / (1 + e):.3f}, {1 + e:.3f}], "
           "same where it lies inside, else inconclusive (with the processes a side that "
           "would decide). The interval printed is the interval judged. A side with one "
           "value: `no verdict (one value)` unless the change is beyond the other side's own "
           "spread between processes.")


def _family(c: Comparison) -> str:
    """The family's level in words: which correction, which promise."""
    level = "" if c.level is None else f"{compare_tables.level_words(c.level)} "
    if c.correction == "holm":
        return (f"{level}that Holm's correction over all figures gives (at most a 5% chance "
                "of any false verdict)")
    return (f"{level}that Benjamini-Hochberg over all figures gives (at most 5% of the "
            "verdicts given false, on average)")


def write_csv(c: Comparison, out: Path) -> Path:
    """compare.csv in `out`: one row per matched figure (CRLF line ends, as the csv module
    wrote them)."""
    return exporters.write_csv(compare_tables.rows_table(c), out, lineterminator="\r\n")


TERMINAL_ROWS = 200  # the table `compare` prints: at most this many rows (PLOT_ROWS' reason)


def draw(c: Comparison) -> Figure:
    """compare.png: each ratio B/A of the rows `compare_tables.plotted` selects, with the
    interval, on a log axis."""
    rows, total = plotted(c)
    fig = Figure(figsize=(9, 1.5 + 0.28 * max(len(rows), 1)))
    ax = fig.add_subplot()
    e = c.min_effect
    ax.axvspan(1 / (1 + e), 1 + e, color="0.9", label=f"±{e:.0%}: no effect")
    ax.axvline(1, color="0.5", lw=0.8)
    for y, r in enumerate(rows):
        colour = PLOT_COLOURS[r.verdict]
        if r.lo is not None and r.hi is not None:
            ax.plot([r.lo, r.hi], [y, y], color=colour, lw=2)
        ax.plot([r.ratio], [y], "o" if r.lo is not None else "D", color=colour, ms=4)
    ax.set_yticks(range(len(rows)), [f"{r.section}: {r.figure}" for r in rows], fontsize=7)
    ax.invert_yaxis()
    ax.set_xscale("log")
    level = "" if c.level is None else compare_tables.level_words(c.level) + " "
    ax.set_xlabel(f"B / A (over processes; above 1: B is slower); line: the {level}interval "
                  "judged, diamond: no interval")
    shown = "" if len(rows) == total else \
        f"\n{len(rows)} of {total} figures: the most changed (all in compare.csv)"
    ax.set_title(f"A = {c.a.name}   B = {c.b.name}{shown}", fontsize=9)
    ax.legend(loc="lower right", fontsize=7)
    fig.tight_layout()
    return fig


def write_png(c: Comparison, path: Path) -> None:
    exporters.save(draw(c), path, dpi=PNG_DPI, software=PNG_SOFTWARE)


# ---- writing, refusing what is not ours ---------------------------------------------------------


def _ours(path: Path) -> bool:
    """Whether an existing file is one that `compare` wrote (its mark, header or PNG tag)."""
    try:
        with path.open("rb") as file:  # the head only: the file may be anything, of any size
            head = file.read(4096)
    except OSError:
        return False
    if path.name == NAMES["md"]:
        return head.startswith(MARK.encode())
    if path.name == NAMES["html"]:
        return head.startswith(b"<!DOCTYPE html>\n" + MARK.encode())
    if path.name == NAMES["csv"]:
        return head.split(b"\n", 1)[0].strip() in {",".join(f).encode() for f in
                                                    (CSV_FIELDS, *EARLIER_FIELDS)}
    return head.startswith(b"\x89PNG") and PNG_SOFTWARE.encode() in head


def write(c: Comparison, out: Path, inputs: outputs.Inputs = outputs.NO_INPUTS) -> list[Path]:
    """compare.md, .csv, .png and .html in `out`; refuse files that are not ours
    (data/outputs.py: our manifest, or for a folder from before it, our marks)."""
    def render(stage: Path) -> list[Path]:
        md, png = stage / NAMES["md"], stage / NAMES["png"]
        md.write_text(render_markdown(c), encoding="utf-8")
        table = write_csv(c, stage)  # NAMES["csv"]: the rows table's name
        write_png(c, png)
        page = stage / NAMES["html"]
        page.write_text(render_html(c, stage), encoding="utf-8")
        return [md, table, png, page]

    return outputs.write_folder(out, "--out", "compare", inputs, render, _ours)


def show(c: Comparison, console: Console) -> None:
    """The verdict rows on the terminal, the verdict coloured; the machine differences first."""
    facts = Table("what", "A", "B", title=f"A = {c.a.name}   B = {c.b.name}: what differs")
    for f in c.facts:
        if f.differs:
            facts.add_row(f.what, Text(f.a), Text(f.b))  # Text: '[std, flex]' is no markup
    console.print(facts)
    table = Table("section", "figure", "A", "B", "B/A", "CI", "basis", "verdict")
    rows = [r for r in c.rows if r.verdict or r.apart]
    for r in notable(rows, TERMINAL_ROWS):
        verdict = Text(compare_tables.verdict_cell(r).replace("**", ""),
                       style=COLOURS[r.verdict]) if r.verdict else \
            Text("apart: " + r.apart if r.apart else "", style="dim")
        table.add_row(r.section, Text(r.figure), value_cell(r, r.a), value_cell(r, r.b),
                      ratio_cell(r), ci_cell(r), r.basis, verdict)
    console.print(table)
    if len(rows) > TERMINAL_ROWS:  # rich draws ~2 ms a row: 76,000 figures took minutes
        console.print(f"{TERMINAL_ROWS} of {len(rows)} figures shown (slower and faster "
                      "first, then inconclusive, then the rest, each by the size of the "
                      "change); compare.md and compare.csv have them all")
    console.print(", ".join(f"{n} {v}" for v, n in c.verdicts().items())
                  + f"; intervals at {_family(c)}")
