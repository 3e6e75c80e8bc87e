"""Measurement warnings: figures that cannot mean what their label says, found in the data.

Each check reads the prepared figures (tables.prepare) and returns one Markdown line per
finding, naming the figure, the numbers that gave it away and why it matters. The report puts
them under the table they concern. Thresholds are parameters (`Thresholds`), never hidden.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any, NamedTuple

import numpy as np
import pandas as pd

from orchestrator import programs, vocabulary
from orchestrator.report.findings import Kind
from orchestrator.report.names import column_name, cpu_build_name, threads_column
from orchestrator.report.spread import iqr, ratio
from orchestrator.report.tables import duration, group_positions, ordered

SampleSets = dict[str, np.ndarray]
UNKNOWN_CORES_LOAD = 4.0  # the load threshold where the data does not say how many cores ran it


@dataclass(frozen=True)
class Thresholds:
    """When a figure earns a warning."""

    # 1-minute load above which a run counts as taken under load: `load1` if given, else
    # `load_per_core` × the cores the runs could use (`cores`, from the host facts: `for_host`)
    load1: float | None = None
    load_per_core: float = 0.5
    cores: int | None = None
    spread: float = 1.5  # median / min above this is a wide spread
    call_overhead: float = 0.2  # no-sync min below this fraction of with-sync min: not the work
    cpu_sync: float = 0.05  # relative difference allowed between CPU no sync and with sync
    first_run: float = 10.0  # first run / steady run above this swallowed autotune or compile
    thread_gain: float = 1.2  # more threads giving less than this speed-up: threads don't reach
    accuracy: float = 1e-4  # max|x - f64 ref| / max |ref| above this is more than rounding

    def for_host(self, host: dict[str, Any] | None) -> Thresholds:
        """These thresholds with the core count of the machine the data came from."""
        cores = (host or {}).get("cores_usable") or (host or {}).get("cores_logical")
        return replace(self, cores=int(cores)) if cores and self.cores is None else self

    @property
    def load_limit(self) -> float:
        if self.load1 is not None:
            return self.load1
        return self.load_per_core * self.cores if self.cores else UNKNOWN_CORES_LOAD

    def load_words(self) -> str:
        """'1 (0.5 × 2 cores)': the load threshold and where it comes from."""
        if self.load1 is None and self.cores:
            return f"{self.load_limit:g} ({self.load_per_core:g} × {self.cores} cores)"
        return f"{self.load_limit:g}" + ("" if self.load1 is not None else " (cores unknown)")


def _below(a: float | None, b: float | None, limit: float) -> bool:
    """a / b < limit, for a ratio that means something (spread.ratio)."""
    quotient = ratio(a, b)
    return quotient is not None and quotient < limit


def _above(a: float | None, b: float | None, limit: float) -> bool:
    quotient = ratio(a, b)
    return quotient is not None and quotient > limit


def _pct(a: float, b: float) -> str:
    quotient = ratio(a, b)
    if quotient is None:
        return "?%"
    share = 100 * quotient
    return f"{share:.2g}%" if share < 1 else f"{share:.0f}%"


def _times(a: float, b: float, digits: int = 2) -> str:
    quotient = ratio(a, b)
    return "?" if quotient is None else f"{quotient:.{digits}f}"


def _target(row: pd.Series) -> str:
    if row["device"] == "cpu":
        return _cpu_target(row)
    return column_name(row["framework"], row["label"])


class _Run(NamedTuple):
    """One program run's rows of one device (and shape) as the checks read them, in one
    pass: its first row, each (method, stat)'s first value, the loads around it, its run
    ids. A frame per run and a mask per figure asked were a 5000-run report's seconds."""

    row: dict[str, Any]  # the first row: what the warning names
    stats: dict[tuple[Any, Any], Any]
    load_before: float  # the highest, NaN where none was recorded
    load_after: float
    run_ids: list[Any]

    def stat(self, method: str, stat: str) -> float | None:
        found = self.stats.get((method, stat), _NONE)
        return None if found is _NONE else float(found)


_NONE = object()
_RUN_KEYS = ["unit", "framework", "label", "shape", "threads_key"]
# what the checks over runs read of a row (_target, _cpu_target, load's experiment)
_RUN_FIELDS = ["device", "experiment", "method", "stat", "value_s", "load1_before",
               "load1_after", "run_id"]


