"""What `compare` writes: compare.md, compare.csv, compare.png, and a rich table on the terminal.

compare.md lists the differences between the two machines and settings first, then one table
per chapter section (methods, first call, CPU, warm-up), the figures set apart (different
arithmetic or thread count: no verdict), the plain A/B values (counts, accuracy) and what only
one side measured. compare.csv has one row per matched figure; compare.png draws each ratio B/A
with its 95% interval on a log axis. A file of those names that `compare` did not write is
never overwritten.
"""

from __future__ import annotations

import csv
import math
from pathlib import Path

from matplotlib.figure import Figure  # the object API: Agg renders the PNG, no pyplot state
from rich.console import Console
from rich.table import Table
from rich.text import Text

from orchestrator.data import outputs
from orchestrator.data.durations import format_duration
from orchestrator.report.compare import ONE_VALUE, Comparison, Row, verdict_sections

MARK = "<!-- written by `python -m orchestrator compare` -->"
PNG_SOFTWARE = "orchestrator compare"
CSV_FIELDS = ["section", "figure", "stat", "a", "b", "a_min", "b_min", "ratio", "ci_low",
              "ci_high", "basis", "detectable", "verdict", "apart", "note", "p_value",
              "p_holm", "a_tflops", "b_tflops"]
LEGACY_FIELDS = CSV_FIELDS[:-4]  # a compare.csv from before the p-values and throughput columns
NAMES = {"md": "compare.md", "csv": "compare.csv", "png": "compare.png"}
COLOURS = {"same": "green", "faster": "cyan", "slower": "red", "inconclusive": "yellow",
           ONE_VALUE: "dim"}
PLOT_COLOURS = {"same": "tab:green", "faster": "tab:blue", "slower": "tab:red",
                "inconclusive": "tab:orange", ONE_VALUE: "0.5"}


# ---- cells ------------------------------------------------------------------------------------


def value_cell(row: Row, value: float | None) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return ""
    if row.stat in ("median", "value"):
        return format_duration(value) if value >= 0 else f"{value:.3g} s"
    return f"{value:.4g}"


def _pair(row: Row, a: float | None, b: float | None) -> str:
    return f"{value_cell(row, a)} / {value_cell(row, b)}" if a is not None else ""


def ratio_cell(row: Row) -> str:
    return "" if row.ratio is None else f"{row.ratio:.3g}×"


def _rates(row: Row) -> str:
    """The median's throughput on each side (2·M·N·M / t), where the figure times a matmul."""
    if row.a_tflops is None or row.b_tflops is None:
        return ""
    return f"{row.a_tflops:.3g} / {row.b_tflops:.3g}"


def ci_cell(row: Row) -> str:
    return "" if row.lo is None or row.hi is None else f"{row.lo:.3g} – {row.hi:.3g}"


def detectable_cell(row: Row) -> str:
    return "" if row.detectable is None else f"±{100 * row.detectable:.1f}%"


def _is_verdict_row(row: Row) -> bool:
    return bool(row.verdict)


# ---- Markdown ---------------------------------------------------------------------------------


def _one_line(text: str) -> str:
    """A value (an env value, a label) on one Markdown line: a line break would end the table
    row or the list item; it is shown escaped, as `\\n`."""
    return text.replace("\r", "\\r").replace("\n", "\\n")


def _md_table(head: list[str], rows: list[list[str]]) -> list[str]:
    def line(cells: list[str]) -> str:
        return "| " + " | ".join(_one_line(c).replace("|", "\\|") for c in cells) + " |"

    return [line(head), line(["---"] * len(head)), *(line(r) for r in rows), ""]


