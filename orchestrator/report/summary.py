"""The report's first findings: the chapter's lessons as this machine measured them.

`lessons` are one sentence each with its figure, its 95% interval (or a verdict) and the table
it comes from: which clock lies and by how much, what a cold first call costs, which build is
fastest, whether every build computes the same numbers. Every figure is a process-level
estimate (report/process_table.pooled, stats/intervals): the same number the statistics
section shows. The writer hands them to the opening (report/opening.py: `Lesson`), which says
them first; what the opening reads off the sections (the warnings typed and counted, the
tables absent) is report/digest.py.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from orchestrator.report.cells import duration, scientific
from orchestrator.report.names import run_name
from orchestrator.report.opening import Lesson
from orchestrator.report.process_table import pooled
from orchestrator.report.tables import accuracy_rows
from orchestrator.stats import intervals

# ---- the chapter's lessons ------------------------------------------------------------------


def lessons(fig: pd.DataFrame, sets: dict[str, np.ndarray], tables: set[str]) -> list[Lesson]:
    """The lessons the data can tell; `tables`: the CSV names of the tables drawn (a lesson
    links the first of its tables that is there, else the statistics table)."""
    figures = pooled(fig, sets)
    found: list[Lesson] = []
    for make in (_clock_lesson, _first_call_lesson, _fastest_lesson):
        for text, wanted in make(figures):
            found.append(Lesson(text, next((t for t in wanted if t in tables), "figures")))
    accuracy = _accuracy_lesson(fig)
    if accuracy:
        found.append(Lesson(accuracy, "accuracy"))
    return found


def _name(row: dict[str, Any]) -> str:
    return run_name(pd.Series(row)) + (f", at {row['shape']}" if row.get("shape") else "")


def _interval(r: intervals.RatioEstimate) -> str:
    return f" [95% interval {r.lo:.3g}–{r.hi:.3g}]" if r.lo is not None else \
        " (one process: no interval)"


def _estimate(e: intervals.Estimate) -> str:
    return duration(e.value) + (f" [{duration(e.lo)}–{duration(e.hi)}]"
                                if e.lo is not None else "")


def _times(x: float) -> str:
    return f"{x:,.0f}" if x >= 100 else f"{x:.3g}"


def _by_target(figures: list[dict[str, Any]], methods: set[str]) -> dict[tuple[Any, ...],
                                                                        dict[str, Any]]:
    """(experiment, framework, label, device, shape, threads) -> method -> the first figure."""
    out: dict[tuple[Any, ...], dict[str, Any]] = {}
    for item in figures:
        row = item["row"]
        if row["method"] not in methods:
            continue
        key = tuple(row.get(k) for k in ("experiment", "framework", "label", "device", "shape",
                                         "threads_key"))
        out.setdefault(key, {}).setdefault(row["method"], item)
    return out


def _clock_lesson(figures: list[dict[str, Any]]) -> list[tuple[str, tuple[str, ...]]]:
    """Which clock lies: the target whose no-sync time is furthest below its with-sync time,
    on the accelerator and on the CPU apart (an accelerator's call returns before its work)."""
    said = []
    for accelerator in (True, False):
        pairs = []
        for methods in _by_target(figures, {"no_sync", "with_sync"}).values():
            if {"no_sync", "with_sync"} <= set(methods) and \
                    (methods["with_sync"]["row"]["device"] != "cpu") == accelerator:
                r = intervals.ratio(methods["no_sync"]["estimate"],
                                    methods["with_sync"]["estimate"])
                pairs.append((r.ratio, r, methods))
        if not pairs:
            continue
        ratio, r, methods = max(pairs, key=lambda p: p[0])
        row = methods["with_sync"]["row"]
        where = "the accelerator" if accelerator else "the CPU"
        # one process has no interval: a factor of 1.5 and more is no noise of a timer
        lies = r.lo > 1.05 if r.lo is not None else ratio > 1.5
        verdict = "the clock without a sync lies" if lies else \
            "no sync and with sync tell the same time" if ratio < 1.05 else \
            "no sync may read short (the interval does not say)"
        said.append((
            f"Which clock lies on {where}: {verdict}: {_name(row)} with sync "
            f"{_estimate(methods['with_sync']['estimate'])} is {_times(ratio)}× its no-sync "
            f"{_estimate(methods['no_sync']['estimate'])}{_interval(r)} "
            f"(the largest of {len(pairs)} target{'s' * (len(pairs) != 1)}).",
            ("methods", "cpu_threads") if accelerator else ("cpu_threads", "methods")))
    return said


FIRST_METHODS = ("first_call_after_sync", "first_call")


def _first_call_lesson(figures: list[dict[str, Any]]) -> list[tuple[str, tuple[str, ...]]]:
    """What a cold first call costs: the slowest cold (or first-process) first call against
    the same target's steady with-sync median."""
    steady = {key: m["with_sync"]["estimate"]
              for key, m in _by_target(figures, {"with_sync"}).items()}
    steady_of = {(k[1], k[2], k[3], k[4]): e for k, e in steady.items()}  # any experiment
    firsts = [item for item in figures if item["row"]["method"] in FIRST_METHODS
              and item["row"].get("cache") in ("cold", "")]
    if not firsts:
        return []
    worst = max(firsts, key=lambda item: item["estimate"].value)
    row, e = worst["row"], worst["estimate"]
    base = steady_of.get((row["framework"], row["label"], row["device"], row["shape"]))
    cache = f", {row['cache']} cache" if row.get("cache") else ""
    times = "" if base is None else \
        f", {_times(e.value / base.value)}× its steady with-sync median {duration(base.value)}"
    how = f"{e.processes} process{'es' * (e.processes != 1)}"
    return [(f"What a cold first call costs: {_name(row)}{cache}: {_estimate(e)} ({how})"
             f"{times}.", ("first_call", "cpu_first_call"))]


def _fastest_lesson(figures: list[dict[str, Any]]) -> list[tuple[str, tuple[str, ...]]]:
    """Which build is fastest: per kind of device (CPU, accelerator), at the shape most
    builds ran, the with-sync median of each build and thread count; the fastest against the
    next, with the interval of their ratio."""
    said = []
    targets = _by_target(figures, {"with_sync"})
    for accelerator in (False, True):
        mine = [(k, m["with_sync"]) for k, m in targets.items() if (k[3] != "cpu") == accelerator]
        if len({(k[1], k[2], k[5]) for k, _ in mine}) < 2:
            continue
        shapes = pd.Series([k[4] for k, _ in mine]).value_counts()
        shape = shapes.index[0]
        best: dict[tuple[Any, ...], dict[str, Any]] = {}
        for key, item in mine:  # one figure per build and thread count (the first experiment)
            if key[4] == shape:
                best.setdefault((key[1], key[2], key[5]), item)
        if len(best) < 2:
            continue
        ranked = sorted(best.values(), key=lambda item: item["estimate"].value)
        first, second = ranked[0], ranked[1]
        r = intervals.ratio(first["estimate"], second["estimate"])
        verdict = "faster than" if r.lo is not None and r.lo > 1.0 else \
            "not told apart from" if r.lo is not None else "ahead of"
        where = "accelerator" if accelerator else "CPU"
        said.append((
            f"Fastest {where} build at {shape}: {run_name(pd.Series(first['row']))}, "
            f"{_estimate(first['estimate'])} with sync, {verdict} the next, "
            f"{run_name(pd.Series(second['row']))} ({r.ratio:.3g}× its time{_interval(r)}; "
            f"{len(ranked)} builds and thread counts).",
            ("methods",) if accelerator else ("cpu_threads",)))
    return said


def _accuracy_lesson(fig: pd.DataFrame) -> str | None:
    """Whether every build computes the same numbers: bit-for-bit groups and the error range."""
    rows = accuracy_rows(fig)
    rows = rows[rows["build"] != ""]
    errors = rows[rows["stat"] == "max_err_f64_ref"]
    if errors.empty:
        return None
    builds = errors["build"].nunique()
    groups = rows.loc[rows["stat"] == "bitwise_group", "value_s"].nunique()
    lo, hi = errors.loc[errors["value_s"].idxmin()], errors.loc[errors["value_s"].idxmax()]
    differ = rows[(rows["stat"] == "inputs_match_torch_cpu") & (rows["value_s"] == 0)]
    verdict = ("every build computes the same numbers, bit for bit" if groups == 1 else
               f"no: {builds} builds give {groups} different results" if groups else
               f"{builds} builds compared")
    inputs = f"; {differ['build'].nunique()} build(s) had other inputs" if len(differ) else ""
    return (f"Same numbers from every build? {verdict}; max|x - f64 ref| from "
            f"{scientific(lo['value_s'])} ({lo['build']}) to {scientific(hi['value_s'])} "
            f"({hi['build']}){inputs}.")