def _per_run(rows: pd.DataFrame) -> list[_Run]:
    """Each program run and device (and shape): its rows read once (a missing thread count is
    a key of its own, as in `split`)."""
    if rows.empty:
        return []
    fields = [*_RUN_KEYS, *(c for c in _RUN_FIELDS if c not in _RUN_KEYS)]
    cols = {c: rows[c].tolist() for c in fields}  # column by column: no dict per row
    method, stat, value, run_id = (cols[c] for c in ("method", "stat", "value_s", "run_id"))
    out = []
    for positions in group_positions(rows, _RUN_KEYS).values():
        stats: dict[tuple[Any, Any], Any] = {}
        for i in positions:
            stats.setdefault((method[i], stat[i]), value[i])
        before, after = (max((float(cols[c][i]) for i in positions if pd.notna(cols[c][i])),
                             default=math.nan) for c in ("load1_before", "load1_after"))
        first = {c: cols[c][positions[0]] for c in fields}
        out.append(_Run(first, stats, before, after,
                        list(dict.fromkeys(run_id[i] for i in positions))))
    return out


# ---- figures no timing can mean -------------------------------------------------------------

# a printed time past a day is no measurement: the programs time milliseconds to minutes, a
# run's timeout is far below it; such a figure is a damaged, edited or overflowed line
MAX_PLAUSIBLE_S = 86_400.0
_ABSURD = "longer than a day, no timing a run can take (a damaged or edited line?)"


def odd_times(rows: pd.DataFrame) -> list[str]:
    """Times the line contract allows but no measurement can mean: zero (`0.000ns`: below the
    clock's resolution, or a timer that did not run), not finite or negative (a store from
    before the parser refused them), longer than a day (`first call: 1e+20 s`), a median
    below its own minimum. They stay in the tables as
    printed; a ratio against one of them is left out ('?'), never divided by zero."""
    timed = rows[rows["stat"].isin(vocabulary.time_stats())] if not rows.empty else rows
    out: list[str] = []
    if timed.empty:
        return out
    # plain lists and row positions, one pass per grouping: a DataFrame per printed figure
    # (groupby's iteration) cost ~0.3 ms each, 3.7 s of a 500-run report (bench figure 6)
    numbers = pd.to_numeric(timed["value_s"], errors="coerce").tolist()
    stat_of = timed["stat"].tolist()
    for positions in group_positions(timed, ["unit", "line_no", "label", "method",
                                             "stat"]).values():
        value = numbers[positions[0]]
        what = ("not a finite time" if pd.isna(value) or not np.isfinite(value) else
                "a negative time" if value < 0 else "a zero time" if value == 0 else
                _ABSURD if value > MAX_PLAUSIBLE_S else "")
        if what:
            row = timed.iloc[positions[0]]
            out.append(Kind.IMPOSSIBLE_TIME.says(f"{_figure(row)} {row['stat']} is "
                       f"{duration(value) or value}, {what}: shown as printed, no ratio "
                       "against it."))
    for positions in group_positions(timed, ["unit", "line_no", "label", "method"]).values():
        stats = {stat_of[i]: numbers[i] for i in positions}
        low, mid = stats.get("min"), stats.get("median")
        if low is not None and mid is not None and mid < low:
            out.append(Kind.MEDIAN_BELOW_MIN.says(
                f"{_figure(timed.iloc[positions[0]])}: median {duration(mid)} < min "
                f"{duration(low)}; no program computes that, so the line was edited or the "
                "program is broken."))
    return out


def _figure(row: pd.Series) -> str:
    """'torch cpu at 1 thread with sync (line 3)': one printed figure."""
    method = vocabulary.words(row["method"])
    line = f" (line {int(row['line_no'])})" if pd.notna(row.get("line_no")) else ""
    return f"{_target(row)} {method}{line}"


# ---- timing methods -------------------------------------------------------------------------


def unknown_methods(fig: pd.DataFrame) -> list[str]:
    """Figures of a method the measurement vocabulary lacks (a program's new line, a store
    from a newer orchestrator): no table shows them, so the report counts them here rather
    than letting them vanish from table 1."""
    if fig.empty:
        return []
    rows = fig[(fig["method"] != "") & ~fig["method"].isin([m.key for m in vocabulary.METHODS])]
    out = []
    for method, mine in rows.groupby("method", sort=False):
        count = len(mine)
        who = ", ".join(sorted(set(map(str, mine["framework"]))))
        out.append(Kind.UNKNOWN_METHOD.says(f"{count} figure{'s' * (count != 1)} of "
                   f"method `{method}` ({who}) {'is' if count == 1 else 'are'} in no table: "
                   "orchestrator/vocabulary.py has no entry for it."))
    return out