def render_markdown(c: Comparison) -> str:
    e = c.min_effect
    out = [MARK, f"# compare: A = {c.a.name}, B = {c.b.name}", "",
           f"Ratio B/A of the figures over their processes (geometric mean of the process "
           "medians; the process is the unit, each side's processes and cold repeats pooled). "
           f"Verdict with a minimum effect of {e:.0%}: slower/faster where the change is beyond "
           f"[{1 / (1 + e):.3f}, {1 + e:.3f}] at 5% over all figures, corrected by "
           f"{'Holm' if c.correction == 'holm' else 'Benjamini-Hochberg'}; same where "
           "the 95% interval (Welch's t on log process values) lies inside it; else "
           "inconclusive. A side with one value: `no verdict (one value)` unless the change is "
           "beyond the other side's own spread between processes.", "",
           "## Machines and settings", ""]
    facts = [[f.what, f.a, f.b, "differs" if f.differs else "same"] for f in c.facts]
    out += _md_table(["what", "A", "B", ""], facts)
    out += [f"- compared as one figure: {_one_line(p)}" for p in c.pairings]
    out += [""] if c.pairings else []
    counts = ", ".join(f"{n} {v}" for v, n in c.verdicts().items())
    out += [f"Verdicts: {counts}.", ""]
    out += [plot_note(c), ""] if plot_note(c) else []
    for section in verdict_sections():
        rows = [r for r in c.rows if r.section == section and _is_verdict_row(r)]
        if rows:
            out += [f"## {section}", ""]
            out += _md_table(["figure", "A", "B", "B/A", "95% CI", "basis", "detectable",
                              "verdict", "A min / B min", "note", "TFLOP/s A / B"],
                             [[r.figure, value_cell(r, r.a), value_cell(r, r.b), ratio_cell(r),
                               ci_cell(r), r.basis, detectable_cell(r), f"**{r.verdict}**",
                               _pair(r, r.a_min, r.b_min), r.note, _rates(r)] for r in rows])
    apart = [r for r in c.rows if r.apart]
    if apart:
        out += ["## Set apart: not the same measurement (no verdict)", ""]
        out += _md_table(["section", "figure", "A", "B", "B/A", "why"],
                         [[r.section, r.figure, value_cell(r, r.a), value_cell(r, r.b),
                           ratio_cell(r), r.apart] for r in apart])
    plain = [r for r in c.rows if not r.verdict and not r.apart]
    if plain:
        out += ["## Plain values (counts, accuracy: no verdict)", ""]
        out += _md_table(["section", "figure", "A", "B", "note"],
                         [[r.section, r.figure, value_cell(r, r.a), value_cell(r, r.b),
                           r.basis or r.note] for r in plain])
    for side, names in (("A", c.only_a), ("B", c.only_b)):
        if names:
            out += [f"## Only in {side} ({len(names)})", "",
                    *(f"- {_one_line(n)}" for n in names), ""]
    return "\n".join(out)


# ---- CSV, PNG --------------------------------------------------------------------------------


def write_csv(c: Comparison, path: Path) -> None:
    with path.open("w", newline="", encoding="utf-8") as fh:
        writer = csv.writer(fh)
        writer.writerow(CSV_FIELDS)
        for r in c.rows:
            writer.writerow([r.section, r.figure, r.stat, _num(r.a), _num(r.b), _num(r.a_min),
                             _num(r.b_min), _num(r.ratio), _num(r.lo), _num(r.hi), r.basis,
                             _num(r.detectable), r.verdict, r.apart, r.note, _num(r.p_value),
                             _num(r.p_holm), _num(r.a_tflops), _num(r.b_tflops)])


def _num(value: float | None) -> str:
    return "" if value is None else f"{value:.9g}"


# compare.png grows 0.28 in a row: past this many it is no longer a figure one reads (and a log
# within the input cap has 38,000 matched figures, a picture matplotlib cannot even make)
PLOT_ROWS = 100
TERMINAL_ROWS = 200  # likewise the table `compare` prints
_NOTABLE = {"slower": 0, "faster": 0, "inconclusive": 1, ONE_VALUE: 2, "same": 3}


