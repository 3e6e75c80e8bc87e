"""One matched figure judged, as `compare` and `history` judge it: its `Row`, the verdict of its
interval, the family's correction (`finish`); and the record of a whole comparison
(`Comparison`). Which figure is which is report/compare/match.py's; `compare A B` itself
(matching two sides and judging every figure) is verdicts.py.

The process is the unit (stats/intervals.py): each side's figure pools all its processes
(cold repeats included), one value per process. r = B/A of the geometric means of the process
values, with an interval from Welch's t on the log process values (two variants of one sweep:
paired, a t on the per-round log ratios), and a minimum effect e (default 5%). Every figure
judged at once is one family: the p-values of "the interval leaves the band's edge" are
corrected by **Benjamini-Hochberg** (default: at most 5% of the verdicts given are false) or
**Holm** (`--correction holm`: at most 5% chance of any false verdict), which gives the
family's level q (stats/power.py), and every interval is printed at level 1 − q:

    interval beyond the band ±e    slower / faster  (by the side the ratio lies)
    interval inside the band       same
    otherwise                      inconclusive     (with the processes a side that would decide)

A side with one value for a figure (one process, a captured log, a single first call) gives
the ratio and `no verdict (one value)`, unless the effect is beyond what the other side's own
spread allows: a prediction interval of one more process of that side (t, p-1 df), Holm-
corrected like the rest. Both sides with one value: `no verdict (one value)`, always.
`detectable` is the smallest change the figure could have called (e plus the interval's
half-width at the family's level). Only time figures get a verdict; counts and accuracy
statistics are listed as plain A/B values. Figures whose arithmetic (precision) or thread
count differs are listed apart, without a verdict (`_apart`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

from orchestrator import vocabulary
from orchestrator.report import peaks, sizes
from orchestrator.report.compare.rows import DISPUTED_CLASS
from orchestrator.report.compare.sides import Fact, Side
from orchestrator.stats import intervals, power
from orchestrator.stats.spread import ratio

DEFAULT_MIN_EFFECT = 0.05
# the clocks of one steady matmul: a throughput means something (not a first call, no sync)
ONE_VALUE = "no verdict (one value)"
VERDICTS = ("same", "faster", "slower", "inconclusive", ONE_VALUE)
FAMILY_ALPHA = power.ALPHA  # BH: the share of false verdicts; Holm: the chance of any
DEFAULT_CORRECTION = power.DEFAULT_CORRECTION


@dataclass
class Row:
    """One matched figure: both sides' values and, for a time figure, the verdict."""

    section: str
    figure: str  # what it measures, in words
    stat: str  # 'median' (of a summary line, min beside it), 'value', or a count/accuracy stat
    a: float
    b: float
    a_min: float | None = None
    b_min: float | None = None
    ratio: float | None = None
    lo: float | None = None
    hi: float | None = None
    basis: str = ""  # 'processes 3/3, reps 20/20' | 'one value against 3 processes' | ...
    detectable: float | None = None
    verdict: str = ""  # one of VERDICTS, '' for plain and apart rows
    apart: str = ""  # why there is no verdict: 'precision fp32 vs tf32', 'threads 8 vs 16'
    note: str = ""  # fields matched although unrecorded on one side
    # a steady matmul time's throughput, 2·M·N·M / t (report/sizes.py): TFLOP/s of each side
    a_tflops: float | None = None
    b_tflops: float | None = None
    # that throughput as % of the side's device peak for the figure's arithmetic (report/peaks
    # .py); None where the peak or the arithmetic is unknown
    a_peak_pct: float | None = None
    b_peak_pct: float | None = None
    p_value: float | None = None  # of 'the interval leaves the band edge', uncorrected
    p_holm: float | None = None  # p_value adjusted by the comparison's correction
    inside: bool = False  # the interval lies inside the no-effect band
    level: float | None = None  # the interval's confidence level: 1 − the family's q
    needed: int | None = None  # inconclusive: processes a side that would decide (power.py)
    log_diff: float = 0.0
    se: float | None = None
    df: float | None = None
    spread: float | None = None  # the pooled log sd (paired: of the round differences)
    ran: int | None = None  # processes a side (paired: rounds) behind the interval
    paired: bool = False  # judged on per-round log ratios