def call_overhead(rows: pd.DataFrame, th: Thresholds) -> list[str]:
    """On an asynchronous device a clock read without sync measures issuing the work."""
    out = []
    for run in _per_run(rows[rows["device"] != "cpu"]):
        row = run.row
        no_sync, synced = run.stat("no_sync", "min"), run.stat("with_sync", "min")
        if not _below(no_sync, synced, th.call_overhead):
            continue
        out.append(Kind.CALL_OVERHEAD.says(f"{_target(row)} no sync (min {duration(no_sync)}) is "
                   f"{_pct(no_sync, synced)} of with sync (min {duration(synced)}): the clock "
                   "was read before the device finished, so it timed issuing the work, not "
                   "the matmul."))
    return out


def no_time(rows: pd.DataFrame) -> list[str]:
    """A profile window that closed before the queued work ran read no time at all."""
    out = []
    counts = rows[(rows["stat"] == "no_time_count") & (rows["value_s"] > 0)
                  & (rows["value_s"] < np.inf)]
    for _, row in counts.iterrows():
        of = f" of {int(row['runs'])}" if pd.notna(row["runs"]) else ""
        out.append(Kind.PROFILE_NO_TIME.says(f"{_target(row)} {vocabulary.words(row['method'])}: "
                   f"{int(row['value_s'])}{of} runs read as no time; the work was still "
                   "queued when the profile window closed (use ProfileOptions flush)."))
    return out


def short_window(rows: pd.DataFrame, th: Thresholds) -> list[str]:
    """A profile without flush that did read a time, but far less than the flushed one: the
    window closed on the enqueue, not on the matmul (seen on CUDA: 1.2 µs against 90 µs)."""
    out = []
    for run in _per_run(rows[rows["device"] != "cpu"]):
        row = run.row
        unflushed = run.stat("device_time_no_flush", "min")
        flushed = run.stat("device_time", "min")
        if not _below(unflushed, flushed, th.call_overhead):
            continue
        out.append(Kind.PROFILE_WINDOW.says(f"{_target(row)} device time without flush "
                   f"(min {duration(unflushed)}) is {_pct(unflushed, flushed)} of device time "
                   f"with flush (min {duration(flushed)}): the window closed before the queued "
                   "matmul ran, so it timed the enqueue (use ProfileOptions flush)."))
    return out


def spread(rows: pd.DataFrame, sets: SampleSets, th: Thresholds) -> list[str]:
    """A median far above the minimum: the runs disagree, so the median is not one number."""
    out = []
    keys = ["unit", "label", "method", "sample_key"]
    medians = rows[rows["stat"] == "median"]
    first: dict[tuple[Any, ...], float] = {}  # each min's median, found once, not by a mask
    for key, value in zip(medians[keys].itertuples(index=False, name=None),
                          medians["value_s"].tolist(), strict=True):
        first.setdefault(key, value)
    mins = rows[rows["stat"] == "min"]
    fields = [*keys, *(c for c in ("value_s", "device", "framework", "label", "threads_key")
                       if c in mins and c not in keys)]
    for row in mins[fields].to_dict("records"):
        key = tuple(row[k] for k in keys)
        if any(pd.isna(v) for v in key):  # a missing field equals nothing, as `==` had it
            continue
        found = first.get(key)
        if found is None or not _above(found, row["value_s"], th.spread):
            continue
        med = float(found)
        text = (f"{_target(row)} {vocabulary.words(row['method'])}"
                f": median {duration(med)} is {_times(med, row['value_s'])}× the min "
                f"{duration(row['value_s'])}")
        values = sets.get(row["sample_key"])
        if values is not None and len(values) > 1:
            spread_iqr = iqr(values)
            text += f"; IQR {duration(spread_iqr)} ({_pct(spread_iqr, med)} of the median)"
        out.append(Kind.WIDE_SPREAD.says(text + "."))
    return out


