"""What the report's tables share, plus the accuracy table and the list of failed runs.

A table is a DataFrame of display strings (`Table`): exactly what report.md shows and the
table's CSV holds, in the chapter's units: durations in Rust's `{:.3?}` form (`651.666µs`),
errors as `2.008e-06` (report/cells.py). A builder whose data is absent returns a Table with
`missing` set, so the report can say why the section is empty. The timing tables are in
timing_tables.py.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pandas as pd

from orchestrator import programs, vocabulary
from orchestrator.data import identity
from orchestrator.data.dataset import Dataset, typed
from orchestrator.report import arithmetic
from orchestrator.report.cells import duration, scientific
from orchestrator.report.findings import Kind
from orchestrator.report.names import (  # re-exported: tables, plots and ratios name runs so
    accuracy_build_name,
    as_text,
    column_name,
    cpu_build_name,
    describe_run,
    framework_name,
    threads_column,
)
from orchestrator.report.sample_sets import summary_keys
from orchestrator.report.section import Table  # re-exported: every builder makes one

__all__ = [
    "Table",
    "accuracy_build_name",
    "as_text",
    "column_name",
    "cpu_build_name",
    "describe_run",
    "framework_name",
    "threads_column",
]

MISSING = "—"


# ---- preparing the figures ------------------------------------------------------------------


def prepare(data: Dataset) -> pd.DataFrame:
    """Figures of measured, successful runs, with the helper columns the builders share.

    `unit` tells one program run from another: run_id alone does in a results store, but a
    captured log has one run_id for all its sections. `sample_key` points at the raw samples.
    """
    fig = typed(data.figures.copy())  # a frame built by hand gets the dataset's dtypes too
    fig["sample_key"] = summary_keys(fig) if not fig.empty else pd.Series(dtype=object)
    for col in ("framework", "label", "device", "shape", "cache", "warmup", "experiment",
                "section", "role", "status", "method", "stat", "build"):
        fig[col] = _objects(fig[col], "")
    fig["label"] = _tag_builds(fig)
    fig["label"] = _tag_exec(fig)  # 'cuda [compile]': a compiled run is a run of its own
    fig["label"] = arithmetic.tag_labels(fig)  # 'cuda [tf32]': a TF32 run is a run of its own
    fig["label"] = identity.tag_variants(fig)  # 'cuda #c': a variant's runs are runs of its own
    fig["unit"] = fig["run_id"].astype(str) + "|" + fig["experiment"].astype(str)
    fig["order"] = range(len(fig))
    fig["threads_key"] = _threads_key(fig)
    ok = (fig["status"].isin(["ok", ""])) & (fig["role"] != "priming") & (fig["method"] != "")
    # a profile run's program ran under ncu: of its figures only ncu's own are kept
    profiler = fig["profiler"].astype(object).where(fig["profiler"].notna(), "") \
        if "profiler" in fig else pd.Series("", index=fig.index)
    ok &= (fig["role"] != "profile") | profiler.isin(list(vocabulary.profile_profilers()))
    return _compact(fig[ok].reset_index(drop=True))


def _compact(fig: pd.DataFrame) -> pd.DataFrame:
    """The text columns as plain objects, in one block: every section takes its rows from this
    frame group by group (`split`), and a take copies each block; a pyarrow string column is a
    block of its own (27 of the frame's 59), so a take of 20 rows cost 6.1 ms, as one object
    block 1.6 ms (bench figure 6, a store of 50 runs). Missing text stays NaN, as in `str`.
    Whole-number columns the report only reads cell by cell (NVML's `gpu_*`, `line_no`) go
    into that block too (each Int64 column is a block of its own); the ones it compares
    (`process`, `threads`, `runs`, ...) keep their Int64, whose `==` says NA where one is."""
    fig = fig.assign(**{c: _objects(fig[c]) for c in fig.columns
                        if isinstance(fig[c].dtype, pd.StringDtype)})
    plain = {c: object for c in fig.columns
             if str(fig[c].dtype) == "Int64" and (c.startswith("gpu_") or c == "line_no")}
    return (fig.astype(plain) if plain else fig).copy()  # the copy consolidates the blocks


def _objects(column: pd.Series, missing: Any = np.nan) -> pd.Series:
    """A column as plain objects, `missing` where it has no value; a text column's each
    distinct text one str object (`astype(object)` made one per cell: 2.2 million of them,
    130 MiB, for the 81,634 figures of a 5000-run store). Other columns as they were."""
    if not isinstance(column.dtype, pd.StringDtype):
        return column.astype(object).where(column.notna(), missing)
    codes, uniques = pd.factorize(column)  # no value: -1, the last of `values`
    values = np.empty(len(uniques) + 1, dtype=object)
    values[:-1] = np.asarray(uniques, dtype=object)
    values[-1] = missing
    return pd.Series(values[codes], index=column.index, dtype=object)


def _tag_builds(fig: pd.DataFrame) -> pd.Series:
    """'flex [accelerate build]' where a CPU build prints another build's label.

    Every Flex crate prints 'flex...' labels; a build of unusual features (the chapter's
    accelerate) would print plain 'flex' and be merged with the default build's figures.
    """
    expected = fig["label"].map(_expected_build)
    odd = (fig["device"] == "cpu") & (fig["build"] != "") & (fig["build"] != expected)
    return fig["label"].mask(odd, fig["label"] + " [" + fig["build"] + " build]")


def _tag_exec(fig: pd.DataFrame) -> pd.Series:
    """'cuda [compile:max-autotune]' for the rows of a run in another execution mode than
    its program's own (column `exec_mode`); every other label as it is."""
    if "exec_mode" not in fig:
        return fig["label"]
    mode = _objects(fig["exec_mode"], "")
    return fig["label"].mask(mode != "", fig["label"] + " [" + mode + "]")


def _expected_build(label: str) -> str:
    """The build a CPU label implies, as its program says (Program.naming.expected_build)."""
    found = (p.naming.expected_build(label) for p in programs.active().programs)
    return next((b for b in found if b is not None), label)


def _threads_key(fig: pd.DataFrame) -> pd.Series:
    """The thread count a figure belongs under: requested (what the experiment means; a
    different reported count gets a warning), else reported, else 1 for the template."""
    threads = fig["threads_requested"].astype("Int64").fillna(fig["threads"].astype("Int64"))
    template = fig["label"].isin(sorted(programs.one_thread_labels()))
    return threads.mask(threads.isna() & template, 1)


def one_unit_per(frame: pd.DataFrame, keys: list[str]) -> pd.DataFrame:
    """Keep, for each key, the rows of a single run.

    Several experiments time the same thing (the methods and first-call experiments both print
    'with sync'); the run with the most repetitions is the one the table means, then the first.
    """
    if frame.empty:
        return frame
    ranked = frame.assign(_runs=frame["runs"].astype("Float64").fillna(0.0))
    ranked = ranked.sort_values(["_runs", "order"], ascending=[False, True])
    chosen = ranked.drop_duplicates(keys)[[*keys, "unit"]]
    kept = frame.merge(chosen, on=[*keys, "unit"], how="inner")
    return kept.sort_values("order").reset_index(drop=True)


# ---- names and cells ------------------------------------------------------------------------


def ordered(frame: pd.DataFrame, keys: list[str]) -> list[tuple[Any, ...]]:
    """The distinct key tuples in order of first appearance (the order the log printed)."""
    return list(dict.fromkeys(frame[keys].itertuples(index=False, name=None)))


def group_positions(frame: pd.DataFrame, keys: list[str]) -> dict[tuple[Any, ...], list[int]]:
    """Key tuple -> the positions of its rows, the groups in order of first appearance (as
    `ordered`): one pass over the frame, where a `lookup` per group is a mask of all rows per
    group, quadratic in the groups (bench figure 6: a store of 5,000 runs)."""
    # the columns as lists (tolist: the values itertuples gives), a NaN made one object only in
    # a column that has one (a check of every cell of every key was half of this, seconds at
    # 5000 runs), then the tuples zipped in C
    columns = [_values(frame[k]) for k in keys]
    for j, k in enumerate(keys):
        if frame[k].dtype.kind in "fO" and frame[k].isna().any():  # every NaN one group
            columns[j] = [_NAN if isinstance(v, float) and v != v else v for v in columns[j]]
    out: dict[tuple[Any, ...], list[int]] = {}
    if not keys:  # no key: every row one group, as a tuple of no values
        return {(): list(range(len(frame)))} if len(frame) else {}
    for i, key in enumerate(zip(*columns, strict=True)):
        found = out.get(key)
        if found is None:
            out[key] = [i]
        else:
            found.append(i)
    return out


_NAN = float("nan")


def _values(column: pd.Series) -> list[Any]:
    """A column's values as itertuples gives them: tolist's Python scalars, but a masked
    column's (Int64's) numpy scalars and pd.NA, as iterating it gives."""
    masked = isinstance(column.dtype, pd.api.extensions.ExtensionDtype) and \
        not isinstance(column.dtype, pd.StringDtype)
    return list(column) if masked else column.tolist()


def split(frame: pd.DataFrame, keys: list[str]) -> dict[tuple[Any, ...], pd.DataFrame]:
    """Key tuple -> its rows (`lookup` of each), in order of first appearance, in one pass."""
    return {key: frame.iloc[positions] for key, positions in group_positions(frame, keys).items()}


def lookup(frame: pd.DataFrame, **match: Any) -> pd.DataFrame:
    mask = pd.Series(True, index=frame.index)
    for col, value in match.items():
        mask &= frame[col] == value
    return frame[mask]


def first_value(frame: pd.DataFrame, fmt: Callable[[Any], str] = duration, **match: Any) -> str:
    rows = lookup(frame, **match)
    return fmt(rows["value_s"].iloc[0]) if not rows.empty else ""


def empty(name: str, title: str, why: str) -> Table:
    return Table(name, title, pd.DataFrame(), missing=why)


# ---- 4. accuracy ----------------------------------------------------------------------------

ACCURACY_STATS = {"max_err_f64_ref": "max|x - f64 ref|",
                  "max_diff_torch_cpu": "max|x - torch cpu|", "max_abs_ref": "max |ref|"}


def accuracy_rows(fig: pd.DataFrame) -> pd.DataFrame:
    # with the kernel that computed each product (bench_py's `accuracy kernel time (cupti)`)
    rows = fig[fig["method"].isin(["accuracy", "accuracy_kernel"])].copy()
    rows["build"] = [accuracy_build_name(f, lab)
                     for f, lab in zip(rows["framework"], rows["label"], strict=True)]
    return rows


def accuracy_table(rows: pd.DataFrame) -> Table:
    """Table 4 from the rows its section selected (`accuracy_rows`)."""
    title = "Same numbers from every build"
    builds = rows[rows["build"] != ""]
    if builds.empty:
        return empty("accuracy", title, "no accuracy comparisons in this data")
    letters = _group_letters(builds)
    has = set(builds["stat"])
    known = any(arithmetic.precision_of(builds))  # some build's arithmetic recorded, or disputed
    tuned = "autotune_kernel" in builds and bool(_kernels(builds).any())
    # a build measured at several shapes has a row per shape, and the row must say which:
    # without it two rows read as one build's two answers (the chapter's one shape: no column)
    shapes = builds["shape"].nunique() > 1
    records = []
    for build, shape in ordered(builds, ["build", "shape"]):
        mine = lookup(builds, build=build, shape=shape)
        record = {"build": build, "shape": shape} if shapes else {"build": build}
        for stat, column in ACCURACY_STATS.items():
            if stat in has:
                record[column] = first_value(mine, _accuracy_number(stat), stat=stat)
        if "bitwise_group" in has:
            record["bit-for-bit group"] = first_value(mine, lambda g: letters.get(g, ""),
                                                      stat="bitwise_group")
        if "inputs_match_torch_cpu" in has:
            record["inputs = torch cpu's"] = first_value(mine, _yes_no,
                                                         stat="inputs_match_torch_cpu")
        if known:  # how the build computed, and how that is known
            record["arithmetic"] = arithmetic.accuracy_cell(mine)
        if has & {"kernel_min", "kernel_ops"}:  # what computed c (CUPTI; JAX: its module)
            record["kernel"] = _accuracy_kernel(mine)
        if tuned:  # the kernel autotune chose for the matmul that computed these arrays
            record["autotune kernel"] = _kernel_cell(mine)
        records.append(record)
    return Table("accuracy", title, pd.DataFrame(records).fillna(""))


def _accuracy_kernel(mine: pd.DataFrame) -> str:
    """What computed a build's product: the compiled module's op(s) (JAX), then the kernel(s)
    the profiler saw, in launch order."""
    found = mine[(mine["method"] == "accuracy_kernel")
                 & mine["stat"].isin(["kernel_ops", "kernel_min"])]
    names = [str(k) for k in found["kernel"].dropna() if str(k)] if "kernel" in found else []
    return " + ".join(dict.fromkeys(names))
def _kernels(rows: pd.DataFrame) -> pd.Series:
    return rows["autotune_kernel"].astype(object).where(rows["autotune_kernel"].notna(), "") \
        .astype(str).str.strip()


def _kernel_cell(rows: pd.DataFrame) -> str:
    """The autotune winner recorded for this build's accuracy run (cubecl's store after it);
    '' for a build that does not autotune (Flex, torch, JAX)."""
    found = [k for k in dict.fromkeys(_kernels(rows)) if k]
    return ", ".join(found)


def _accuracy_number(stat: str) -> Callable[[Any], str]:
    # max |ref| is a magnitude of about 1, which the chapter prints as 1.095, not 1.095e+00.
    return (lambda v: f"{float(v):.4g}") if stat == "max_abs_ref" else scientific


def _group_letters(rows: pd.DataFrame) -> dict[float, str]:
    groups = rows.loc[rows["stat"] == "bitwise_group", "value_s"]
    return {g: chr(ord("A") + i) for i, g in enumerate(dict.fromkeys(groups))}


def _yes_no(value: Any) -> str:
    return "" if pd.isna(value) else ("yes" if value else "no")


def global_max_ref(rows: pd.DataFrame) -> str:
    """A log's single `max |ref| = X` line, which belongs to no build (in `accuracy_rows`)."""
    rows = rows[(rows["build"] == "") & (rows["stat"] == "max_abs_ref")]
    return _accuracy_number("max_abs_ref")(rows["value_s"].iloc[0]) if not rows.empty else ""


# ---- runs that did not measure --------------------------------------------------------------


def failures_table(figures: pd.DataFrame) -> Table:
    """Every run that was skipped or failed, once, with the reason it gave."""
    title = "Runs skipped or failed"
    rows = figures[figures["status"].isin(["failed", "skipped"])]
    if rows.empty:
        return empty("failures", title, "every run succeeded")
    rows = rows.drop_duplicates(["run_id", "role"])
    records = [{"status": row["status"], "experiment": as_text(row["experiment"]),
                "run": describe_run(row), "reason": as_text(row["reason"]),
                "expected": "yes" if _flag(row["expect_failure"]) else ""}
               for _, row in rows.iterrows()]
    return Table("failures", title, pd.DataFrame(records))


def unexpected_successes(figures: pd.DataFrame) -> list[str]:
    """Runs marked expect_failure whose build worked (the chapter's accelerate, offline there,
    may build on a networked Mac): a measured build, its figures in the tables like any other
    build's under the name given here, not an expected failure that did not happen."""
    expected = figures["expect_failure"].map(_flag).astype(bool)
    rows = figures[expected & (figures["status"] == "ok")].drop_duplicates(["run_id"])
    return [Kind.EXPECTED_FAILURE_RAN.says(f"{describe_run(row)} ({as_text(row['experiment'])}); "
            "its build worked on this machine, so its figures are measured ones, shown as "
            f"'{_table_name(row)}'.") for _, row in rows.iterrows()]


def _table_name(row: pd.Series) -> str:
    framework, label = as_text(row["framework"]), as_text(row["label"])
    return cpu_build_name(framework, label) if row["device"] == "cpu" else \
        column_name(framework, label)


def _flag(value: Any) -> bool:
    return False if value is None or pd.isna(value) else bool(value)