@dataclass
class Comparison:
    a: Side
    b: Side
    min_effect: float
    facts: list[Fact]
    pairings: list[str]  # labels compared as the same figure
    rows: list[Row]
    correction: str = DEFAULT_CORRECTION  # over the family of figures: 'bh' or 'holm'
    level: float | None = None  # the intervals' confidence level (1 − the family's q)
    only_a: list[str] = field(default_factory=list)
    only_b: list[str] = field(default_factory=list)

    def verdicts(self) -> dict[str, int]:
        return {v: sum(r.verdict == v for r in self.rows) for v in VERDICTS}


# ---- verdicts -------------------------------------------------------------------------------


def verdict(lo: float, hi: float, min_effect: float) -> str:
    """The rule of the module docstring, for an interval [lo, hi] of the ratio B/A."""
    up, down = 1 + min_effect, 1 / (1 + min_effect)
    if lo > up:
        return "slower"
    if hi < down:
        return "faster"
    if lo >= down and hi <= up:
        return "same"
    return "inconclusive"


def judge(a: dict[str, Any], b: dict[str, Any], min_effect: float,
          pair: bool = False) -> dict[str, Any]:
    """ratio, 95% interval, basis and the uncorrected p-value for one time figure (`values`,
    `sample_sets`: one per process; `rounds`: each process's round, read when `pair`);
    `finish` sets the interval's level, the verdict and the processes needed after the
    family's correction."""
    # B/A reads each side's centre, log spread and counts, never its own interval: no bootstrap
    ea = intervals.estimate(a["values"], a["sample_sets"], bootstrap=False)
    eb = intervals.estimate(b["values"], b["sample_sets"], bootstrap=False)
    if ea is None or eb is None:
        return {"basis": "no ratio (a zero or non-finite figure)"}
    if pair and (rounds := _rounds(a, b)) is not None:
        mean, se, df = rounds
        basis = f"processes {ea.processes}/{eb.processes} paired by round" + (
            f", reps {ea.reps}/{eb.reps}" if ea.reps or eb.reps else "")
        r = intervals.RatioEstimate(math.exp(mean), None, None, mean, se, df, basis)
        spread: float | None = se * math.sqrt(df + 1)
    elif ea.processes >= 2 and eb.processes >= 2:
        r = intervals.ratio(ea, eb)
        spread = power.pooled_spread(ea.log_sd, eb.log_sd)
    elif ea.processes >= 2 or eb.processes >= 2:
        many, one = (ea, eb) if ea.processes >= 2 else (eb, ea)
        r = intervals.predict(many, one, one_is_b=one is eb)
        spread = None
    else:
        return {"ratio": math.exp(eb.log_mean - ea.log_mean), "basis": "one value per side",
                "verdict": ONE_VALUE}
    both = r.basis.startswith("processes")  # one value cannot show that nothing changed
    out: dict[str, Any] = {"ratio": r.ratio, "basis": r.basis, "log_diff": r.log_diff,
                           "se": r.se, "df": r.df, "spread": spread,
                           "paired": "paired" in r.basis,
                           "ran": min(ea.processes, eb.processes),
                           "p_value": power.p_decided(r.log_diff, r.se, r.df, min_effect, both)}
    if (at95 := power.bounds(r.log_diff, r.se, r.df, 1 - intervals.LEVEL)) is not None:
        out.update(lo=at95[0], hi=at95[1], level=intervals.LEVEL)
        out["detectable"] = intervals.detectable(r, min_effect)
    return out


def _rounds(a: dict[str, Any], b: dict[str, Any]) -> tuple[float, float, float] | None:
    """The paired (mean, se, df) of B/A's per-round log ratios when both sides ran the same
    rounds, one process each; else None (judged unpaired)."""
    ra, rb = a.get("rounds"), b.get("rounds")
    if not ra or not rb or len(set(ra)) != len(ra) or len(set(rb)) != len(rb) \
            or set(ra) != set(rb):
        return None
    va, vb = dict(zip(ra, a["values"], strict=True)), dict(zip(rb, b["values"], strict=True))
    order = sorted(va)
    return power.paired([va[k] for k in order], [vb[k] for k in order])


