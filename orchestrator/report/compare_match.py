"""Which figure of A is which figure of B: `compare`'s matching.

Each side becomes one row per figure, its processes pooled (the process is the unit of
replication, report/intervals.py): every run of an experiment that measured the same thing
gives one value (a summary line's median, or a single figure), and the row carries them all,
its cold repeats included. A store's rows are pooled over every process: the cache label
already tells a cold first process from the warm ones after it. A captured log records no
cache, so there the process number stays part of what a figure is (`process`), and a log's
process 1 is matched with a store's cold figure, a later one with a warm figure. Rows are keyed
on what they measure: framework, label, device, shape, method, stat, threads, cache, process
(logs), warm-up, iteration and precision, never the run id. A precision one side did not
record is taken as the default FP32: it is paired with the FP32 run, a TF32 one left apart.
An accelerator, or the fastest CPU build, that each side ran under one name of its own (the
chapter's `mps` and `metal` beside an H200's `cuda`; `flex+apple-amx` beside `flex+x86-v4`) is
paired and the pairing listed. A field one side did not record matches any value on the other,
and the pair says so. Several experiments with one figure on a side: the same experiment as the
other side's if there is one, else the one with the most repetitions, then the most processes.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pandas as pd

from orchestrator import axes, programs, vocabulary
from orchestrator.report import sections as report_sections
from orchestrator.report.compare_sides import Side
from orchestrator.report.spread import sample_sets, summary_keys


def sections() -> tuple[str, ...]:
    """Compare's sections, in its order: the report's registered sections that say how
    compare shows them (report/sections.py)."""
    return tuple(c.words for c in report_sections.compare_sections())


def verdict_sections() -> tuple[str, ...]:
    """The sections whose rows get verdict tables (accuracy's get none)."""
    return tuple(c.words for c in report_sections.compare_sections() if c.verdicts)


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


# ---- one row per measurement of a side --------------------------------------------------------


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
    rows = [_measurement(r, mins, sets, reps, fields) for r in fig.loc[
        fig["stat"] != "min", [c for c in dict.fromkeys(read) if c in fig]].to_dict("records")]
    if not rows:  # only failed, priming or profile runs (or damaged values): nothing measured
        return empty
    if side.kind == "store":
        for row in rows:
            row["process"] = ""  # pooled: the cache label tells cold from warm
    return _pool(rows)


# the columns `_measurement` reads of a figure besides its axes' (r[...] and r.get(...))
_READ = ["framework", "label", "device", "method", "stat", "value_s", "sample_key", "run_id",
         "experiment", "process", "iteration", "order", "threads", "threads_requested",
         "cache", "precision"]


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
    samples or None), `processes`; `value` the geometric mean (positive times) or median; a
    count (`queued_waited`, `no_time_count`: runs, not a time) the sum over its runs. From the
    measurements as records (a frame of them made and read back was seconds at 5000 runs)."""
    key = key_fields()
    if not frame:
        return pd.DataFrame(columns=[*key, "value", "min", "samples", "run_id"])
    pool = (*_pool_fields(key), "process")
    # grouped in plain Python, once: a DataFrame per figure (drop_duplicates, iloc) cost ~3 ms
    # each, minutes for the 76,000 figures a log within the input cap holds (issue 29)
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
    positive = [v for v in values if v > 0 and np.isfinite(v)]
    if len(positive) == len(values):
        return float(np.exp(np.mean(np.log(positive))))
    return float(np.median(values))


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
    "precision": lambda r, _device: _text(r.get("precision")),  # as run (data/precision.py)
}


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
    }


def _threads_key(device: str, threads: int | None) -> str:
    """'1' or 'N' on the CPU (the sweep point: one thread, or all the machine's); '' on an
    accelerator, where the host's thread count is not what the figure measures."""
    if device != "cpu" or threads is None:
        return ""
    return "1" if threads == 1 else "N"


def accuracy_label(label: str) -> str:
    """A log's 'burn flex template' as a store's 'flex(template)' (Program.accuracy_label)."""
    first, _, rest = label.partition(" ")
    if first not in programs.names() or not rest:
        return label
    found = programs.get(first).accuracy_label(rest)
    return rest if found is None else found


# ---- pairing labels across machines -----------------------------------------------------------


def pair_labels(ma: pd.DataFrame, mb: pd.DataFrame) -> tuple[pd.DataFrame, pd.DataFrame,
                                                               list[str]]:
    """Compare an accelerator (or fastest CPU build) under its two names as one figure."""
    notes = []
    for framework in programs.names():
        for kind, pick in (("accelerator", _is_accelerator), ("fastest CPU build", _is_fast_cpu)):
            la, lb = _labels(ma, framework, pick), _labels(mb, framework, pick)
            if len(la) == 1 and len(lb) == 1 and la != lb:
                (a_label, a_dev), (b_label, b_dev) = la.pop(), lb.pop()
                ma = _rename(ma, framework, a_label, a_dev, f"{a_label}/{b_label}")
                mb = _rename(mb, framework, b_label, b_dev, f"{a_label}/{b_label}")
                notes.append(f"{framework} {kind}: {a_label} (A) compared with {b_label} (B)")
    return ma, mb, notes


def _is_accelerator(m: pd.DataFrame) -> pd.Series:
    return (m["device"] != "cpu") & (m["device"] != "") & (m["method"] != "accuracy")


def _is_fast_cpu(m: pd.DataFrame) -> pd.Series:
    prefixes = tuple(x for p in programs.REGISTRY.values() for x in p.build_prefixes)
    return ((m["device"] == "cpu") & m["label"].str.startswith(prefixes)
            & (m["method"] != "accuracy"))


def _labels(m: pd.DataFrame, framework: str, pick: Any) -> set[tuple[str, str]]:
    if m.empty:
        return set()
    mine = m[(m["framework"] == framework) & pick(m)]
    return set(zip(mine["label"], mine["device"], strict=True))


def _rename(m: pd.DataFrame, framework: str, label: str, device: str, new: str) -> pd.DataFrame:
    m = m.copy()
    hit = (m["framework"] == framework) & (m["label"] == label) & (m["device"] == device)
    m.loc[hit, "label"] = new
    if device != "cpu":
        m.loc[hit, "device"] = "accelerator"
    return m


# ---- matching -----------------------------------------------------------------------------------


def match(ma: pd.DataFrame, mb: pd.DataFrame) -> tuple[list[tuple[dict[str, Any],
                                                                   dict[str, Any], str]],
                                                        list[dict[str, Any]],
                                                        list[dict[str, Any]]]:
    """Pairs (A row, B row, note), and the rows of each side left without a partner (other
    than a second run of a figure that was matched: the methods and first-call experiments
    both time `with sync`)."""
    key, wild = key_fields(), wildcard_fields()
    fixed = tuple(k for k in key if k not in wild)  # equal in every pass

    def _key(row: dict[str, Any]) -> tuple[str, ...]:
        return tuple(row[k] for k in key)

    def _fixed(row: dict[str, Any]) -> tuple[str, ...]:
        return tuple(row[k] for k in fixed)

    a_rows, b_rows = _best_per_key(ma, key), _best_per_key(mb, key)
    pairs: list[tuple[dict[str, Any], dict[str, Any], str]] = []
    free_b = {id(b): b for b in b_rows}
    by_key: dict[tuple[str, ...], list[dict[str, Any]]] = {}
    for b in b_rows:
        by_key.setdefault(_key(b), []).append(b)
    left_a = []
    for a in a_rows:
        found = [b for b in by_key.get(_key(a), []) if id(b) in free_b]
        if found:
            best = _prefer(found, a)
            pairs.append((a, free_b.pop(id(best)), ""))
        else:
            left_a.append(a)
    still_a = []
    # second pass: a field one side did not record matches anything; third: the same figure
    # in other arithmetic (fp32 / tf32), paired so that it is shown apart, not judged
    # the candidates of a loose pass share the fields no pass relaxes: a scan of every free B
    # row per A row was quadratic (issue 29: 76,000 figures within the input cap)
    buckets: dict[tuple[str, ...], dict[int, dict[str, Any]]] = {}
    for b in free_b.values():
        buckets.setdefault(_fixed(b), {})[id(b)] = b
    for loose in (_loose_equal, _other_precision):
        still_a = []
        # FP32 first: against an unrecorded precision the FP32 run is the one paired
        for a in sorted(left_a, key=lambda row: row["precision"] == "tf32"):
            bucket = buckets.get(_fixed(a), {})
            found = [b for b in bucket.values() if loose(a, b, key, wild)]
            if found:
                best = _prefer(found, a)
                del bucket[id(best)]
                pairs.append((a, free_b.pop(id(best)), _unrecorded(a, best, wild)))
            else:
                still_a.append(a)
        left_a = still_a
    matched_a, matched_b = {_key(p[0]) for p in pairs}, {_key(p[1]) for p in pairs}
    return (pairs, [a for a in still_a if _key(a) not in matched_a],
            [b for b in free_b.values() if _key(b) not in matched_b])


def _best_per_key(m: pd.DataFrame, key: tuple[str, ...]) -> list[dict[str, Any]]:
    """All rows; where several runs of one side share a key and an experiment, the first."""
    if m.empty:
        return []
    return m.drop_duplicates([*key, "experiment"]).to_dict("records")


def _prefer(found: list[dict[str, Any]], a: dict[str, Any]) -> dict[str, Any]:
    """The same experiment as A's if there is one, else the one of the most repetitions (the
    methods experiment's 20, not the first-call series' 5), then of the most processes."""
    return min(found, key=lambda b: (b["experiment"] != a["experiment"], _slot_differs(a, b),
                                     # unrecorded is the default FP32: TF32 stays apart
                                     a["precision"] == "" and b["precision"] == "tf32",
                                     -b["reps"], -b["processes"], b["order"]))


def _slot_differs(a: dict[str, Any], b: dict[str, Any]) -> bool:
    """A log's process 1 is a store's cold figure, its later processes the warm ones."""
    for log, store in ((a, b), (b, a)):
        if log["process"] and not store["process"] and store["cache"] in ("cold", "warm"):
            return (log["process"] == "1") != (store["cache"] == "cold")
    return False


def _loose_equal(a: dict[str, Any], b: dict[str, Any], key: tuple[str, ...],
                 wild: tuple[str, ...]) -> bool:
    return all(a[k] == b[k] or (k in wild and "" in (a[k], b[k])) for k in key)


def _other_precision(a: dict[str, Any], b: dict[str, Any], key: tuple[str, ...],
                     wild: tuple[str, ...]) -> bool:
    other = {**b, "precision": a["precision"]}
    return "" not in (a["precision"], b["precision"]) and _loose_equal(a, other, key, wild)


def _unrecorded(a: dict[str, Any], b: dict[str, Any], wild: tuple[str, ...]) -> str:
    """'cache not recorded in A (warm in B)', for each field matched as a wildcard."""
    shown = {"threads_key": "threads", "label": "printed"}  # the label as the side printed it
    parts = []
    for k in wild:
        if k == "process":
            continue  # a store pools its processes: nothing unrecorded
        if a[k] == b[k] or "" not in (a[k], b[k]) or (k == "device" and a["label"] != b["label"]):
            continue  # both recorded (other arithmetic: set apart); a device follows its label
        empty, other, known = ("A", "B", b) if a[k] == "" else ("B", "A", a)
        parts.append(f"{shown.get(k, k).replace('printed', 'label')} not recorded in {empty} "
                     f"({known[shown.get(k, k)] if k != 'threads_key' else known['threads']} "
                     f"in {other})")
    return "; ".join(parts)




def section_of(row: dict[str, Any]) -> str:
    """The last of compare's sections (in its order) that takes the row."""
    return next(c.words for c in reversed(report_sections.compare_sections()) if c.takes(row))


def _arithmetic(pa: str, pb: str) -> list[str]:
    """'TF32' where a figure ran in TF32 (its key has the precision, so its name must too: an
    FP32 and a TF32 `torch cuda no sync` are two rows), also where the other side did not
    record it (the note says so); 'FP32/TF32' where both recorded and differ; nothing for the
    default FP32, so the other names stay as they were."""
    if "tf32" not in (pa, pb):
        return []
    return ["TF32"] if "" in (pa, pb) or pa == pb else [f"{pa.upper()}/{pb.upper()}"]


def describe(a: dict[str, Any], b: dict[str, Any]) -> str:
    """'torch mps/cuda with sync', 'torch cuda TF32 no sync', 'burn flex 1 thread first call',
    'burn warm cache, ...'."""
    def v(k: str) -> str:
        return a[k] or b[k]

    words = [w for w in (v("framework"), v("label")) if w]
    if v("shape") and v("shape") != "1024x1024":
        words.append(v("shape"))
    words += _arithmetic(a.get("precision") or "", b.get("precision") or "")
    if v("device") == "cpu":
        ta, tb = a["threads"], b["threads"]
        if ta is not None or tb is not None:
            count = str(ta if ta == tb or tb is None else tb if ta is None else f"{ta}/{tb}")
            words.append(f"{count} thread" + ("" if count == "1" else "s"))
    for k in ("cache", "warmup"):
        if v(k):
            words.append(f"{v(k)} {'cache' if k == 'cache' else 'warm-up'}")
    if v("process") and (v("process") != "1" or (a["method"] != "first_call"
                                                 and vocabulary.is_first_call(a["method"]))):
        words.append(f"process {v('process')}")  # a log's process (a store pools them)
    words.append(vocabulary.words(a["method"]))
    if a["iteration"]:
        words.append(a["iteration"])
    if a["stat"] not in ("median", "value"):
        words.append(a["stat"])
    return " ".join(words)


