"""Beyond the chapter: how certain each median is, and each candidate / reference ratio (burn /
PyTorch, JAX / PyTorch: every program against the registry's reference) with their spread.

Both need the raw samples (`# samples` lines); from summary lines alone the report can give the
ratio of minima and of medians, but no interval.

The statistics section pairs the runs once (`pairs`, the bootstrap included) and hands those
pairs to both ratio tables and to the arithmetic check.
"""

from __future__ import annotations

import functools
from typing import Any, NamedTuple

import numpy as np
import pandas as pd

from orchestrator import programs, vocabulary
from orchestrator.data import frame_records
from orchestrator.report import arithmetic, process_table
from orchestrator.report.arithmetic_checks import mixed_note
from orchestrator.report.cells import duration
from orchestrator.report.names import run_name
from orchestrator.report.tables import Table, empty, group_positions, one_unit_per, ordered
from orchestrator.report.timing_tables import cpu_rows, methods_rows
from orchestrator.stats import intervals
from orchestrator.stats.spread import LEVEL, ratio, ratio_ci, summaries

SampleSets = dict[str, np.ndarray]
# Accelerators that PyTorch and burn reach under different labels, by platform.
PLATFORMS = {"mps": "apple", "metal": "apple", "cuda": "cuda"}
Record = dict[str, Any]  # a row as a plain dict (data.frame_records.records)


def _pct(part: float, whole: float) -> str:
    share = ratio(part, whole)
    return "" if share is None else f"{100 * share:.0f}%"


# ---- confidence of each median --------------------------------------------------------------


def spread_table(fig: pd.DataFrame, sets: SampleSets) -> Table:
    """One row per summary line with raw samples: n, min, median, its 95% CI, IQR."""
    title = f"Spread of the raw samples, with {LEVEL:.0%} CI of each median"
    methods = [*vocabulary.method_keys(table1=True), *_beyond_table1()]
    mins = fig[(fig["stat"] == "min") & fig["method"].isin(methods)]
    mins = mins[mins["sample_key"].isin(list(sets))]
    if mins.empty:
        return empty("spread", title, "no raw samples in this data (`# samples` lines)")
    from_store = bool((mins["section"] == "").all())
    # figures of 2+ processes, their interval: read only where a set is too small for its own
    pooled = functools.cache(lambda: process_table.processes_of(fig, sets))
    keys = mins["sample_key"].tolist()
    spreads = summaries({k: sets[k] for k in keys})  # every set's numbers at once
    records = []
    named = frame_records.records(mins[[c for c in _SPREAD_FIELDS if c in mins]])
    for row, key in zip(named, keys, strict=True):
        one = spreads[key]
        ci = one.ci
        record = {"experiment": row["experiment"]} if from_store else {}
        record.update({
            "run": run_name(row, context=True), "method": _spread_words(row),
            "n": one.n,
            "min": duration(one.minimum), "median": duration(one.median),
            "median 95% CI": f"{duration(ci[0])} – {duration(ci[1])}" if ci else
            _over_processes(pooled().get(key)),
            "IQR": duration(one.iqr), "IQR / median": _pct(one.iqr, one.median),
        })
        records.append(record)
    return Table("spread", title, pd.DataFrame(records))


# what a spread row reads of its figure (run_name, _spread_words)
_SPREAD_FIELDS = ["experiment", "framework", "label", "device", "process", "cache",
                  "threads_key", "method", "profiler"]


def _spread_words(row: Record) -> str:
    """The method's words; a kernel time with its profiler: 'kernel time (ncu)'."""
    return vocabulary.figure_words(row["method"], row.get("profiler"), short=True)


def _over_processes(e: intervals.Estimate | None) -> str:
    """Too few samples for a within-process interval: the figure's, from its processes."""
    if e is None or e.half_width is None:
        return "n too small"
    return f"over {e.processes} processes: ±{100 * e.half_width:.1f}% (table 'figures')"


# ---- burn / PyTorch -------------------------------------------------------------------------