def finish(rows: list[Row], correction: str = DEFAULT_CORRECTION,
           min_effect: float = DEFAULT_MIN_EFFECT) -> float:
    """Benjamini-Hochberg (or Holm) over every figure with a p-value; every interval at the
    family's level 1 − q; then each figure's verdict from its interval, and for an
    inconclusive one the processes a side that would decide. Returns the level."""
    judged = [r for r in rows if r.p_value is not None]
    adjusted = intervals.CORRECTIONS[correction]([r.p_value for r in judged])
    q = power.family_level(adjusted, correction, FAMILY_ALPHA)
    for row, adj in zip(judged, adjusted, strict=True):
        row.p_holm = adj
        one = not row.basis.startswith("processes")
        found = power.bounds(row.log_diff, row.se, row.df, q)
        if found is None:
            continue
        row.lo, row.hi, row.level = found[0], found[1], 1 - q
        row.detectable = (1 + min_effect) * found[1] / row.ratio - 1 if row.ratio else None
        said = verdict(row.lo, row.hi, min_effect)
        row.inside = said == "same" and not one
        if said in ("slower", "faster"):
            row.verdict = said
        elif one:
            row.verdict = ONE_VALUE
        else:
            row.verdict = said
        if row.verdict == "inconclusive" and row.spread is not None:
            row.needed = power.needed(row.spread, min_effect, q, row.paired,
                                      log_diff=row.log_diff, ran=row.ran)
    return 1 - q


def _apart(a: dict[str, Any], b: dict[str, Any]) -> str:
    why = []
    if a["precision"] and b["precision"] and a["precision"] != b["precision"]:
        why.append(f"precision {a['precision']} vs {b['precision']}")
    # a side whose arithmetic as run is disputed is named, with what disagreed
    why += [f"{letter}'s arithmetic {side.get('arithmetic_source') or DISPUTED_CLASS}"
            for letter, side in (("A", a), ("B", b)) if side["precision"] == DISPUTED_CLASS]
    if a["device"] == "cpu" and a["threads"] is not None and b["threads"] is not None \
            and a["threads"] != b["threads"]:
        why.append(f"threads {a['threads']} vs {b['threads']}")
    return ", ".join(why)


def judged_row(section: str, figure: str, a: dict[str, Any], b: dict[str, Any], note: str,
               min_effect: float, hosts: tuple[dict[str, Any], dict[str, Any]] = ({}, {}),
               pair: bool = False) -> Row:
    """One matched figure (`section`, `figure`: its compare section and words, report/compare/
    match.py) as `compare` makes it, before the family's correction (`finish`); `history`
    judges each step of a figure's course with it."""
    row = Row(section, figure, a["stat"], a["value"], b["value"], a["min"], b["min"], note=note)
    if not vocabulary.is_time(a["method"]) or a["stat"] not in ("median", "value"):
        return row  # a count or an accuracy statistic: plain values
    if (entry := vocabulary.method(a["method"])) is not None and entry.throughput:
        row.a_tflops = _tflops(a["shape"], a["value"])
        row.b_tflops = _tflops(b["shape"], b["value"])
        row.a_peak_pct = _peak_pct(a, row.a_tflops, hosts[0])
        row.b_peak_pct = _peak_pct(b, row.b_tflops, hosts[1])
    row.apart = _apart(a, b)
    if row.apart:
        row.ratio = ratio(b["value"], a["value"])
        return row
    for name, value in judge(a, b, min_effect, pair).items():
        setattr(row, name, value)
    return row


def _tflops(shape: str, seconds: float) -> float | None:
    rate = sizes.tflops(shape or "1024x1024", seconds)  # a log's section without a shape: 1024
    return None if rate is None else rate / 1e12


def _peak_pct(side: dict[str, Any], tflops: float | None, host: dict[str, Any]) -> float | None:
    """% of the side's device peak for the figure's arithmetic, as report 6b reads it
    (sizes.arithmetic: unknown on an NVIDIA GPU is no percentage); None where not known."""
    if tflops is None:
        return None
    threads = side.get("threads")
    peak = peaks.device_peak(side["device"], host or {}, threads if side["device"] == "cpu"
                             else None, side.get("power_limit_w"), side.get("freq_mhz"))
    flops = peak.flops(sizes.arithmetic(side.get("precision") or "", peak))
    return None if flops is None else 100 * tflops * 1e12 / flops
