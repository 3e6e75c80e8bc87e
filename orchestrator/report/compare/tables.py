"""`compare`'s sections and tables: a comparison in the report's model (report/registry.py).

The sections, in compare.md's order: the machines and settings (their differences first; the
labels compared as one figure, the verdict counts and what compare.png leaves out after them),
one section per registered section that `compare` shows with verdicts (`CompareSection`: its
rows are the figures its registration took, its table the registration's or the verdict table),
the figures set apart (different arithmetic or thread count: no verdict), the plain A/B values
(counts, accuracy) and what only one side measured. compare.md is the report's Markdown
exporter over them (exporters.section_lines, no CSV per table); compare.csv the CSV exporter over
one table of every matched figure (`rows_table`); compare.png draws the rows `plotted` selects.
Cells are display strings, on one line each (a line break is shown as `\\n`).
"""

from __future__ import annotations

import math

import pandas as pd

from orchestrator.data.durations import format_duration
from orchestrator.report.compare.judging import ONE_VALUE, Comparison, Row
from orchestrator.report.registry import compare_sections
from orchestrator.report.section import Section
from orchestrator.report.tables import Table
from orchestrator.stats import power

CSV_FIELDS = ["section", "figure", "stat", "a", "b", "a_min", "b_min", "ratio", "ci_low",
              "ci_high", "basis", "detectable", "verdict", "apart", "note", "p_value",
              "p_holm", "a_tflops", "b_tflops", "a_peak_pct", "b_peak_pct", "ci_level",
              "processes_needed"]
# compare.csv's headers before these: without the interval's level and the processes needed,
# without % of peak, and without p-values and throughput
EARLIER_FIELDS = (CSV_FIELDS[:-2], CSV_FIELDS[:-4], CSV_FIELDS[:-8])
LEGACY_FIELDS = EARLIER_FIELDS[-1]
# compare.png grows 0.28 in a row: past this many it is no longer a figure one reads (and a log
# within the input cap has 38,000 matched figures, a picture matplotlib cannot even make)
PLOT_ROWS = 100
_NOTABLE = {"slower": 0, "faster": 0, "inconclusive": 1, ONE_VALUE: 2, "same": 3}


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


def _peak_pcts(row: Row) -> str:
    """That throughput as % of each side's device peak ('?' where a side's is unknown)."""
    if row.a_peak_pct is None and row.b_peak_pct is None:
        return ""
    return " / ".join("?" if p is None else f"{p:.1f}%" for p in (row.a_peak_pct, row.b_peak_pct))


def ci_cell(row: Row) -> str:
    """The interval judged, at its level where that is not 95% (the family's correction)."""
    if row.lo is None or row.hi is None:
        return ""
    level = "" if row.level is None or abs(row.level - 0.95) < 5e-5 else \
        f" ({level_words(row.level)})"
    return f"{row.lo:.3g} – {row.hi:.3g}{level}"


def level_words(level: float) -> str:
    """99.85%: the level with the digits that tell it from 100%."""
    digits = max(1, min(4, -math.floor(math.log10(max(1 - level, 1e-9))) - 1))
    return f"{100 * level:.{digits}f}%"


def verdict_cell(row: Row) -> str:
    """The verdict; an inconclusive one says the processes a side that would decide."""
    if row.verdict != "inconclusive" or row.needed is None:
        return f"**{row.verdict}**"
    more = f"over {row.needed - 1}" if row.needed > power.MOST else f"~{row.needed}"
    return f"**inconclusive** ({more} {'rounds' if row.paired else 'processes a side'} " \
        "would decide)"


def detectable_cell(row: Row) -> str:
    return "" if row.detectable is None else f"±{100 * row.detectable:.1f}%"


def one_line(text: str) -> str:
    """A value (an env value, a label) on one Markdown line: a line break would end the table
    row or the list item; it is shown escaped, as `\\n`."""
    return text.replace("\r", "\\r").replace("\n", "\\n")