def load(rows: pd.DataFrame, th: Thresholds,
         paused: Mapping[str, list[str]] | None = None) -> list[str]:
    """Runs taken while other work shared the machine: their medians say more about it.
    `paused` (run id -> builds, `paused_builds`): the sweep's own background builds, stopped
    while that run was measured, which the 1-minute average still counts for a while."""
    out = []
    for run in _per_run(rows):
        row, before, after = run.row, run.load_before, run.load_after
        worst = max(v for v in (before, after, -1.0) if pd.notna(v))
        if worst <= th.load_limit:
            continue
        where = f" ({row['experiment']})" if row["experiment"] else ""
        stopped = sorted({b for rid in run.run_ids for b in (paused or {}).get(str(rid), [])})
        own = (f"; the sweep's own builds ({', '.join(stopped)}) were paused while it ran, "
               "but the 1-minute average still counts them") if stopped else ""
        out.append(Kind.UNDER_LOAD.says(f"{_target(row)}{where} ran at a 1-minute load of "
                   f"{_num(before)} before and {_num(after)} after (threshold "
                   f"{th.load_words()}){own}; minima hold up better than medians."))
    return out


def paused_builds(runs: pd.DataFrame) -> dict[str, list[str]]:
    """Run id -> the background builds paused while it was measured (the run's gate record,
    `builds_paused`); runs of older stores or without builds are left out."""
    out: dict[str, list[str]] = {}
    if "gate" not in runs:
        return out
    for rid, gate in zip(runs["run_id"], runs["gate"], strict=True):
        try:
            names = (json.loads(gate) if isinstance(gate, str) else None) or {}
        except ValueError:
            continue
        found = names.get("builds_paused") if isinstance(names, dict) else None
        if isinstance(found, list) and found:
            out[str(rid)] = [str(b) for b in found]
    return out


def _load_during(rows: pd.DataFrame) -> float | None:
    """The highest 1-minute load around `rows`' runs, None where none was recorded."""
    values = pd.concat([rows["load1_before"], rows["load1_after"]]).dropna()
    return float(values.max()) if not values.empty else None


def _num(value: float) -> str:
    return "?" if pd.isna(value) else f"{float(value):.2f}"


# ---- first calls and warm-up ----------------------------------------------------------------


def first_call_cost(fig: pd.DataFrame, th: Thresholds) -> list[str]:
    """A first call far slower than a steady one paid for autotune or compilation."""
    steady = fig[(fig["method"] == "with_sync") & (fig["stat"] == "min")]
    # Only asynchronous devices: a CPU first call pays allocation and thread start-up, which is
    # no autotune and does not leak into the timed runs.
    firsts = fig[fig["method"] == "first_call_after_sync"]
    if firsts.empty:
        return []
    # each target's steady minima and each run's `first call returned` figures, read once: a
    # mask of all figures per first call was quadratic in the runs (bench figure 6)
    targets: dict[tuple[Any, ...], list[tuple[Any, Any, float]]] = {}
    for key, experiment, unit, value in zip(
            steady[["framework", "label", "shape"]].itertuples(index=False, name=None),
            steady["experiment"].tolist(), steady["unit"].tolist(), steady["value_s"].tolist(),
            strict=True):
        targets.setdefault(key, []).append((experiment, unit, value))
    returned = _returned(fig)
    out = []
    for row in _records(firsts):
        # the steady figure of the same run, else of the same experiment: never another
        # experiment's minimum (its reps, its process, its cache state are not this call's).
        # A captured log's "experiments" are its sections (the chapter's listings, one
        # program's output), so there the other listings' minimum stays the reference.
        ref = targets.get((row["framework"], row["label"], row["shape"]), [])
        if not str(row["unit"]).startswith("log:"):
            ref = [r for r in ref if r[0] == row["experiment"]]
        if any(r[1] == row["unit"] for r in ref):
            ref = [r for r in ref if r[1] == row["unit"]]
        values = [r[2] for r in ref if not pd.isna(r[2])]
        least = min(values) if values else float("nan")
        if not ref or not _above(row["value_s"], least, th.first_run):
            continue
        out.append(_first_call_text(returned, row, float(least)))
    return out


Returned = dict[tuple[Any, Any], list[tuple[Any, float]]]  # (unit, label) -> (process, value)


def _returned(fig: pd.DataFrame) -> Returned:
    """Each run's `first call returned` figures by label, in order, with their process."""
    rows = fig[fig["method"] == "first_call_returned"]
    out: Returned = {}
    for unit, label, process, value in zip(rows["unit"].tolist(), rows["label"].tolist(),
                                           rows["process"].tolist(), rows["value_s"].tolist(),
                                           strict=True):
        out.setdefault((unit, label), []).append((process, value))
    return out


def _records(rows: pd.DataFrame) -> list[dict[str, Any]]:
    """The rows as plain dicts, in order: a `pd.Series` per row (iterrows) costs ~0.1 ms."""
    return rows.to_dict("records")