def ratio_table(pairs: list[dict[str, Any]]) -> Table:
    """burn time / PyTorch time for each pair that measured the same thing on the same device
    in the same arithmetic (fp32 with fp32, tf32 with tf32)."""
    records = [r for r in pairs if not r["_mixed"]]
    if not records:
        mine, ref = _titles()
        title = f"{mine} / {ref}: time ratios (above 1: {mine} is slower)"
        return empty("ratios", title, f"no {mine} and {ref} runs of the same kind to compare")
    frame, word, title = _roles(records)
    title += f": time ratios (above 1: {word} is slower)"
    arith = frame.pop("arithmetic")
    return Table("ratios", title, frame.assign(arithmetic=arith) if arith.any() else frame)


def mixed_ratio_table(pairs: list[dict[str, Any]]) -> Table:
    """The pairs of different arithmetic (burn TF32 / PyTorch FP32), set apart and flagged."""
    records = [r for r in pairs if r["_mixed"]]
    if not records:
        title = "Set apart: {} / {} of different arithmetic (not like for like)".format(*_titles())
        return empty("ratios_mixed", title, "every pair computes in the same arithmetic")
    frame, _word, title = _roles(records)
    title = f"Set apart: {title} of different arithmetic (not like for like)"
    return Table("ratios_mixed", title, frame[["arithmetic", *(c for c in frame
                                                              if c != "arithmetic")]])


def arithmetic_checks(pairs: list[dict[str, Any]]) -> list[str]:
    """Under the ratio tables: which pairs compare two arithmetics, and what was done."""
    records = pairs
    mixed = [(r["candidate"], r["_b_prec"], r["reference"], r["_t_prec"]) for r in records
             if r["_mixed"]]
    equals = {r["candidate"] for r in records if not r["_mixed"]}
    return [mixed_note(mixed, equals)] if mixed else []


def pairs(fig: pd.DataFrame, sets: SampleSets) -> list[dict[str, Any]]:
    """Every burn / PyTorch pair with its ratios ('_'-columns for the checks), selected once."""
    return _accelerator_ratios(fig, sets) + _cpu_ratios(fig, sets)


def _roles(records: list[dict[str, Any]]) -> tuple[pd.DataFrame, str, str]:
    """The table in roles named by the programs' titles: the candidate column takes its
    program's title where one candidate is in the table ('burn'), else 'candidate'; the
    reference column its title ('PyTorch'). Also the word for 'slower' and 'X / REF'."""
    candidates = list(dict.fromkeys(r["_candidate"] for r in records))
    word = candidates[0] if len(candidates) == 1 else "candidate"
    reference = records[0]["_reference"]
    frame = _public(pd.DataFrame(records)).rename(
        columns={"candidate": word, "reference": reference})
    if not frame["experiment"].astype(bool).any():  # a captured log: its sections, no experiments
        frame = frame.drop(columns="experiment")
    return frame, word, f"{' and '.join(candidates)} / {reference}"


def _public(frame: pd.DataFrame) -> pd.DataFrame:
    """Without the helper columns ('_mixed', ...) a record carries for the checks."""
    return frame[[c for c in frame if not c.startswith("_")]]


def ratio_methods() -> list[str]:
    """The ratio table's accelerator methods, the headline first (vocabulary `ratio`): the
    kernels' own time (ncu / ncu where both have a profile run, else CUPTI / CUPTI), the
    device time with the launch gap kept out, then the chapter's clocks."""
    return vocabulary.ratio_methods()


def _beyond_table1() -> list[str]:
    """The ratio methods table 1 does not show (kernel time, queued device time)."""
    table1 = set(vocabulary.method_keys(table1=True))
    return [m for m in vocabulary.ratio_methods() if m not in table1]