def notable(rows: list[Row], limit: int) -> list[Row]:
    """At most `limit` rows, in their order: the slower and faster first, then inconclusive,
    then the rest, each by the size of the change |log B/A|."""
    if len(rows) <= limit:
        return rows
    ranked = sorted(range(len(rows)), key=lambda i: (
        _NOTABLE.get(rows[i].verdict, 4),
        -abs(math.log(rows[i].ratio)) if rows[i].ratio and rows[i].ratio > 0 else 0.0))
    return [rows[i] for i in sorted(ranked[:limit])]


def plotted(c: Comparison) -> tuple[list[Row], int]:
    """The rows compare.png draws (`notable`, at most PLOT_ROWS), and how many it could draw."""
    rows = [r for r in c.rows if r.verdict and r.ratio and r.ratio > 0]
    return notable(rows, PLOT_ROWS), len(rows)


def plot_note(c: Comparison) -> str:
    """'' when compare.png draws every figure with a verdict, else what it leaves out."""
    rows, total = plotted(c)
    return "" if len(rows) == total else (
        f"compare.png draws {len(rows)} of the {total} figures with a verdict (at most "
        f"{PLOT_ROWS}: slower and faster first, then inconclusive, then the rest, each by "
        "the size of the change); every figure is in compare.csv.")


def write_png(c: Comparison, path: Path) -> None:
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
    ax.set_xlabel("B / A (over processes; above 1: B is slower); line: 95% interval, "
                  "diamond: no interval")
    shown = "" if len(rows) == total else \
        f"\n{len(rows)} of {total} figures: the most changed (all in compare.csv)"
    ax.set_title(f"A = {c.a.name}   B = {c.b.name}{shown}", fontsize=9)
    ax.legend(loc="lower right", fontsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=110, bbox_inches="tight", metadata={"Software": PNG_SOFTWARE})


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
    if path.name == NAMES["csv"]:
        return head.split(b"\n", 1)[0].strip() in (",".join(CSV_FIELDS).encode(),
                                                    ",".join(LEGACY_FIELDS).encode())
    return head.startswith(b"\x89PNG") and PNG_SOFTWARE.encode() in head


def write(c: Comparison, out: Path, inputs: outputs.Inputs = outputs.NO_INPUTS) -> list[Path]:
    """compare.md, compare.csv and compare.png in `out`; refuse files that are not ours
    (data/outputs.py: our manifest, or for a folder from before it, our marks)."""
    def render(stage: Path) -> list[Path]:
        paths = {kind: stage / name for kind, name in NAMES.items()}
        paths["md"].write_text(render_markdown(c), encoding="utf-8")
        write_csv(c, paths["csv"])
        write_png(c, paths["png"])
        return list(paths.values())

    return outputs.write_folder(out, "--out", "compare", inputs, render, _ours)


def show(c: Comparison, console: Console) -> None:
    """The verdict rows on the terminal, the verdict coloured; the machine differences first."""
    facts = Table("what", "A", "B", title=f"A = {c.a.name}   B = {c.b.name}: what differs")
    for f in c.facts:
        if f.differs:
            facts.add_row(f.what, Text(f.a), Text(f.b))  # Text: '[std, flex]' is no markup
    console.print(facts)
    table = Table("section", "figure", "A", "B", "B/A", "95% CI", "basis", "verdict")
    rows = [r for r in c.rows if r.verdict or r.apart]
    for r in notable(rows, TERMINAL_ROWS):
        verdict = Text(r.verdict, style=COLOURS[r.verdict]) if r.verdict else \
            Text("apart: " + r.apart if r.apart else "", style="dim")
        table.add_row(r.section, Text(r.figure), value_cell(r, r.a), value_cell(r, r.b),
                      ratio_cell(r), ci_cell(r), r.basis, verdict)
    console.print(table)
    if len(rows) > TERMINAL_ROWS:  # rich draws ~2 ms a row: 76,000 figures took minutes
        console.print(f"{TERMINAL_ROWS} of {len(rows)} figures shown (slower and faster "
                      "first, then inconclusive, then the rest, each by the size of the "
                      "change); compare.md and compare.csv have them all")
    console.print(", ".join(f"{n} {v}" for v, n in c.verdicts().items()))