def _num(value: float | None) -> str:
    return "" if value is None else f"{value:.9g}"


def _table(name: str, title: str, head: list[str], rows: list[list[str]]) -> Table:
    return Table(name, title, pd.DataFrame([[one_line(c) for c in r] for r in rows],
                                           columns=head))


# ---- the tables -------------------------------------------------------------------------------


def verdict_table(words: str, rows: list[Row]) -> Table:
    """A section's figures with their verdicts: both sides, B/A with its interval, what the
    verdict rests on, the smallest change it could have called, the throughput."""
    return _table(words, words, ["figure", "A", "B", "B/A", "CI", "basis", "detectable",
                                 "verdict", "A min / B min", "note", "TFLOP/s A / B",
                                 "% of peak A / B"],
                  [[r.figure, value_cell(r, r.a), value_cell(r, r.b), ratio_cell(r), ci_cell(r),
                    r.basis, detectable_cell(r), verdict_cell(r), _pair(r, r.a_min, r.b_min),
                    r.note, _rates(r), _peak_pcts(r)] for r in rows])


def rows_table(c: Comparison) -> Table:
    """compare.csv: every matched figure, its numbers in full (9 significant digits)."""
    return Table("compare", "every matched figure", pd.DataFrame(
        [[r.section, r.figure, r.stat, _num(r.a), _num(r.b), _num(r.a_min), _num(r.b_min),
          _num(r.ratio), _num(r.lo), _num(r.hi), r.basis, _num(r.detectable), r.verdict,
          r.apart, r.note, _num(r.p_value), _num(r.p_holm), _num(r.a_tflops),
          _num(r.b_tflops), _num(r.a_peak_pct), _num(r.b_peak_pct), _num(r.level),
          "" if r.needed is None else str(r.needed)] for r in c.rows],
        columns=CSV_FIELDS))


# ---- the sections -----------------------------------------------------------------------------


def sections(c: Comparison) -> list[Section]:
    """compare.md's sections, in its order."""
    out = [_machines(c)]
    for entry in compare_sections():  # the registered sections, in compare's order
        rows = [r for r in c.rows if r.section == entry.words and r.verdict]
        if entry.verdicts and rows:
            out.append(Section(entry.words, "", [(entry.table or verdict_table)(entry.words,
                                                                                rows)]))
    apart = [r for r in c.rows if r.apart]
    if apart:
        out.append(Section("Set apart: not the same measurement (no verdict)", "", [_table(
            "apart", "set apart", ["section", "figure", "A", "B", "B/A", "why"],
            [[r.section, r.figure, value_cell(r, r.a), value_cell(r, r.b), ratio_cell(r),
              r.apart] for r in apart])]))
    plain = [r for r in c.rows if not r.verdict and not r.apart]
    if plain:
        out.append(Section("Plain values (counts, accuracy: no verdict)", "", [_table(
            "plain", "plain values", ["section", "figure", "A", "B", "note"],
            [[r.section, r.figure, value_cell(r, r.a), value_cell(r, r.b), r.basis or r.note]
             for r in plain])]))
    for side, names in (("A", c.only_a), ("B", c.only_b)):
        if names:
            out.append(Section(f"Only in {side} ({len(names)})", "", [],
                               [one_line(n) for n in names]))
    return out


def _machines(c: Comparison) -> Section:
    """The two machines and settings, what differs first; the labels compared as one figure,
    then the verdict counts and what compare.png leaves out."""
    facts = _table("facts", "Machines and settings", ["what", "A", "B", ""],
                   [[f.what, f.a, f.b, "differs" if f.differs else "same"] for f in c.facts])
    counts = ", ".join(f"{n} {v}" for v, n in c.verdicts().items())
    note = plot_note(c)
    return Section("Machines and settings", "", [facts],
                   [f"compared as one figure: {one_line(p)}" for p in c.pairings],
                   closing=[f"Verdicts: {counts}.", *([note] if note else [])])


# ---- the rows compare.png and the terminal show -----------------------------------------------


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
