"""Which figure of A is which figure of B: `compare`'s matching of two sides' rows
(report/compare/rows.py: one row per figure, processes pooled, keyed on what it measures).

A log's process 1 is matched with a store's cold figure, a later one with a warm figure. A
precision one side did not record is taken as the default FP32: it is paired with the FP32
run, a TF32 one left apart. An accelerator, or the fastest CPU build, that each side ran under
one name of its own (the chapter's `mps` and `metal` beside an H200's `cuda`; `flex+apple-amx`
beside `flex+x86-v4`) is paired and the pairing listed. A field one side did not record matches
any value on the other, and the pair says so. Several experiments with one figure on a side:
the same experiment as the other side's if there is one, else the one with the most
repetitions, then the most processes. Each pair goes to compare's section that takes it (the
registered sections' `CompareSection`), and is named in words (`describe`).
"""
from __future__ import annotations

from typing import Any

import pandas as pd

from orchestrator import programs, vocabulary
from orchestrator.data import frame_records
from orchestrator.report import sections as report_sections
from orchestrator.report.compare.rows import key_fields, wildcard_fields


def sections() -> tuple[str, ...]:
    """Compare's sections, in its order: the report's registered sections that say how
    compare shows them (report/sections/)."""
    return tuple(c.words for c in report_sections.compare_sections())


def verdict_sections() -> tuple[str, ...]:
    """The sections whose rows get verdict tables (accuracy's get none)."""
    return tuple(c.words for c in report_sections.compare_sections() if c.verdicts)


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
    prefixes = tuple(x for p in programs.active().programs for x in p.naming.build_prefixes)
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
    # row per A row was quadratic (76,000 figures fit within the input cap)
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
    return frame_records.records(m.drop_duplicates([*key, "experiment"]))


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


def _arithmetic(pa: str, pb: str, said: bool = False) -> list[str]:
    """'TF32' where a figure ran in TF32 (its key has the precision, so its name must too: an
    FP32 and a TF32 `torch cuda no sync` are two rows), also where the other side did not
    record it (the note says so); 'FP32/TF32' where both recorded and differ; nothing for the
    default FP32, so the other names stay as they were."""
    if "tf32" not in (pa, pb):
        # `said`: another figure of the same name holds other arithmetic (JAX's `highest`,
        # FP32, beside its default, unknown without an accuracy run): each says its own
        return ([f"[{(pa or pb).upper() or 'arithmetic unknown'}]"] if said else [])
    return ["TF32"] if "" in (pa, pb) or pa == pb else [f"{pa.upper()}/{pb.upper()}"]


def describe(a: dict[str, Any], b: dict[str, Any], said: bool = False) -> str:
    """'torch mps/cuda with sync', 'torch cuda TF32 no sync', 'burn flex 1 thread first call',
    'burn warm cache, ...'."""
    def v(k: str) -> str:
        return a[k] or b[k]

    words = [w for w in (v("framework"), v("label")) if w]
    if v("shape") and v("shape") != "1024x1024":
        words.append(v("shape"))
    words += _arithmetic(a.get("precision") or "", b.get("precision") or "", said)
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
