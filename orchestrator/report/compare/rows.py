"""A side of `compare` as rows: one per figure it measured, its processes pooled.

Each side becomes one row per figure (the process is the unit of replication,
stats/intervals.py): every run of an experiment that measured the same thing gives one value
(a summary line's median, or a single figure), and the row carries them all, its cold repeats
included. A store's rows are pooled over every process: the cache label already tells a cold
first process from the warm ones after it. A captured log records no cache, so there the
process number stays part of what a figure is (`process`). A row's key is what it measures
(`key_fields`: framework, label, device, the sweep axes' fields, method, stat, iteration),
never the run id; which row of A is which of B is `match`'s.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pandas as pd

from orchestrator import axes, programs, vocabulary
from orchestrator.data import frame_records
from orchestrator.data.precision import DISPUTED
from orchestrator.report.compare.sides import Side
from orchestrator.report.sample_sets import sample_sets, summary_keys
from orchestrator.stats import intervals


def key_fields() -> tuple[str, ...]:
    """The match key: what a figure measures, its sweep axes' fields among it (each axis's
    `compare` in orchestrator/axes.py: shape, threads_key, cache, warmup, process, precision)."""
    return ("framework", "label", "device", *axes.compare_keys(), "method", "stat", "iteration")


def wildcard_fields() -> tuple[str, ...]:
    """The key's fields that may be unrecorded ('') on one side and match anything."""
    return ("label", "device", *axes.compare_keys(wildcard=True))


def _pool_fields(key: tuple[str, ...]) -> list[str]:
    """What a store's figure is pooled over: everything it measures but the process."""
    return [*(k for k in key if k != "process"), "experiment"]


def _text(value: Any) -> str:
    return "" if value is None or (not isinstance(value, str) and pd.isna(value)) else str(value)


def _int_or_none(value: Any) -> int | None:
    return None if value is None or pd.isna(value) else int(value)


def measurements(side: Side) -> pd.DataFrame:
    """A side's figures, one row per summary line (median, with its min) or single figure.

    Columns: the key_fields() as text, `value`, `min`, `samples` (array or None), `unit` (one
    program run), `experiment`, `reps` (the unit's most repetitions), `threads`, `order`.
    """
    fig = side.data.figures.reset_index(drop=True)
    empty = pd.DataFrame(columns=[*key_fields(), "value", "min", "samples", "run_id"])
    if fig.empty:
        return empty
    fig = fig.assign(sample_key=summary_keys(fig), order=range(len(fig)))
    # a profile run's program ran under ncu: none of its figures is one of the chapter's
    measured = fig["status"].fillna("ok").eq("ok") & ~fig["role"].fillna("").isin(
        ["priming", "profile"])
    fig = fig[measured & fig["method"].notna() & fig["value_s"].notna()]
    sets = sample_sets(side.data.samples)
    mins = fig[fig["stat"] == "min"].set_index("sample_key")["value_s"].to_dict()
    reps = _reps(fig)
    fields = [(a.compare, _FIELDS.get(a.name) or _column(a.column)) for a in axes.axes()
              if a.compare]
    # as records of the columns a measurement reads (all of them cost seconds at 5000 runs)
    read = [*_READ, *(a.column for a in axes.axes() if a.compare and a.column)]
    # one block of records at a time: only the measurements are kept
    records = frame_records.iter_records(fig.loc[fig["stat"] != "min",
                                                 [c for c in dict.fromkeys(read) if c in fig]])
    rows = [_measurement(r, mins, sets, reps, fields) for r in records]
    if not rows:  # only failed, priming or profile runs (or damaged values): nothing measured
        return empty
    if side.kind == "store":
        for row in rows:
            row["process"] = ""  # pooled: the cache label tells cold from warm
    return _pool(rows)


# the columns `_measurement` reads of a figure besides its axes' (r[...] and r.get(...))
_READ = ["framework", "label", "device", "method", "stat", "value_s", "sample_key", "run_id",
         "experiment", "process", "iteration", "order", "threads", "threads_requested",
         "cache", "precision", "precision_source", "gpu_power_limit_w", "cpu_freq_mhz"]


def _reps(fig: pd.DataFrame) -> dict[tuple[Any, Any], Any]:
    """(run id, experiment) -> the most repetitions of a unit, as a dict (a pd.Series lookup
    per figure was ~10 µs); a missing experiment is one key, as groupby(dropna=False) had it."""
    most = fig.groupby(["run_id", "experiment"], dropna=False)["runs"].max()
    return {(rid, _nan_key(exp)): value for (rid, exp), value in most.items()}


def _nan_key(value: Any) -> Any:
    return _NAN if not isinstance(value, str) and pd.isna(value) else value


_NAN = ("nan",)  # a missing experiment as a key that equals itself


