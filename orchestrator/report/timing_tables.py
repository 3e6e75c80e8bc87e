"""Tables 1, 2, 3 and 5 of the chapter: timing methods, first calls, CPU builds, warm-up.

Built from the prepared figures (tables.prepare) as DataFrames of display strings, durations
in Rust's `{:.3?}` form. Where several runs measured the same thing, the one with the most
repetitions is shown (tables.one_unit_per).
"""

from __future__ import annotations

import math
from typing import Any

import pandas as pd

from orchestrator import programs, vocabulary
from orchestrator.data import frame_records
from orchestrator.report import cache_report
from orchestrator.report.cells import duration
from orchestrator.report.tables import (
    MISSING,
    Table,
    column_name,
    cpu_build_name,
    empty,
    first_value,
    framework_name,
    group_positions,
    one_unit_per,
    ordered,
    split,
    threads_column,
)

# ---- 1. timing methods per accelerator ------------------------------------------------------


def methods_rows(fig: pd.DataFrame) -> pd.DataFrame:
    """The accelerator figures of table 1, one run per framework, device, shape and method,
    from the chapter's experiments only (`chapter_experiments`)."""
    rows = fig[(fig["device"] != "cpu") & fig["method"].isin(vocabulary.method_keys(table1=True))]
    return one_unit_per(chapter_experiments(rows), ["framework", "label", "shape", "method"])


def chapter_experiments(rows: pd.DataFrame) -> pd.DataFrame:
    """The rows of experiments that time one shape: an experiment timing several (the size
    sweep `sizes`, 64² to 8192²) is section 6b's, not table 1's, whose columns are targets of
    the chapter's one matmul. Where every experiment sweeps sizes, all rows stay (a table 1
    of many shapes, as before, rather than none); a captured log's sections (no experiment)
    always stay."""
    if rows.empty:
        return rows
    named = (rows["experiment"] != "") & (rows["section"] == "")  # a log's are its sections
    shapes = rows[named].groupby("experiment")["shape"].nunique()
    sweeps = set(shapes[shapes > 1].index)
    kept = rows[~rows["experiment"].isin(sweeps)]
    return kept if not kept.empty else rows


def methods_table(rows: pd.DataFrame) -> Table:
    """Table 1 from the rows its section selected (`methods_rows`)."""
    title = "Timing methods on the accelerator"
    if rows.empty:
        return empty("methods", title, "no accelerator runs in this data")
    targets = ordered(rows, ["framework", "label", "shape"])
    several_shapes = len({t[2] for t in targets}) > 1
    table: dict[str, list[str]] = {"method": []}
    methods = [m for m in vocabulary.method_keys(table1=True) if m in set(rows["method"])]
    for method in methods:
        table["method"].append(vocabulary.words(method))
    table["method"].append("1-min load before → after")
    # grouped once (a mask of all rows per target is quadratic in the targets), each target's
    # rows read as plain records (a frame per target was seconds at 5000 runs: bench fig. 6)
    records = frame_records.records(rows[["method", "stat", "value_s", "runs", "load1_before",
                    "load1_after"]])
    groups = group_positions(rows, ["framework", "label", "shape"])
    for framework, label, shape in targets:
        name = column_name(framework, label) + (f" {shape}" if several_shapes else "")
        mine = [records[i] for i in groups[(framework, label, shape)]]
        cells = _firsts(mine)
        mins = [_method_cell(cells, m, "min") for m in methods]
        table[f"{name} min"] = [*mins, load_text(mine)]
        table[f"{name} median"] = [*(_method_cell(cells, m, "median") for m in methods), ""]
    return Table("methods", title, pd.DataFrame(table))


def _firsts(rows: list[dict[str, Any]]) -> dict[tuple[Any, Any], tuple[Any, Any]]:
    """(method, stat) -> the first row's (value_s, runs): read once per target, where a
    lookup per cell made a DataFrame each (bench figure 6)."""
    out: dict[tuple[Any, Any], tuple[Any, Any]] = {}
    for r in rows:
        out.setdefault((r["method"], r["stat"]), (r["value_s"], r["runs"]))
    return out