def _first_call_text(returned: Returned, row: dict[str, Any], steady: float) -> str:
    where = f" process {row['process']}" if pd.notna(row["process"]) else ""
    cache = f", {row['cache']} cache" if row["cache"] else ""
    text = (f"{_target(row)}{where}{cache}: {duration(row['value_s'])} is "
            f"{_times(row['value_s'], steady, 0)}× the with-sync min {duration(steady)}")
    # One process has one first call per device: the returned figure of the same run (a
    # missing process matches any, as `==` filled with NA's own answer did)
    found = [value for process, value in returned.get((row["unit"], row["label"]), [])
             if pd.isna(row["process"]) or (pd.notna(process) and process == row["process"])]
    if found:
        back = float(found[0])
        paid = "inside the call" if back > row["value_s"] / 2 else "at the sync"
        text += f"; the call returned after {duration(back)}, so the cost was paid {paid}"
    return Kind.FIRST_CALL.says(
        text + ". A timing that includes a first call measures setup, not the matmul.")


def warmup_first_run(rows: pd.DataFrame, th: Thresholds) -> list[str]:
    """Timed run 0 far above run 1: the warm-up did not do the work it was meant to."""
    out = []
    for unit, label, cache, warmup in ordered(rows, ["unit", "label", "cache", "warmup"]):
        mine = rows[(rows["unit"] == unit) & (rows["label"] == label) &
                    (rows["cache"] == cache) & (rows["warmup"] == warmup)]
        by_run = dict(zip(mine["iteration"], mine["value_s"], strict=True))
        first, second = by_run.get(0), by_run.get(1)
        if not _above(first, second, th.first_run):
            continue
        name = f"{label}, " if label else ""
        times = _times(first, second, 0)
        out.append(Kind.SWALLOWED_SETUP.says(f"{name}{cache or '?'} cache, warm-up "
                   f"{warmup or '?'}: run 0 took {duration(first)}, {times}× run 1 "
                   f"({duration(second)}); the warm-up without sync left autotune/compilation "
                   "to the first timed run."))
    return out


# ---- CPU ------------------------------------------------------------------------------------


def cpu_sync(rows: pd.DataFrame, th: Thresholds) -> list[str]:
    """On the CPU nothing is asynchronous: no sync and with sync must agree (a program that
    dispatches asynchronously there, JAX, gets a line saying what its difference means)."""
    out = []
    for run in _per_run(rows[rows["device"] == "cpu"]):
        row = run.row
        for stat in ("min", "median"):
            no_sync, synced = run.stat("no_sync", stat), run.stat("with_sync", stat)
            if no_sync is None or synced is None:
                continue
            if _async_cpu(row["framework"]):
                if stat == "min":  # said once per run: a fact of the program, not a fault
                    out.append(f"{_cpu_target(row)}: no sync {duration(no_sync)} vs with sync "
                               f"{duration(synced)}: this program dispatches asynchronously on "
                               "the CPU too, so no sync times the dispatch alone.")
            elif abs(no_sync - synced) > th.cpu_sync * synced:
                out.append(Kind.CPU_SYNC_MISMATCH.says(f"{_cpu_target(row)} {stat} no sync "
                           f"{duration(no_sync)} vs with sync {duration(synced)} (more than "
                           f"{th.cpu_sync:.0%} apart): on the CPU they should be equal."))
    return out


def _async_cpu(framework: object) -> bool:
    found = programs.REGISTRY.get(str(framework))
    return found is not None and found.async_cpu


def _cpu_target(row: pd.Series) -> str:
    threads = f" at {threads_column(int(row['threads_key']))}" if pd.notna(row["threads_key"]) \
        else ""
    return cpu_build_name(row["framework"], row["label"]) + threads


def thread_mismatch(fig: pd.DataFrame) -> list[str]:
    """The program reported other threads than the orchestrator asked for."""
    both = fig[fig["threads"].notna() & fig["threads_requested"].notna()]
    wrong = both[both["threads"] != both["threads_requested"]]
    out = []
    for _, row in wrong.drop_duplicates(["unit", "label"]).iterrows():
        name = cpu_build_name(row["framework"], row["label"]) if row["device"] == "cpu" \
            else column_name(row["framework"], row["label"])
        out.append(Kind.THREADS.says(f"{name} asked for "
                   f"{int(row['threads_requested'])} threads but reported "
                   f"{int(row['threads'])}."))
    return out


