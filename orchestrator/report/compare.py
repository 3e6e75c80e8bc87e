"""`python -m orchestrator compare A B`: a verdict per figure between two result sets.

A side is a results folder (its latest sweep), `folder@sweep`, or a captured log (`parse`'s
input, such as the chapter's listings). Figures are matched on what they measure: framework,
label, device, shape, method, stat, threads, cache, process, warm-up, iteration and precision,
never on run ids. Where each side ran exactly one accelerator label per framework (the chapter's
`mps`/`metal` beside an H200's `cuda`), or one fastest-CPU build (`flex+apple-amx` beside
`flex+x86-v4`), those labels are compared as the same figure and the pairing is listed. A field
one side did not record (a captured log has no cache state or process index for the methods
listing) matches any value on the other side, and the row says so. Several runs of one figure
on a side (the methods and first-call experiments both time `with sync`): the same experiment
on both sides if there is one, else the run with the most repetitions, as the report's tables
choose.

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
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from orchestrator.data import dataset
from orchestrator.data.parse import parse_text
from orchestrator.data.store import Store
from orchestrator.errors import InputError
from orchestrator.report.compare_facts import Fact, Side, machine_facts
from orchestrator.report.spread import ratio_ci, sample_sets, summary_keys

DEFAULT_MIN_EFFECT = 0.05
VERDICTS = ("same", "faster", "slower", "inconclusive")
TIME_METHODS = frozenset({
    "no_sync", "with_sync", "device_time", "device_time_no_flush", "device_time_queued",
    "kernel_time", "readback", "timer", "first_call", "first_call_returned",
    "first_call_after_sync", "device_init", "warmup_timed_run",
})
FIRST_CALL_METHODS = frozenset({"device_init", "first_call", "first_call_returned",
                                "first_call_after_sync"})
SECTIONS = ("methods", "first call", "CPU", "warm-up", "accuracy")
# The match key. Fields in WILDCARD may be unrecorded ('') on one side and match anything.
KEY = ("framework", "label", "device", "shape", "method", "stat", "threads_key", "cache",
       "process", "warmup", "iteration", "precision")
WILDCARD = ("label", "device", "shape", "threads_key", "cache", "warmup", "precision")


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


# ---- the sides --------------------------------------------------------------------------------


def load_side(spec: str) -> Side:
    """A results folder (latest sweep), `folder@sweep`, or a captured log file."""
    path = Path(spec)
    if path.is_file():
        return _log_side(spec, path)
    folder, sweep = path, None
    if not path.exists() and "@" in spec:
        head, sweep = spec.rsplit("@", 1)
        folder = Path(head)
    if not folder.is_dir():
        raise InputError(f"{spec}: no such results folder or log file")
    return _store_side(spec, folder, sweep)


def _log_side(spec: str, path: Path) -> Side:
    try:
        text = path.read_bytes().decode("utf-8", "replace")
    except OSError as exc:
        raise InputError(f"{spec}: cannot read log: {exc.strerror}") from None
    parsed = parse_text(text)
    if not parsed.figures:
        raise InputError(f"{spec}: no figures in this log ({parsed.line_count} lines, none of "
                         "the printed forms of docs/LINES.md)")
    return Side(spec, path.name, dataset.from_parse(parsed, path.name), list(parsed.headers),
                "log")


def _store_side(spec: str, folder: Path, sweep: str | None) -> Side:
    store = Store(folder)
    if not store.path.is_file():
        raise InputError(f"{spec}: {folder} holds no results store ({store.path.name})")
    with store.reading():
        known = [s["sweep_id"] for s in store.sweeps()]
        if not known:
            raise InputError(f"{spec}: the results store in {folder} holds no sweep")
        if sweep is not None and sweep not in known:
            raise InputError(f"{spec}: no sweep {sweep!r} in {folder} (sweeps: "
                             f"{', '.join(known[-5:])})")
        sweep = sweep or store.latest_sweep()
        stdouts = store.query("SELECT stdout FROM runs WHERE sweep_id=? AND status='ok'",
                              (sweep,))
    headers = [h for r in stdouts
               for h in parse_text((r["stdout"] or b"").decode("utf-8", "replace")).headers]
    return Side(spec, f"{folder.name}@{sweep}", dataset.load(folder, sweep), headers, "store",
                sweep)


# ---- one row per measurement of a side --------------------------------------------------------


def _text(value: Any) -> str:
    return "" if value is None or (not isinstance(value, str) and pd.isna(value)) else str(value)


def _int_or_none(value: Any) -> int | None:
    return None if value is None or pd.isna(value) else int(value)


def measurements(side: Side) -> pd.DataFrame:
    """A side's figures, one row per summary line (median, with its min) or single figure.

    Columns: the KEY fields as text, `value`, `min`, `samples` (array or None), `unit` (one
    program run), `experiment`, `reps` (the unit's most repetitions), `threads`, `order`.
    """
    fig = side.data.figures.reset_index(drop=True)
    if fig.empty:
        return pd.DataFrame(columns=[*KEY, "value", "min", "samples", "run_id"])
    fig = fig.assign(sample_key=summary_keys(fig), order=range(len(fig)))
    measured = fig["status"].fillna("ok").eq("ok") & fig["role"].fillna("").ne("priming")
    fig = fig[measured & fig["method"].notna() & fig["value_s"].notna()]
    sets = sample_sets(side.data.samples)
    mins = fig[fig["stat"] == "min"].set_index("sample_key")["value_s"].to_dict()
    reps = fig.groupby(["run_id", "experiment"], dropna=False)["runs"].max()
    rows = [_measurement(r, mins, sets, reps) for r in fig[fig["stat"] != "min"].to_dict("records")]
    frame = pd.DataFrame(rows, dtype=object)  # object: ints stay ints, None stays None
    # A process series (the first-call experiment's processes 1, 2) is told from a single run
    # that is also process 1: a store's series is one experiment, a log's the whole log.
    group = "experiment" if side.kind == "store" else "run_id"
    frame["series"] = frame.groupby([group, "framework", "label", "method"])["process"] \
        .transform("nunique")
    return frame


def _measurement(r: dict[str, Any], mins: dict[str, float], sets: dict[str, np.ndarray],
                 reps: pd.Series) -> dict[str, Any]:
    device = _text(r["device"])
    device = "cpu" if device == "flex" else device
    threads = _int_or_none(r.get("threads_requested"))
    threads = _int_or_none(r["threads"]) if threads is None else threads
    label, method = _text(r["label"]), _text(r["method"])
    if method == "accuracy":  # a log names builds 'torch cpu', a store 'cpu': one spelling
        label = _accuracy_label(label)
    key = r["sample_key"] if r["stat"] == "median" else None
    unit_reps = reps.get((r["run_id"], r["experiment"]))
    return {
        "framework": _text(r["framework"]), "label": label, "device": device,
        "shape": _text(r["shape"]), "method": method, "stat": _text(r["stat"]),
        "threads_key": _threads_key(device, threads),
        "cache": "" if _text(r["cache"]) == "none" else _text(r["cache"]),
        "process": str(_int_or_none(r["process"]) or 1), "warmup": _text(r["warmup"]),
        "iteration": _text(_int_or_none(r["iteration"])), "precision": _text(r.get("precision")),
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


_ACCURACY_BUILDS = {"flex template": "flex(template)", "flex default": "flex"}


def _accuracy_label(label: str) -> str:
    first, _, rest = label.partition(" ")
    if first not in ("torch", "burn") or not rest:
        return label
    if rest.startswith("flex ") and rest not in _ACCURACY_BUILDS:
        return "flex+" + rest.removeprefix("flex ")
    return _ACCURACY_BUILDS.get(rest, rest)


# ---- pairing labels across machines -----------------------------------------------------------


def _pair_labels(ma: pd.DataFrame, mb: pd.DataFrame) -> tuple[pd.DataFrame, pd.DataFrame,
                                                               list[str]]:
    """Compare an accelerator (or fastest CPU build) under its two names as one figure."""
    notes = []
    for framework in ("torch", "burn"):
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
    return (m["device"] == "cpu") & m["label"].str.startswith("flex+") & (m["method"] != "accuracy")


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
    """Pairs (A row, B row, note), and the rows of each side left without a partner."""
    a_rows, b_rows = _best_per_key(ma), _best_per_key(mb)
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
    for a in left_a:  # second pass: a field one side did not record matches anything
        found = [b for b in free_b.values() if _loose_equal(a, b)]
        if found:
            best = _prefer(found, a)
            pairs.append((a, free_b.pop(id(best)), _unrecorded(a, best)))
        else:
            still_a.append(a)
    return pairs, still_a, list(free_b.values())


def _key(row: dict[str, Any]) -> tuple[str, ...]:
    return tuple(row[k] for k in KEY)


def _best_per_key(m: pd.DataFrame) -> list[dict[str, Any]]:
    """All rows; where several runs of one side share a key and an experiment, the first."""
    if m.empty:
        return []
    return m.drop_duplicates([*KEY, "experiment"]).to_dict("records")


def _prefer(found: list[dict[str, Any]], a: dict[str, Any]) -> dict[str, Any]:
    """The same experiment as A's if there is one, else a run of the same kind (one of a process
    series, or a single process), else the most repetitions, then the first."""
    return min(found, key=lambda b: (b["experiment"] != a["experiment"],
                                     b["series"] != a["series"], -b["reps"], b["order"]))


def _loose_equal(a: dict[str, Any], b: dict[str, Any]) -> bool:
    return all(a[k] == b[k] or (k in WILDCARD and "" in (a[k], b[k])) for k in KEY)


def _unrecorded(a: dict[str, Any], b: dict[str, Any]) -> str:
    names = {"threads_key": "threads", "shape": "shape"}
    parts = [f"{names.get(k, k)} not recorded in {'A' if a[k] == '' else 'B'}"
             f" ({b[k] or a[k]} in {'B' if a[k] == '' else 'A'})"
             for k in WILDCARD if a[k] != b[k]]
    return "; ".join(parts)


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
    if a <= 0 or b <= 0 or not (math.isfinite(a) and math.isfinite(b)):
        return {"basis": "no ratio (a zero or non-finite figure)"}
    ci = None
    if a_samples is not None and b_samples is not None:
        ci = ratio_ci(b_samples, a_samples)
    if ci is None or not all(math.isfinite(x) and x > 0 for x in ci):
        ratio = b / a
        return {"ratio": ratio, "basis": "one figure", "verdict": verdict(ratio, ratio,
                                                                           min_effect)}
    lo, hi = ci
    ratio = float(np.median(b_samples)) / float(np.median(a_samples))
    return {"ratio": ratio, "lo": lo, "hi": hi,
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


def section_of(row: dict[str, Any]) -> str:
    if row["method"] == "accuracy":
        return "accuracy"
    if row["method"] == "warmup_timed_run":
        return "warm-up"
    if row["device"] == "cpu":
        return "CPU"
    return "first call" if row["method"] in FIRST_CALL_METHODS else "methods"


METHOD_WORDS = {
    "no_sync": "no sync", "with_sync": "with sync", "device_time": "device time",
    "device_time_no_flush": "device time without flush", "device_time_queued":
    "device time (queued)", "kernel_time": "kernel time", "readback": "read-back",
    "timer": "benchmark.Timer", "first_call": "first call", "first_call_returned":
    "first call returned", "first_call_after_sync": "first call after sync",
    "device_init": "device init", "warmup_timed_run": "timed run", "accuracy": "accuracy",
}


def describe(a: dict[str, Any], b: dict[str, Any]) -> str:
    """'torch mps/cuda with sync', 'burn flex 1 thread first call', 'burn warm cache, ...'."""
    def v(k: str) -> str:
        return a[k] or b[k]

    words = [v("framework") or "?", v("label") or "?"]
    if v("shape") and v("shape") != "1024x1024":
        words.append(v("shape"))
    if v("device") == "cpu":
        ta, tb = a["threads"], b["threads"]
        if ta is not None or tb is not None:
            count = str(ta if ta == tb or tb is None else tb if ta is None else f"{ta}/{tb}")
            words.append(f"{count} thread" + ("" if count == "1" else "s"))
    for k in ("cache", "warmup"):
        if v(k):
            words.append(f"{v(k)} {'cache' if k == 'cache' else 'warm-up'}")
    if a["process"] != "1" or a["method"] in FIRST_CALL_METHODS - {"first_call"}:
        words.append(f"process {a['process']}")
    words.append(METHOD_WORDS.get(a["method"], a["method"]))
    if a["iteration"]:
        words.append(a["iteration"])
    if a["stat"] not in ("median", "value"):
        words.append(a["stat"])
    return " ".join(words)


def _row(a: dict[str, Any], b: dict[str, Any], note: str, min_effect: float) -> Row:
    row = Row(section_of(a), describe(a, b), a["stat"], a["value"], b["value"], a["min"],
              b["min"], note=note)
    if a["method"] not in TIME_METHODS or a["stat"] not in ("median", "value"):
        return row  # a count or an accuracy statistic: plain values
    row.apart = _apart(a, b)
    if row.apart:
        row.ratio = b["value"] / a["value"] if a["value"] > 0 else None
        return row
    for name, value in judge(a["value"], b["value"], a["samples"], b["samples"],
                             min_effect).items():
        setattr(row, name, value)
    return row


def compare(a: Side, b: Side, min_effect: float = DEFAULT_MIN_EFFECT) -> Comparison:
    """Match the two sides' figures and give each time figure its verdict."""
    if not min_effect > 0:
        raise InputError(f"--min-effect must be above 0 (got {min_effect})")
    ma, mb, pairings = _pair_labels(measurements(a), measurements(b))
    pairs, only_a, only_b = match(ma, mb)
    if not pairs:
        raise InputError(f"{a.spec} and {b.spec} have no figure in common (nothing measured "
                         "the same thing on both sides)")
    rows = [_row(x, y, note, min_effect) for x, y, note in pairs]
    order = {s: i for i, s in enumerate(SECTIONS)}
    rows.sort(key=lambda r: order[r.section])
    return Comparison(a, b, min_effect, machine_facts(a, b), pairings, rows,
                      [describe(x, x) for x in only_a], [describe(y, y) for y in only_b])