def _method_cell(cells: dict[tuple[Any, Any], tuple[Any, Any]], method: str, stat: str) -> str:
    found = cells.get((method, stat))
    cell = duration(found[0]) if found is not None else ""
    count = cells.get((method, "no_time_count"))
    if stat == "min" and count is not None and 0 < count[0] < math.inf:
        empty_runs = int(count[0])
        runs = count[1]
        of = f" of {int(runs)}" if pd.notna(runs) else ""
        flag = f"{empty_runs}{of} read no time"
        cell = f"{cell} ({flag})" if cell else flag
    return cell


def load_text(rows: list[dict[str, Any]]) -> str:
    """The highest 1-minute load the runs behind these rows saw, before → after."""
    before, after = (max((float(r[c]) for r in rows if pd.notna(r[c])), default=math.nan)
                     for c in ("load1_before", "load1_after"))
    if pd.isna(before) and pd.isna(after):
        return "not recorded"
    return f"{_load(before)} → {_load(after)}"


def _load(value: Any) -> str:
    return "?" if pd.isna(value) else f"{float(value):.2f}"


# ---- 2. first call across processes --------------------------------------------------------


def first_call_rows(fig: pd.DataFrame) -> pd.DataFrame:
    """The accelerator first-call figures of table 2."""
    first_call = vocabulary.method_keys(first_call_column=True)
    return fig[(fig["device"] != "cpu") & fig["method"].isin(first_call)]


def first_call_table(rows: pd.DataFrame) -> Table:
    """Table 2 from the rows its section selected (`first_call_rows`)."""
    title = "First call across processes"
    if rows.empty:
        return empty("first_call", title, "no accelerator first-call figures in this data")
    # A captured log names the run in its section; a store's runs need the experiment's name.
    from_store = bool((rows["section"] == "").all())
    keys = ["unit", "experiment", "framework", "label", "process", "cache"]
    with_cache = cache_report.has_cache_info(rows)  # what autotune chose, the cache proof
    fields = [*keys, "method", "value_s",
              *(c for c in cache_report.CELL_FIELDS if with_cache and c in rows)]
    records = frame_records.records(rows[fields])  # read once: a frame and masks per row were
    out = []                                     # seconds at 5000 runs (bench figure 6)
    runs = group_positions(rows, ["unit", "framework", "label"])  # one pass
    for unit, experiment, framework, label, process, cache in ordered(rows, keys):
        mine = [r for r in (records[i] for i in runs[unit, framework, label])
                if _same_process(r["process"], process)]
        record = {"experiment": experiment} if from_store else {}
        record.update({"framework": framework_name(framework), "device": label,
                       "process": "" if pd.isna(process) else str(process), "cache": cache})
        for method, column in vocabulary.first_call_columns().items():
            record[column] = next((duration(r["value_s"]) for r in mine
                                   if r["method"] == method), "")
        if with_cache:
            record.update(cache_report.cells(mine))
        out.append(record)
    return Table("first_call", title, pd.DataFrame(out))


def _same_process(mine: Any, process: Any) -> bool:
    """A row of this process; a missing process matches every row (as `==` filled with NA's
    own answer did), a row without one no given process."""
    if pd.isna(process):
        return True
    return not pd.isna(mine) and mine == process


# ---- 3. CPU builds x threads ----------------------------------------------------------------


def cpu_rows(fig: pd.DataFrame, methods: list[str]) -> pd.DataFrame:
    """CPU figures of the first of `methods` each build and thread count has, one run each."""
    rows = fig[(fig["device"] == "cpu") & fig["method"].isin(methods)].copy()
    rows = rows[rows["stat"].isin(["min", "median", "value"])]
    if rows.empty:
        return rows
    rows["rank"] = rows["method"].map({m: i for i, m in enumerate(methods)})
    keys = ["framework", "label", "shape", "threads_key"]
    best = rows.groupby(keys, dropna=False)["rank"].transform("min")
    rows = rows[rows["rank"] == best]
    return one_unit_per(rows, [*keys, "method"])


def cpu_figures(fig: pd.DataFrame) -> pd.DataFrame:
    """Every CPU figure: the rows of table 3, its first-call table and its plot."""
    return fig[fig["device"] == "cpu"]