def thread_gain(rows: pd.DataFrame, th: Thresholds) -> list[str]:
    """More threads, same time: the thread setting does not reach the code doing the work."""
    out = []
    mins = rows[rows["stat"] == "min"].dropna(subset=["threads_key"])
    for framework, label in ordered(mins, ["framework", "label"]):
        mine = mins[(mins["framework"] == framework) & (mins["label"] == label)]
        by_threads = mine.groupby("threads_key")["value_s"].min()
        if 1 not in by_threads.index or by_threads.index.max() <= 1:
            continue
        most = int(by_threads.index.max())
        gain = ratio(by_threads[1], by_threads[most])
        if gain is not None and gain < th.thread_gain:
            load = _load_during(mine)
            cause = ("the machine was under load (1-minute load up to "
                     f"{load:.2f}, threshold {th.load_words()}): other work took the cores the "
                     "threads needed, the likely cause; rerun on a quiet machine"
                     if load is not None and load > th.load_limit else
                     "the thread setting does not reach the matmul (e.g. a BLAS with its own "
                     "threads)")
            out.append(Kind.THREADS_NO_EFFECT.says(f"{cpu_build_name(framework, label)} is "
                       f"{gain:.2f}× faster at {most} threads than at 1: {cause}."))
    return out


# ---- accuracy -------------------------------------------------------------------------------


def accuracy(rows: pd.DataFrame, th: Thresholds) -> list[str]:
    """Builds whose inputs differ, and errors beyond what f32 rounding explains."""
    out = []
    builds = rows[rows["build"] != ""]
    differ = builds[(builds["stat"] == "inputs_match_torch_cpu") & (builds["value_s"] == 0)]
    if not differ.empty:
        names = ", ".join(dict.fromkeys(differ["build"]))
        out.append(Kind.INPUTS_DIFFER.says(f"{names}: sin/cos inputs not bit-equal to torch cpu's, "
                   "so max|x - torch cpu| mixes input and sum differences (max|x - f64 ref| "
                   "uses each build's own inputs and stays comparable)."))
    refs = pd.to_numeric(rows.loc[rows["stat"] == "max_abs_ref", "value_s"], errors="coerce")
    refs = refs[(refs > 0) & (refs < np.inf)]  # a nan, inf or zero |ref| scales nothing
    scale = float(refs.max()) if not refs.empty else 1.0
    errs = builds[builds["stat"] == "max_err_f64_ref"]
    finite = pd.to_numeric(errs["value_s"], errors="coerce").abs() < np.inf
    for _, row in errs[~finite].iterrows():
        out.append(Kind.NOT_A_NUMBER.says(f"{row['build']} is {row['value_s']} from the float64 "
                   "reference: its c holds nan or inf, a wrong result whatever the arithmetic."))
    for _, row in errs[finite & (errs["value_s"] > th.accuracy * scale)].iterrows():
        out.append(Kind.INACCURATE.says(f"{row['build']} is {row['value_s']:.3e} from the float64 "
                   f"reference, more than {th.accuracy:g} × max |ref| ({scale:.4g}); a "
                   "correctly rounded f32 product is about 2e-6 away" + _tf32_cause(row) + "."))
    return out


def _tf32_cause(row: pd.Series) -> str:
    """Where the arithmetic is known to be TF32, that is the cause (not a wrong result)."""
    if row.get("precision") != "tf32":
        return ""
    how = row.get("precision_source") or "recorded"
    return (f"; this build computes in TF32 ({how}: see the arithmetic column), whose 10-bit "
            "rounding of the inputs gives this error")


def bitwise_summary(rows: pd.DataFrame) -> list[str]:
    """Which builds computed bit-for-bit the same c (from the dumped arrays)."""
    groups = rows[(rows["stat"] == "bitwise_group") & (rows["build"] != "")]
    if groups.empty:
        if not rows.empty:
            return ["Bit-for-bit equality is not recorded in this data (it needs the dumped "
                    "arrays; a printed table gives only the maxima)."]
        return []
    sets = [list(dict.fromkeys(part["build"]))
            for _, part in groups.groupby("value_s", sort=False)]
    same = ["; ".join(" = ".join(s) for s in sets if len(s) > 1)]
    lines = [f"Bit-for-bit identical: {same[0]}." if same[0] else
             "No two builds computed bit-for-bit the same c."]
    alone = [s[0] for s in sets if len(s) == 1]
    if alone:
        lines.append("Unlike any other build: " + ", ".join(alone) + ".")
    return lines