def ratio_rows(fig: pd.DataFrame) -> pd.DataFrame:
    """Table 1's rows (its experiments only: no size sweep) plus the per-matmul kernel time and
    queued device time of the same experiments, one run per target, method and profiler."""
    rows = methods_rows(fig)
    extra = fig[(fig["device"] != "cpu") & fig["method"].isin(_beyond_table1())
                & fig["stat"].isin(["min", "median"])]
    if "kernel" in extra:  # per matmul only, never one kernel of several
        extra = extra[extra["kernel"].isna() | (extra["kernel"].astype(object) == "")]
    if not rows.empty:
        extra = extra[extra["experiment"].isin(set(rows["experiment"]))]
    profiler = extra["profiler"].astype(object).where(extra["profiler"].notna(), "") \
        if "profiler" in extra else pd.Series("", index=extra.index, dtype=object)
    extra = one_unit_per(extra.assign(profiler=profiler),
                         ["framework", "label", "shape", "method", "profiler"])
    rows = rows.assign(profiler="") if not rows.empty else rows
    return pd.concat([extra, rows], ignore_index=True) if not extra.empty else rows


# what a pair reads of a row (run_name, _method_words, _ratio_record), as a plain record
_PAIR_FIELDS = ["framework", "label", "device", "shape", "method", "stat", "profiler",
                "sample_key", "value_s", "process", "cache", "threads_key", "paired"]


def _records(rows: pd.DataFrame) -> list[Record]:
    """The rows a pairing reads, as dicts with their arithmetic (`_precision`), made once:
    a frame, a mask and a `pd.Series` per pair were most of a 5000-run report's time."""
    picked = rows[[c for c in _PAIR_FIELDS if c in rows]]
    return frame_records.records(picked.assign(_precision=arithmetic.precision_column(rows)))


def _accelerator_ratios(fig: pd.DataFrame, sets: SampleSets) -> list[dict[str, Any]]:
    rows = ratio_rows(fig)
    if rows.empty:
        return []
    # 'cuda [tf32]' runs on cuda: the arithmetic is paired below, not by platform
    base = rows["label"].map(lambda label: label.split(" [", 1)[0])
    rows = rows.assign(platform=base.map(lambda d: PLATFORMS.get(d, d)), paired=_paired(rows))
    records = _records(rows)
    out = []
    # like with like: one experiment, one shape, one method (and one profiler) per pair
    groups = group_positions(rows, ["platform", "paired", "shape", "method"])
    for platform, experiment, shape in ordered(rows, ["platform", "paired", "shape"]):
        for method in ratio_methods():  # no sync times only the call
            mine = groups.get((platform, experiment, shape, method))
            if mine is not None:
                out += _against_reference(_one_profiler([records[i] for i in mine]), sets)
    return out


def _paired(rows: pd.DataFrame) -> pd.Series:
    """The experiment a pair must share: a store's; a captured log's sections are one per
    program (`torch cpu threads 1`, `burn flex template`), so a log pairs across them."""
    return rows["experiment"].where(rows["section"] == "", "")


def _one_profiler(rows: list[Record]) -> list[Record]:
    """Kernel time of one profiler on both sides: ncu where every framework here has an ncu
    figure, else CUPTI (bench_py's own; burn has none, so no pair)."""
    if not vocabulary.names_profiler(rows[0]["method"]):
        return rows
    for profiler in ("ncu", "cupti"):
        mine = [r for r in rows if r["profiler"] == profiler]
        if len({r["framework"] for r in mine}) > 1:
            return mine
    ncu = [r for r in rows if r["profiler"] == "ncu"]
    return ncu or rows


def _cpu_ratios(fig: pd.DataFrame, sets: SampleSets) -> list[dict[str, Any]]:
    rows = cpu_rows(fig, vocabulary.cpu_methods())
    if rows.empty:
        return []
    out = []
    rows = rows.assign(paired=_paired(rows)).dropna(subset=["threads_key"])
    records = _records(rows)
    for mine in group_positions(rows, ["threads_key", "paired", "shape"]).values():
        out += _against_reference([records[i] for i in mine], sets)
    return out