def cpu_table(cpu: pd.DataFrame, host: dict[str, Any]) -> Table:
    """Table 3 from the CPU figures (`cpu_figures`; any superset gives the same table)."""
    title = "CPU builds and threads (min, with sync)"
    rows = cpu_rows(cpu, vocabulary.cpu_methods())
    if rows.empty:
        return empty("cpu_threads", title, "no CPU runs in this data")
    frame = thread_pivot(rows[rows["stat"] == "min"])
    # the reference's BLAS (torch's facts) on its CPU row; machine.py's BLAS_INFO regex keeps
    # the comma that follows the name in torch's config
    found = programs.reference()
    ref = cpu_build_name(found[0].name, str(found[1])) if found else None
    blas = ((host.get(found[0].name) if found else None) or {}).get("blas") or ""
    frame["BLAS"] = ["" if b != ref else blas.rstrip(",") for b in frame["build"]]
    return Table("cpu_threads", title, frame)


def cpu_first_call_table(cpu: pd.DataFrame) -> Table:
    title = "CPU builds: first call"
    rows = cpu_rows(cpu, ["first_call"])
    if rows.empty:
        return empty("cpu_first_call", title, "no CPU first-call figures in this data")
    return Table("cpu_first_call", title, thread_pivot(rows))


def thread_pivot(rows: pd.DataFrame) -> pd.DataFrame:
    """Rows: builds; columns: the thread counts present; cells: the value as a duration."""
    rows = rows.assign(build=[cpu_build_name(f, lab)
                              for f, lab in zip(rows["framework"], rows["label"], strict=True)])
    shapes = rows["shape"].unique()
    if len(shapes) > 1:
        rows["build"] = rows["build"] + " " + rows["shape"]
    counts = sorted(int(t) for t in rows["threads_key"].dropna().unique())
    columns = [(t, threads_column(t)) for t in counts]
    if rows["threads_key"].isna().any():
        columns.append((None, "threads unknown"))
    records = []
    cells = frame_records.records(rows[["threads_key", "value_s"]])  # read once, as records:
    builds = group_positions(rows, ["build"])  # a frame and a mask per cell were seconds
    for build, label in ordered(rows, ["build", "label"]):
        record = {"build": build}
        of = [cells[i] for i in builds[(build,)]]
        for threads, column in columns:
            found = next((r["value_s"] for r in of if _threads_match(r["threads_key"], threads)),
                         _NO_CELL)
            cell = duration(found) if found is not _NO_CELL else MISSING
            if found is _NO_CELL and label in programs.one_thread_labels():
                cell = "single thread only"  # no rayon in the template: the chapter's 只有单线程
            record[column] = cell
        records.append(record)
    return pd.DataFrame(records)


_NO_CELL = object()


def _threads_match(value: Any, threads: int | None) -> bool:
    """A row of `threads` threads; None: a row whose thread count is unknown."""
    if threads is None:
        return pd.isna(value)
    return not pd.isna(value) and value == threads


# ---- 5. the warm-up puzzle ------------------------------------------------------------------


def warmup_rows(fig: pd.DataFrame) -> pd.DataFrame:
    """The warm-up puzzle's timed runs, table 5."""
    return fig[fig["method"] == "warmup_timed_run"]


def warmup_table(rows: pd.DataFrame) -> Table:
    """Table 5 from the rows its section selected (`warmup_rows`)."""
    title = "The warm-up puzzle: a warm-up without sync, then timed runs"
    if rows.empty:
        return empty("warmup", title, "no warm-up puzzle runs in this data")
    show_device = bool((rows["label"] != "").any())
    runs = sorted(int(i) for i in rows["iteration"].dropna().unique())
    with_cache = cache_report.has_cache_info(rows)
    records = []
    for (_unit, label, cache, warmup), mine in split(
            rows, ["unit", "label", "cache", "warmup"]).items():
        record = {"device": label} if show_device else {}
        record.update({"cache": cache, "warm-up": warmup})
        for i in runs:
            record[f"run {i}"] = first_value(mine[(mine["iteration"] == i).fillna(False)])
        if with_cache:
            record.update(cache_report.cells(mine))
        records.append(record)
    return Table("warmup", title, pd.DataFrame(records))
