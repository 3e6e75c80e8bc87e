"""`python -m orchestrator compare A B`: a verdict per figure between two result sets.

A side is a results folder (its latest sweep), `folder@sweep`, or a captured log (`parse`'s
input, such as the chapter's listings): `compare_sides`. Figures are matched on what they
measure, never on run ids: `compare_match`. This module gives each matched time figure its
verdict; `compare_output` writes the result.

The verdict, for a figure whose two sides have raw samples (`# samples` lines): r = median(B) /
median(A) with a 95% percentile-bootstrap interval [lo, hi] (the two sides resampled
independently, `spread.ratio_ci`) and a minimum effect e (default 5%):

    lo >= 1/(1+e) and hi <= 1+e   same          (the interval lies inside the no-effect band)
    lo > 1+e                      slower        (B is slower: every plausible ratio is above)
    hi < 1/(1+e)                  faster
    otherwise                     inconclusive  (the data cannot tell a change of e from none)

Where a side has no samples (a captured log; single values such as a first call) the verdict
rests on one figure: r > 1+e slower, r < 1/(1+e) faster, else same, and the `basis` column says
`one figure`. `detectable` is the interval's half-width as a ratio (sqrt(hi/lo) - 1): changes
smaller than that, or than e, this data could not have shown. Only time figures get a verdict;
counts and accuracy statistics are listed as plain A/B values. Figures whose arithmetic
(precision) or thread count differs are listed apart, without a verdict, and before any figure
the differences between the two machines and settings are listed (`facts`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from orchestrator.errors import InputError
from orchestrator.report import sizes
from orchestrator.report.compare_match import (
    SECTIONS,
    TIME_METHODS,
    describe,
    match,
    measurements,
    pair_labels,
    section_of,
)
from orchestrator.report.compare_sides import Fact, Side, load_side, machine_facts
from orchestrator.report.spread import ratio, ratio_ci

__all__ = ["SECTIONS", "Comparison", "InputError", "Row", "Side", "compare", "judge",
           "load_side", "verdict"]

DEFAULT_MIN_EFFECT = 0.05
# the clocks of one steady matmul: a throughput means something (not a first call, no sync)
THROUGHPUT_METHODS = frozenset({"with_sync", "device_time", "device_time_no_flush",
                                "device_time_queued", "kernel_time", "readback", "timer"})
VERDICTS = ("same", "faster", "slower", "inconclusive")


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
    basis: str = ""  # 'samples n=20/20' | 'one figure' | '' (no verdict)
    detectable: float | None = None
    verdict: str = ""  # one of VERDICTS, '' for plain and apart rows
    apart: str = ""  # why there is no verdict: 'precision fp32 vs tf32', 'threads 8 vs 16'
    note: str = ""  # fields matched although unrecorded on one side
    # a steady matmul time's throughput, 2·M·N·M / t (report/sizes.py): TFLOP/s of each side
    a_tflops: float | None = None
    b_tflops: float | None = None


@dataclass
class Comparison:
    a: Side
    b: Side
    min_effect: float
    facts: list[Fact]
    pairings: list[str]  # labels compared as the same figure
    rows: list[Row]
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


def judge(a: float, b: float, a_samples: np.ndarray | None, b_samples: np.ndarray | None,
          min_effect: float) -> dict[str, Any]:
    """ratio, interval, basis, detectable and verdict for one time figure."""
    plain = ratio(b, a)
    if plain is None or plain == 0:
        return {"basis": "no ratio (a zero or non-finite figure)"}
    ci = None
    if a_samples is not None and b_samples is not None:
        ci = ratio_ci(b_samples, a_samples)
    of_samples = ratio(np.median(b_samples), np.median(a_samples)) if ci is not None else None
    if ci is None or of_samples is None or not all(math.isfinite(x) and x > 0 for x in ci):
        return {"ratio": plain, "basis": "one figure", "verdict": verdict(plain, plain,
                                                                           min_effect)}
    lo, hi = ci
    return {"ratio": of_samples, "lo": lo, "hi": hi,
            "basis": f"samples n={len(a_samples)}/{len(b_samples)}",
            "detectable": math.sqrt(hi / lo) - 1, "verdict": verdict(lo, hi, min_effect)}


def _apart(a: dict[str, Any], b: dict[str, Any]) -> str:
    why = []
    if a["precision"] and b["precision"] and a["precision"] != b["precision"]:
        why.append(f"precision {a['precision']} vs {b['precision']}")
    if a["device"] == "cpu" and a["threads"] is not None and b["threads"] is not None \
            and a["threads"] != b["threads"]:
        why.append(f"threads {a['threads']} vs {b['threads']}")
    return ", ".join(why)


def _row(a: dict[str, Any], b: dict[str, Any], note: str, min_effect: float) -> Row:
    row = Row(section_of(a), describe(a, b), a["stat"], a["value"], b["value"], a["min"],
              b["min"], note=note)
    if a["method"] not in TIME_METHODS or a["stat"] not in ("median", "value"):
        return row  # a count or an accuracy statistic: plain values
    if a["method"] in THROUGHPUT_METHODS:
        row.a_tflops = _tflops(a["shape"], a["value"])
        row.b_tflops = _tflops(b["shape"], b["value"])
    row.apart = _apart(a, b)
    if row.apart:
        row.ratio = ratio(b["value"], a["value"])
        return row
    for name, value in judge(a["value"], b["value"], a["samples"], b["samples"],
                             min_effect).items():
        setattr(row, name, value)
    return row


def _tflops(shape: str, seconds: float) -> float | None:
    rate = sizes.tflops(shape or "1024x1024", seconds)  # a log's section without a shape: 1024
    return None if rate is None else rate / 1e12


def compare(a: Side, b: Side, min_effect: float = DEFAULT_MIN_EFFECT) -> Comparison:
    """Match the two sides' figures and give each time figure its verdict."""
    if not min_effect > 0:
        raise InputError(f"--min-effect must be above 0 (got {min_effect})")
    ma, mb, pairings = pair_labels(measurements(a), measurements(b))
    pairs, only_a, only_b = match(ma, mb)
    if not pairs:
        raise InputError(f"{a.spec} and {b.spec} have no figure in common (nothing measured "
                         "the same thing on both sides)")
    order = {s: i for i, s in enumerate(SECTIONS)}
    pairs.sort(key=lambda p: (order[section_of(p[0])], p[0]["order"]))  # A's order per section
    rows = [_row(x, y, note, min_effect) for x, y, note in pairs]
    return Comparison(a, b, min_effect, machine_facts(a, b), pairings, rows,
                      list(dict.fromkeys(describe(x, x) for x in only_a)),
                      list(dict.fromkeys(describe(y, y) for y in only_b)))