def _pool(frame: list[dict[str, Any]]) -> pd.DataFrame:
    """One row per figure: `values` (one per process), `sample_sets` (each process's raw
    samples or None), `rounds` (each process's number), `processes`; `value` the geometric
    mean (positive times) or median; a count (`queued_waited`, `no_time_count`: runs, not a
    time) the sum over its runs. From the measurements as records (a frame of them made and
    read back was seconds at 5000 runs)."""
    key = key_fields()
    if not frame:
        return pd.DataFrame(columns=[*key, "value", "min", "samples", "run_id"])
    pool = (*_pool_fields(key), "process")
    # grouped in plain Python, once: a DataFrame per figure (drop_duplicates, iloc) cost ~3 ms
    # each, minutes for the 76,000 figures a log within the input cap holds
    groups: dict[tuple[Any, ...], dict[tuple[Any, Any], dict[str, Any]]] = {}
    for r in frame:
        units = groups.setdefault(tuple(r[k] for k in pool), {})
        units.setdefault((r["run_id"], r["process_no"]), r)  # one value per process
    pooled = []
    for units in groups.values():
        first = list(units.values())
        row = dict(first[0])
        values = [float(u["value"]) for u in first]
        mins = [float(u["min"]) for u in first if u["min"] is not None and not pd.isna(u["min"])]
        row.update(values=values, sample_sets=[u["samples"] for u in first],
                   rounds=[u["process_no"] for u in first],  # a variant's round k: process k
                   processes=len(values),
                   value=sum(values) if row["stat"] in _COUNTS else _centre(values),
                   min=min(mins) if mins else None,
                   order=int(min(u["order"] for u in first)),
                   reps=int(max(u["reps"] for u in first)))
        row["samples"] = row["sample_sets"][0] if len(values) == 1 else None
        pooled.append(row)
    return pd.DataFrame(pooled, dtype=object)


_COUNTS = frozenset(s.key for s in vocabulary.STATS if s.unit == "count")


def _centre(values: list[float]) -> float:
    centre = intervals.geometric_mean(values)
    return float(np.median(values)) if centre is None else centre


def _threads_of(r: dict[str, Any]) -> int | None:
    """The threads asked for, else those the line reported."""
    threads = _int_or_none(r.get("threads_requested"))
    return _int_or_none(r["threads"]) if threads is None else threads


def _column(name: str | None) -> Callable[[dict[str, Any], str], str]:
    """A sweep axis's key field: its dataset column as text (unrecorded: '')."""
    return lambda r, _device: _text(r.get(name)) if name else ""


# compare's own reading of a built-in axis from a figure's row (and its device as compared);
# any other axis's field is its dataset column as text
_FIELDS: dict[str, Callable[[dict[str, Any], str], str]] = {
    "threads": lambda r, device: _threads_key(device, _threads_of(r)),
    "cache": lambda r, _device: "" if _text(r["cache"]) == "none" else _text(r["cache"]),
    "process": lambda r, _device: str(_int_or_none(r["process"]) or 1),
    "precision": lambda r, _device: _as_run(r),
}


def _as_run(r: dict[str, Any]) -> str:
    """The arithmetic as run (data/precision.py): fp32, tf32, '' (not recorded: the default),
    or 'disputed' where its sources disagree: a class of its own, paired with neither."""
    if _text(r.get("precision_source")).startswith(DISPUTED):
        return DISPUTED_CLASS
    return _text(r.get("precision"))


DISPUTED_CLASS = "disputed"


def _measurement(r: dict[str, Any], mins: dict[str, float], sets: dict[str, np.ndarray],
                 reps: dict[tuple[Any, Any], Any],
                 fields: list[tuple[str, Callable[[dict[str, Any], str], str]]]
                 ) -> dict[str, Any]:
    device = _text(r["device"])
    device = "cpu" if device in programs.cpu_devices() else device
    threads = _threads_of(r)
    label, method = _text(r["label"]), _text(r["method"])
    if method == "accuracy":  # a log names builds 'torch cpu', a store 'cpu': one spelling
        label = accuracy_label(label)
    key = r["sample_key"] if r["stat"] == "median" else None
    unit_reps = reps.get((r["run_id"], _nan_key(r["experiment"])))
    return {
        "framework": _text(r["framework"]), "label": label, "printed": label, "device": device,
        "method": method, "stat": _text(r["stat"]),
        **{name: read(r, device) for name, read in fields},  # the sweep axes' key fields
        "process_no": _int_or_none(r["process"]) or 1,
        "iteration": _text(_int_or_none(r["iteration"])),
        "value": float(r["value_s"]), "min": mins.get(key) if key else None,
        "samples": sets.get(key) if key else None, "run_id": r["run_id"],
        "experiment": _text(r["experiment"]), "threads": threads, "order": r["order"],
        "reps": 0 if unit_reps is None or pd.isna(unit_reps) else int(unit_reps),
        # what the device's peak depends on (report/peaks.py): % of peak beside TFLOP/s
        "power_limit_w": _float_or_none(r.get("gpu_power_limit_w")),
        "arithmetic_source": _text(r.get("precision_source")),  # a dispute's words
        "freq_mhz": _float_or_none(r.get("cpu_freq_mhz")),
    }


def _float_or_none(value: Any) -> float | None:
    return None if value is None or pd.isna(value) else float(value)


def _threads_key(device: str, threads: int | None) -> str:
    """'1' or 'N' on the CPU (the sweep point: one thread, or all the machine's); '' on an
    accelerator, where the host's thread count is not what the figure measures."""
    if device != "cpu" or threads is None:
        return ""
    return "1" if threads == 1 else "N"


def accuracy_label(label: str) -> str:
    """A log's 'burn flex template' as a store's 'flex(template)' (its Program's naming)."""
    first, _, rest = label.partition(" ")
    if first not in programs.names() or not rest:
        return label
    found = programs.get(first).naming.accuracy_label(rest)
    return rest if found is None else found