class _Target(NamedTuple):
    """One target's rows as a pair needs them, read once: its first min and median rows and
    its arithmetic (a mask and a frame per pair were most of a 500-run report's time)."""

    min: Record | None
    median: Record | None
    precision: str


def _targets(rows: list[Record]) -> dict[str, list[_Target]]:
    """framework -> its targets (one per label), each in order of first appearance."""
    grouped: dict[tuple[Any, Any], list[Record]] = {}
    for r in rows:
        grouped.setdefault((r["framework"], r["label"]), []).append(r)
    out: dict[str, list[_Target]] = {}
    for (framework, _label), mine in grouped.items():
        first_min, first_median = (next((r for r in mine if r["stat"] == stat), None)
                                   for stat in ("min", "median"))
        precision = next((str(r["_precision"]) for r in mine if r["_precision"] != ""), "")
        out.setdefault(framework, []).append(_Target(first_min, first_median, precision))
    return out


def _against_reference(rows: list[Record], sets: SampleSets) -> list[dict[str, Any]]:
    """Every other program's rows against the reference program's (burn against PyTorch):
    every candidate target against every reference target among rows of one method and
    place."""
    found = programs.reference()
    if found is None:
        return []
    reference = found[0].name
    targets = _targets(rows)
    out = []
    for name in programs.active().by_name:
        if name == reference:
            continue
        for ref in targets.get(reference, []):
            for candidate in targets.get(name, []):
                record = _ratio_record(ref, candidate, sets)
                out += [record] if record else []
    return out


def _ratio_record(torch: _Target, burn: _Target, sets: SampleSets) -> dict[str, Any] | None:
    t_min, b_min = torch.min, burn.min
    if t_min is None or b_min is None:
        return None
    t_med, b_med = torch.median, burn.median
    t_set, b_set = sets.get(t_min["sample_key"]), sets.get(b_min["sample_key"])
    ci = ratio_ci(b_set, t_set) if t_set is not None and b_set is not None else None
    b_prec, t_prec = burn.precision, torch.precision
    mixed = arithmetic.is_mixed(b_prec, t_prec)
    return {
        "arithmetic": f"{arithmetic.words(b_prec)} vs {arithmetic.words(t_prec)}" if mixed
        else b_prec,
        "_mixed": mixed, "_b_prec": b_prec, "_t_prec": t_prec,
        "_candidate": _title(b_min["framework"]), "_reference": _title(t_min["framework"]),
        "experiment": b_min["paired"], "shape": b_min["shape"],
        "candidate": run_name(b_min), "reference": run_name(t_min),
        "method": _method_words(b_min, t_min),
        "min ratio": _times(ratio(b_min["value_s"], t_min["value_s"])),
        "median ratio": _times(ratio(b_med["value_s"], t_med["value_s"]))
        if t_med is not None and b_med is not None else "",
        "median ratio 95% CI": f"{_times(ci[0])} – {_times(ci[1])}" if ci else "no samples",
    }


def _method_words(b_min: Record, t_min: Record) -> str:
    """'kernel time (ncu / ncu)': a kernel time names the profiler of each side."""
    words = vocabulary.words(b_min["method"])
    if not vocabulary.names_profiler(b_min["method"]):
        return words
    b, t = (vocabulary.profiler_words(r.get("profiler"), short=True) or "?"
            for r in (b_min, t_min))
    return f"{words} ({b} / {t})"


def _titles() -> tuple[str, str]:
    """(the first candidate's title, the reference's): an empty table's words in roles."""
    found, others = programs.reference(), programs.candidates()
    ref = found[0].title if found is not None else "reference"
    return (others[0].title if others else "candidate"), ref


def _title(framework: str) -> str:
    found = programs.active().by_name.get(framework)
    return found.title if found is not None else framework


def _times(quotient: float | None) -> str:
    """'1.23×', or '?' where spread.ratio found no ratio (a zero or non-finite time)."""
    return "?" if quotient is None else f"{quotient:.2f}×"
