"""The tidy dataset: one row per figure, with each run's context; samples in a second table.

Python users get DataFrames from `load(results_folder)`; `export_csv` writes them for the
chapter. Runs that produced no figure (skipped, failed) still get a row with their reason, so
nothing vanishes from the dataset. Accuracy rows are computed here from the stored arrays.
"""

from __future__ import annotations

import json
import operator
import os
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, NamedTuple

import numpy as np
import pandas as pd
import pyarrow as pa

from orchestrator import axes, vocabulary
from orchestrator.data import (
    accuracy,
    cache_columns,
    measure_env,
    ncu,
    outputs,
    precision,
    schema,
    state_columns,
)
from orchestrator.data import damage as damage_mod
from orchestrator.data.damage import Damage
from orchestrator.data.merge import latest_of_host
from orchestrator.data.store import Store, SweepState
from orchestrator.errors import InputError
from orchestrator.records import CacheState, Header, ParseResult, Role, RunDef, Status

# The figures' columns, in the CSV's order, each with its dtype: the measurement vocabulary's
# (orchestrator/vocabulary.py: run, state (data/state_columns.py), cache (data/cache_columns.py),
# precision (data/precision.py), profiler, host, measure_env (data/measure_env.py) columns)
COLUMNS = vocabulary.column_keys()
# the samples CSV; the DataFrame adds `summary_line` (the figures' `line_no` it belongs to)
SAMPLE_CSV_COLUMNS = ["run_id", "experiment", "label", "shape", "method", "idx", "value_s",
                      "sweep_id"]
SAMPLE_COLUMNS = [*SAMPLE_CSV_COLUMNS, "summary_line"]
# Figure columns the run's own definition knows better than a printed line does
_FROM_RUN = {"framework", "cache"}
# The dataset writes these as '' rather than empty cells when a figure has none
_BLANK = {"framework", "warmup"}
SWEEPS_NAMED = 10  # the latest sweeps an unknown --sweep's error lists
# What one dataset holds at most, a captured log's or a store sweep's: report, compare and
# export read that in bounded time and memory (BENCHMARKS.md, bench figure 6: a store of 5000
# runs holds 81,634 figures and 566,440 sample values; at 2,000,000 sample values compare took
# 1.3 GiB, so 1,000,000); a sweep past it is refused before a row is read, as a log past it is,
# whatever MAX_RUNS let the plan run. The chapter's logs hold dozens of figures, its sweep a
# few thousand.
READ_FIGURES, READ_SAMPLES = 100_000, 1_000_000


@dataclass
class Dataset:
    figures: pd.DataFrame
    samples: pd.DataFrame
    runs: pd.DataFrame  # one row per run: definition, status, load, cache record
    host: dict[str, Any]
    # where the sweep stands (complete, or killed with 3 of 6 runs); None: a captured log
    sweep: SweepState | None = None
    damage: Damage = field(default_factory=Damage)  # rows of the store left out, and why
    # the program headers the runs printed (runs.headers_json; a log's own): provenance lines
    headers: list[Header] = field(default_factory=list)

    def gaps(self) -> list[str]:
        """What makes this less than a whole sweep, one line each, for `export` and `report`
        to say first: a sweep still running, interrupted or killed; damaged rows left out."""
        incomplete = self.sweep.incomplete() if self.sweep is not None else None
        return [line for line in [incomplete, *self.damage.lines()] if line]

    def sweep_facts(self) -> dict[str, Any]:
        """The export sidecar's `sweep` (null for a captured log) and `gaps` (data.gaps)."""
        state = self.sweep
        facts = None if state is None else {
            "sweep_id": state.sweep_id, "status": state.status, "complete": state.complete,
            "planned_runs": state.planned, "finished_runs": state.finished}
        return {"sweep": facts, "gaps": self.gaps()}


_SAMPLE_TYPES = {"idx": "Int64", "summary_line": "Int64"}


def _frame(rows: list[Any] | dict[str, Any], columns: list[str]) -> pd.DataFrame:
    """Records (dicts, lists or tuples), or columns (a dict of lists, or of `_texts`: non-empty;
    pandas infers each list's dtype as it does a record's column), as the typed frame."""
    if isinstance(rows, dict) and len(rows[columns[0]]):
        return typed(pd.DataFrame(rows, columns=columns))
    return typed(pd.DataFrame([] if isinstance(rows, dict) else rows, columns=columns))


def typed(frame: pd.DataFrame) -> pd.DataFrame:
    """`frame` with every known column in its declared dtype (vocabulary.COLUMNS): numbers
    even when no row has one (a sweep killed before its runs), text as text when every cell
    is empty (pandas would make it float64, and fill it with '' only with a warning).

    Text that pandas read as text stays as it is (its `str`, or object where a cell holds
    something else), and so does a flag column some row lacks (a captured log's)."""
    types = {**vocabulary.dtypes(), **_SAMPLE_TYPES}
    for col in frame.columns:
        dtype, column = types.get(col), frame[col]
        if dtype == "str":  # only where every cell is empty
            dtype = dtype if column.isna().all() else None
        elif dtype == "bool":  # only where no cell is
            dtype = dtype if column.notna().all() else None
        if dtype is not None and column.dtype != dtype:
            frame[col] = column.astype(dtype)
    return frame


def _run_context(run: dict[str, Any]) -> dict[str, Any]:
    d = RunDef.from_definition(json.loads(run["definition_json"]))
    before = json.loads(run["load_before_json"] or "null") or {}
    after = json.loads(run["load_after_json"] or "null") or {}
    return {
        "run_id": run["run_id"], "sweep_id": run["sweep_id"], "experiment": run["experiment"],
        "framework": d.program, "device": d.device, "status": run["status"],
        "reason": run["reason"], "build": d.build or "", "features": "+".join(d.features),
        "role": run["role"], "expect_failure": bool(run["expect_failure"]), "mode": d.mode,
        "load1_before": before.get("load1"), "load1_after": after.get("load1"),
        **axes.cells(d.params),  # shape, threads_requested, cache, process, warmup, variant...
        **state_columns.columns(run.get("state_json")),
        **cache_columns.columns(run["cache_json"]),
        "profile_of": d.profile_of or "", "profiler": "", "kernel": "",
        "measure_env": measure_env.column(d.env),
    }


def _figure_row(ctx: dict[str, Any], fig: dict[str, Any]) -> dict[str, Any]:
    """A stored figure over its run's context: what the line says wins where it says it."""
    row = dict(ctx)
    for col in schema.FIGURE_COLUMNS:
        value = fig.get(col.name)  # absent: a format-2 store from before the column
        if col.name in _FROM_RUN or value is None or (col.name in _BLANK and not value):
            continue
        row[col.dataset] = value
    row.setdefault("threads", ctx["threads_requested"])  # the line did not say: as asked
    return row


def _accuracy_entries(store: Store, runs: list[dict[str, Any]],
                      contexts: dict[str, dict[str, Any]], damage: Damage
                      ) -> list[accuracy.Arrays]:
    entries = []
    for run in runs:
        if run["status"] != "ok" or contexts[run["run_id"]]["mode"] != "accuracy":
            continue
        arrays = _arrays(store, run, contexts[run["run_id"]]["shape"], damage)
        if arrays is None or not {"a.npy", "b.npy", "c.npy"} <= arrays.keys():
            continue
        ctx = contexts[run["run_id"]]
        name = accuracy.build_name(ctx["framework"], _stdout(store, run).decode("utf-8",
                                                                                "replace"),
                                   ctx["device"])
        entries.append(accuracy.Arrays(name, run["run_id"], arrays["a.npy"], arrays["b.npy"],
                                       arrays["c.npy"]))
    return entries


def _stdout(store: Store, run: dict[str, Any]) -> bytes:
    """A run's stdout, read for the run alone (`load` reads the runs without it)."""
    found = store.query("SELECT stdout FROM runs WHERE sweep_id=? AND run_id=? ORDER BY "
                        "started_at, rowid LIMIT 1",
                        (run["sweep_id"], run["run_id"]))
    return bytes(found[0]["stdout"] or b"") if found else b""


def _arrays(store: Store, run: dict[str, Any], shape: str | None,
            damage: Damage) -> dict[str, np.ndarray] | None:
    """A run's stored arrays; each header is read first (never a whole blob that is not an
    array of the run's shape), and a run with one refused array is left out, counted."""
    where = (run["sweep_id"], run["run_id"])
    heads = store.query("SELECT name, length(data) AS size, substr(data, 1, ?) AS head FROM "
                        "artifacts WHERE sweep_id=? AND run_id=? AND name LIKE '%.npy'",
                        (accuracy.NPY_HEAD, *where))
    for row in heads:
        problem = accuracy.npy_problem(row["name"], bytes(row["head"] or b""), row["size"] or 0,
                                       shape)
        if problem is not None:
            damage.add("array", f"sweep {where[0]} run {where[1]}", problem)
            return None
    return {row["name"]: accuracy.load_npy(row["data"]) for row in store.query(
        "SELECT name, data FROM artifacts WHERE sweep_id=? AND run_id=? AND name LIKE '%.npy'",
        where)}


def _accuracy_rows(entries: list[accuracy.Arrays], contexts: dict[str, dict[str, Any]],
                   inferred: dict[str, accuracy.Inference]) -> list[dict[str, Any]]:
    rows = []
    for comp in accuracy.compare(entries):
        ctx = dict(contexts[comp.run_id])
        ctx.update(label=comp.name.split(" ", 1)[1], shape=comp.shape, op="matmul",
                   method="accuracy", method_text=comp.name)
        stats = {"max_err_f64_ref": comp.max_err_f64_ref,
                 "max_diff_torch_cpu": comp.max_diff_torch_cpu,
                 "max_abs_ref": comp.max_abs_ref,
                 "inputs_match_torch_cpu": comp.inputs_match_torch_cpu,
                 "bitwise_group": comp.bitwise_group,
                 # the evidence of the arithmetic (data/precision.py)
                 "max_err_tf32_inputs": inferred[comp.run_id].tf32_err,
                 "max_diff_tf32_product": inferred[comp.run_id].from_tf32,
                 "max_err_f32_numpy": inferred[comp.run_id].fp32_err}
        for stat, value in stats.items():
            if value is not None:
                rows.append({**ctx, "stat": stat, "value_s": float(value)})
    return rows


def load(results: Path, sweep: str | None = None) -> Dataset:
    """The dataset of one sweep (default: the latest) of a results folder. A sweep id the
    store does not hold is an InputError naming those it does; damaged rows are left out and
    counted (`Dataset.damage`); `Dataset.sweep` says whether the sweep is complete."""
    store = Store(results)
    damage = Damage()
    with store.reading():
        sweep_id = _sweep_of(store, sweep)
        sized = _size(store, sweep_id)  # refused past the limit, before a row is read
        state = store.sweep_state(sweep_id)
        runs, contexts, damaged = _readable_runs(store.query(
            f"SELECT {_RUN_SELECT} FROM runs WHERE sweep_id=? ORDER BY started_at, rowid",
            (sweep_id,)), sweep_id, damage)
        entries = _accuracy_entries(store, runs, contexts, damage)
        inferred = {e.run_id: accuracy.infer_precision(e.a, e.b, e.c) for e in entries}
        kernels = _run_kernels(store, sweep_id, contexts, damaged)
        for rid, columns in precision.assign(runs, inferred, kernels).items():
            contexts[rid].update(columns)
        # each figure a list in the columns' order as it is read: a dict of ~70 keys per
        # figure held 1.3 GiB at 81,634 figures (bench figure 6, a store of 5000 runs)
        layout = _Layout()
        rows, with_figures = _figure_rows(store, sweep_id, sized, contexts, damaged, damage,
                                          layout)
        bare = [ctx for rid, ctx in contexts.items()  # a run with no figure still shows
                if rid not in with_figures and not (ctx["status"] == "ok"
                                                    and ctx["mode"] == "accuracy")]
        extra = [*bare, *_accuracy_rows(entries, contexts, inferred)]
        samples = _sample_rows(store, sweep_id, sized, contexts, damaged, damage)
        for sample in _ncu_samples(store, sweep_id, [*rows, *map(layout.row, extra)], layout):
            for column, value in zip(samples.values(), sample, strict=True):
                column.append(value)
        texts = {k: _texts(v) if k in _SAMPLE_TEXT else v for k, v in samples.items()}
        host = _host(store, sweep_id, damage)
        host_name = _host_name(store, sweep_id, host)
        seed = _seed(store, sweep_id)
        stops = _stops(store, sweep_id, runs)
        for row in extra:  # dicts: the bare ones are the runs' contexts, as they were
            row["host"], row["seed"] = host_name, seed
            row.update(stops.get((row["run_id"], row.get("label"), row.get("method")),
                                 NO_STOP))
        for row in rows:
            row[layout.at["host"]], row[layout.at["seed"]] = host_name, seed
            found = stops.get((row[layout.at["run_id"]], layout.cell(row, "label"),
                               layout.cell(row, "method")), NO_STOP)
            for key, value in found.items():
                row[layout.at[key]] = value
        rows += map(layout.row, extra)
    # a NULL cache record as JSON null: pandas would turn None into NaN, which reads as text
    run_frame = pd.DataFrame([{**contexts[r["run_id"]], "wall_s": r["wall_s"],
                               "returncode": r["returncode"], "unknown_lines": r["unknown_lines"],
                               "cache_record": r["cache_json"] or "null", "gate": r["gate_json"]}
                              for r in runs])
    return Dataset(_frame(rows, layout.columns), _frame(texts, SAMPLE_COLUMNS),
                   run_frame, host, state, damage, _headers(runs))


# A run's stdout and stderr are read only where a dataset needs them (an accuracy run's build
# name): the rest stand in as b'' (a blob) or as stored (NULL, or text: damage says so)
_RUN_SELECT = "*, " + ", ".join(
    f"CASE WHEN typeof({c})='blob' THEN X'' ELSE {c} END AS {c}" for c in ("stdout", "stderr"))
_ABSENT = np.nan  # a column a row lacks: NaN, as pandas fills a record's missing key


class _Layout:
    """The dataset's columns as a figure's list holds them: taken from the vocabulary when a
    load begins (an axis registered since import, a test's stand-in included, has its
    column), each column's position looked up once."""

    def __init__(self) -> None:
        self.columns = vocabulary.column_keys()
        self.at = {column: i for i, column in enumerate(self.columns)}

    def cell(self, row: list[Any], column: str) -> Any:
        """A list row's cell, None where the row lacks it (a record's `dict.get`)."""
        value = row[self.at[column]]
        return None if value is _ABSENT else value

    def row(self, record: dict[str, Any]) -> list[Any]:
        return [record.get(column, _ABSENT) for column in self.columns]


def _run_kernels(store: Store, sweep_id: str, contexts: dict[str, dict[str, Any]],
                 damaged: set[str]) -> dict[str, list[str]]:
    """Each readable run's kernels as its profiler named them (data/kernel_names reads their
    arithmetic), from the few per-kernel rows, before the figures are laid over their runs."""
    if "kernel" not in {r[1] for r in store.cursor("PRAGMA table_info(figures)")}:
        return {}
    marks = ",".join("?" * len(precision.KERNEL_STATS))
    kernels: dict[str, list[str]] = {}
    for rid, kernel in store.cursor(
            f"SELECT run_id, kernel FROM figures WHERE sweep_id=? AND stat IN ({marks}) AND "
            "typeof(kernel)='text' AND kernel != '' ORDER BY rowid",
            (sweep_id, *precision.KERNEL_STATS)):
        if rid in contexts and rid not in damaged:
            kernels.setdefault(rid, []).append(kernel)
    return kernels


def _figure_rows(store: Store, sweep_id: str, sized: Size,
                 contexts: dict[str, dict[str, Any]], damaged: set[str],
                 damage: Damage, layout: _Layout) -> tuple[list[list[Any]], set[str]]:
    """Every readable figure of the sweep over its run's context (`_figure_row`), as a list
    in the columns' order; and the runs that have one. A row SQLite already sees as sound
    (damage.figure_problem's rules) is laid over its run's context straight from the tuple
    read; any other goes through the checks one by one."""
    present = {r[1] for r in store.cursor("PRAGMA table_info(figures)")}
    cols = [c for c in schema.FIGURE_COLUMNS if c.name in present]  # a format-2 store lacks some
    sound = " AND ".join([*(f"{c} IS NOT NULL" if c in present else "0"
                            for c in damage_mod.FIGURE_NEEDED),
                          *(f"({c.name} IS NULL OR typeof({c.name}) IN ({_TYPEOF[c.sql]}))"
                            for c in cols)])
    cur = store.cursor(f"SELECT {sound}, rowid, sweep_id, run_id, "
                       f"{', '.join(c.name for c in cols)} FROM figures "
                       f"{_scan(store, 'figures', sized.figures)} WHERE sweep_id=? "
                       "ORDER BY rowid", (sweep_id,))
    names = ["rowid", "sweep_id", "run_id", *(c.name for c in cols)]
    # (position in a row read, the dataset column it sets, whether '' sets nothing)
    overlay = [(i + 4, layout.at[c.dataset], c.name in _BLANK) for i, c in enumerate(cols)
               if c.name not in _FROM_RUN and c.dataset in layout.at]
    threads_at = next((i + 4 for i, c in enumerate(cols) if c.dataset == "threads"), None)
    bases: dict[str, tuple[list[Any], bool]] = {}
    rows, runs = [], set()
    text = {}.setdefault  # each distinct text one str object, not one per figure
    for read in cur:
        rid = read[3]
        if not (read[0] and rid in contexts and rid not in damaged):
            fig = dict(zip(names, read[1:], strict=True))
            if next(_readable([fig], "figure", contexts, damaged, damage,
                              damage_mod.figure_problem), None) is None:
                continue
        if rid not in bases:
            ctx = contexts[rid]
            bases[rid] = (layout.row(ctx), "threads" in ctx)
            runs.add(rid)
        base, has_threads = bases[rid]
        row = base.copy()
        for i, at, blank in overlay:
            value = read[i]
            if value is None or (blank and not value):
                continue
            row[at] = text(value, value) if type(value) is str else value
        if not has_threads and (threads_at is None or read[threads_at] is None):
            row[layout.at["threads"]] = contexts[rid]["threads_requested"]  # the line did not say
        rows.append(row)
    return rows, runs


_TYPEOF = {"TEXT": "'text'", "INTEGER": "'integer'", "REAL": "'integer', 'real'"}


# the columns a sample row is read by, and whether SQLite already sees it as sound (the usual
# case, where no row need be looked at one by one in Python: damage.sample_problem's rules);
# its sweep is the one asked for (WHERE), not read again per row
_SAMPLE_SELECT = ("SELECT typeof(value) = 'real' AND typeof(idx) = 'integer' AND "
                  "typeof(summary_line) IN ('integer', 'null') AS sound, rowid, run_id, label, "
                  "shape, method, idx, value, summary_line FROM samples {} "
                  "WHERE sweep_id=? ORDER BY rowid")
_CHUNK = 65_536


def _sample_rows(store: Store, sweep_id: str, sized: Size, contexts: dict[str, dict[str, Any]],
                 damaged: set[str], damage: Damage) -> dict[str, list[Any]]:
    """The sweep's readable samples, column by column (SAMPLE_COLUMNS), read a chunk of rows
    at a time, their text shared (one str object per distinct run id, label, ...): a dict
    per sample value, each with its own strings, was most of a 5000-run report's memory
    (566,440 values: 1.3 GiB at its peak)."""
    text = {}.setdefault
    experiment = {rid: ctx["experiment"] for rid, ctx in contexts.items()}
    columns: list[list[Any]] = [[] for _ in SAMPLE_COLUMNS]
    cur = store.cursor(_SAMPLE_SELECT.format(_scan(store, "samples", sized.samples)),
                       (sweep_id,))
    while chunk := cur.fetchmany(_CHUNK):
        rid = list(map(_RUN_ID, chunk))
        if not all(map(_SOUND, chunk)) or not experiment.keys() >= set(rid) \
                or not damaged.isdisjoint(rid):
            for row in _checked_samples(chunk, sweep_id, contexts, damaged, damage):
                for column, value in zip(columns, row, strict=True):
                    column.append(value)
            continue
        columns[0] += map(text, rid, rid)
        columns[1] += map(experiment.__getitem__, rid)
        for column, (at, shared) in zip(columns[2:7], _SAMPLE_AT, strict=True):
            values = list(map(at, chunk))
            column += map(text, values, values) if shared else values
        columns[7] += [sweep_id] * len(chunk)
        columns[8] += map(_LINE, chunk)
    return dict(zip(SAMPLE_COLUMNS, columns, strict=True))


def _scan(store: Store, table: str, count: int) -> str:
    """How to read a sweep's `count` rows in rowid order: by its index then a sort, or, where
    the sweep holds most of the table (a store of one sweep), the table in order (NOT
    INDEXED), which skips the sort of every row (0.3 s of 566,440 samples)."""
    span = store.cursor(f"SELECT max(rowid) - min(rowid) + 1 FROM {table}").fetchone()[0]
    return "NOT INDEXED" if count and 2 * count >= (span or 0) else ""


class Size(NamedTuple):
    """What a sweep holds: its figure rows and sample values in the store."""

    figures: int
    samples: int


def _size(store: Store, sweep_id: str) -> Size:
    """The sweep's rows, counted on the store's indexes; an InputError past what one dataset
    may hold (READ_FIGURES, READ_SAMPLES), naming the way out: nothing is read or written."""
    found = Size(*(store.cursor(f"SELECT count(*) FROM {table} WHERE sweep_id=?",
                                (sweep_id,)).fetchone()[0] for table in ("figures", "samples")))
    if found.figures > READ_FIGURES or found.samples > READ_SAMPLES:
        raise InputError(
            f"{store.path}: sweep {sweep_id} holds {found.figures} figures and {found.samples} "
            f"sample values, more than the {READ_FIGURES} and {READ_SAMPLES} a report, compare "
            "or export reads (in under a minute of CPU and 1 GiB: BENCHMARKS.md, figure 6); "
            "run its experiments in parts, each into a results folder of its own (`run FILE "
            "--only NAME --results FOLDER`)")
    return found


# a row of _SAMPLE_SELECT: sound, rowid, run_id, label, shape, method, idx, value,
# summary_line; where SAMPLE_COLUMNS label ... value_s are in it, and whether that column's
# text is shared
_SOUND, _RUN_ID, _LINE = operator.itemgetter(0), operator.itemgetter(2), operator.itemgetter(8)
_SAMPLE_AT = [(operator.itemgetter(i), shared) for i, shared in (
    (3, True), (4, True), (5, True), (6, False), (7, False))]
_SAMPLE_TEXT = {"run_id", "experiment", "label", "shape", "method", "sweep_id"}


def _texts(values: list[Any]) -> Any:
    """A column of text as the dataset's `str` column, made from each distinct text once (a
    pyarrow dictionary, decoded): pandas' inference of a list of 566,440 strings took 0.13 s
    a column. Anything but text and missing values (a damaged store) is left to pandas."""
    if not values:
        return values
    codes, uniques = pd.factorize(np.asarray(values, dtype=object))
    if not all(type(u) is str for u in uniques):
        return values
    array = pa.DictionaryArray.from_arrays(pa.array(codes, type=pa.int32(), mask=codes < 0),
                                           pa.array(uniques, type=pa.large_string()))
    return pd.Series(array.cast(pa.large_string()).to_pandas(types_mapper=_STR.get))


_STR = {pa.large_string(): pd.StringDtype("pyarrow", na_value=np.nan)}


def _checked_samples(chunk: list[tuple[Any, ...]], sid: str,
                     contexts: dict[str, dict[str, Any]], damaged: set[str],
                     damage: Damage) -> list[tuple[Any, ...]]:
    """A chunk of sample rows of which one is not plainly sound, row by row (`_readable`)."""
    out = []
    for _sound, rowid, rid, label, shape, method, idx, value, line in chunk:
        if rid in damaged:
            continue
        row = {"run_id": rid, "label": label, "shape": shape, "method": method, "idx": idx,
               "value": value, "summary_line": line, "sweep_id": sid}
        found = damage_mod.sample_problem(row) or (
            None if rid in contexts else f"its run {rid} is not in the sweep")
        if found is not None:
            damage.add("sample", f"sweep {sid} sample row {rowid}", found)
            continue
        out.append((rid, contexts[rid]["experiment"], label, shape, method, idx, value, sid,
                    line))
    return out


def _headers(runs: list[dict[str, Any]]) -> list[Header]:
    """The headers the runs printed, as stored (`runs.headers_json`, a list of Header dicts;
    damaged rows are already left out). Only kind, version, precision and facts are read."""
    out = []
    for r in runs:
        for h in json.loads(r.get("headers_json") or "null") or []:
            if not isinstance(h, dict):
                continue
            facts = h.get("facts") if isinstance(h.get("facts"), dict) else {}
            line_no = h.get("line_no") if isinstance(h.get("line_no"), int) else 0
            out.append(Header(str(h.get("kind") or ""), h.get("version"), None, line_no,
                              h.get("precision"), facts))
    return out


def _ncu_samples(store: Store, sweep_id: str, rows: list[list[Any]],
                 layout: _Layout) -> list[tuple[Any, ...]]:
    """The per-matmul kernel times behind each profile run's ncu min and median, read from its
    stored ncu.csv (ncu.samples), linked to those figures' line (0): the report's intervals of
    ncu kernel time (ratios, spread) need them; nothing is written to the store."""
    profilers = vocabulary.profile_profilers()  # ncu with L2 warm and flushed alike
    cell = layout.cell
    wanted = {cell(r, "run_id"): r for r in rows
              if cell(r, "profiler") in profilers and cell(r, "stat") == "min"
              and not cell(r, "kernel") and cell(r, "method") == "kernel_time"
              and cell(r, "runs")}
    out: list[tuple[Any, ...]] = []
    for run_id, fig in wanted.items():
        found = store.query("SELECT data FROM artifacts WHERE sweep_id=? AND run_id=? AND "
                            "name=?", (sweep_id, run_id, ncu.ARTIFACT))
        values = ncu.samples(bytes(found[0]["data"]) if found else None, int(cell(fig, "runs")))
        line = fig[layout.at["line_no"]]
        out += [(run_id, cell(fig, "experiment"), cell(fig, "label"), cell(fig, "shape"),
                 "kernel_time", i, v, sweep_id, 0 if line is _ABSENT else line)
                for i, v in enumerate(values)]
    return out


def _sweep_of(store: Store, sweep: str | None) -> str:
    """The sweep asked for, else the latest; one the store lacks is the user's input."""
    known = [str(s["sweep_id"]) for s in store.sweeps()]
    if not known:
        raise InputError(f"{store.path} holds no sweep (run a sweep first)")
    if sweep is None:
        return store.latest_sweep() or known[-1]
    if sweep not in known and (by_host := latest_of_host(store.sweeps(), sweep)):
        return by_host  # FOLDER@HOST of a merged store: that host's latest sweep
    if sweep not in known:
        older = len(known) - SWEEPS_NAMED
        listed = ", ".join(known[-SWEEPS_NAMED:]) + (f" and {older} older" if older > 0 else "")
        raise InputError(f"--sweep {sweep}: no such sweep in {store.path} (its sweeps: "
                         f"{listed})")
    return sweep


def _readable_runs(runs: list[dict[str, Any]], sweep_id: str, damage: Damage
                   ) -> tuple[list[dict[str, Any]], dict[str, dict[str, Any]], set[str]]:
    """(readable runs, their contexts, the run ids of damaged ones)."""
    kept, contexts, damaged = [], {}, set()
    for run in runs:
        problem = damage_mod.run_problem(run)
        if problem is None and run["run_id"] in contexts:
            problem = "a second row of the same run id"
        if problem is None:
            try:
                contexts[run["run_id"]] = _run_context(run)
            except (TypeError, KeyError, ValueError, AttributeError) as exc:
                problem = f"{type(exc).__name__}: {exc}"
        if problem is None:
            kept.append(run)
        else:
            damaged.add(str(run.get("run_id")))
            damage.add("run", f"sweep {sweep_id} run {run.get('run_id')}", problem)
    return kept, contexts, damaged


def _readable(rows: Iterable[dict[str, Any]], kind: str, contexts: dict[str, dict[str, Any]],
              damaged: set[str], damage: Damage,
              problem: Callable[[dict[str, Any]], str | None]) -> Iterator[dict[str, Any]]:
    """Figure rows of readable runs (those of a damaged run go with it), each checked, one at
    a time as they are read; the `rowid` column is dropped."""
    for row in rows:
        rowid = row.pop("rowid")
        if row.get("run_id") in damaged:
            continue
        found = problem(row) or (None if row["run_id"] in contexts else
                                 f"its run {row['run_id']} is not in the sweep")
        if found is None:
            yield row
        else:
            damage.add(kind, f"sweep {row.get('sweep_id')} {kind} row {rowid}", found)


def _host_name(store: Store, sweep_id: str, facts: dict[str, Any]) -> str:
    """The host column: the name `merge` recorded, else the machine's hostname."""
    rows = store.query("SELECT host FROM sweeps WHERE sweep_id=?", (sweep_id,))
    return str(rows[0]["host"] if rows and rows[0]["host"] else facts.get("hostname") or "")


NO_STOP = {"stop_reason": "", "half_width": "", "stop_target": ""}


def _stops(store: Store, sweep_id: str,
           runs: list[dict[str, Any]]) -> dict[tuple[str, str, str], dict[str, str]]:
    """(run id, label, method) -> the stop columns of the figure's series (each of its
    rows: min and median). A profile run's figures were not judged (the rule reads measured
    runs only), so they get none: CUPTI's half-width was copied onto ncu's kernel time."""
    found: dict[str, list[dict[str, Any]]] = {}
    for stop in store.stops(sweep_id):
        found.setdefault(stop["series"], []).append(stop)
    if not found:
        return {}
    out = {}
    for run in runs:
        definition = RunDef.from_definition(json.loads(run["definition_json"]))
        if definition.profile is not None:
            continue
        series = definition.series_id
        for stop in found.get(series, []):
            out[(run["run_id"], stop["label"], stop["method"])] = {
                "stop_reason": stop["reason"], "stop_target": f"{stop['target']:g}",
                "half_width": "" if stop["half_width"] is None else f"{stop['half_width']:.6g}"}
    return out


def _seed(store: Store, sweep_id: str) -> str:
    """The seed column: the latest start's order seed ('' for file order)."""
    starts = store.config_texts(sweep_id)
    seed = starts[-1]["seed"] if starts else None
    return "" if seed is None else str(seed)


def _host(store: Store, sweep_id: str, damage: Damage) -> dict[str, Any]:
    rows = store.query("SELECT host_json FROM sweeps WHERE sweep_id=?", (sweep_id,))
    try:
        host = json.loads(rows[0]["host_json"] or "{}") if rows else {}
    except (TypeError, ValueError, RecursionError):
        host = None
    if not isinstance(host, dict):
        damage.add("sweep", f"sweep {sweep_id}", "host_json is not a JSON object (host facts "
                   "left out)")
        return {}
    return host





def from_parse(parsed: ParseResult, source: str) -> Dataset:
    """A captured log's figures as the same tidy dataset (run_id 'log:<file>'); an InputError
    for a log of more figures or sample values than a dataset of it can hold in sane memory."""
    values = sum(len(s.values) for s in parsed.samples)
    if len(parsed.figures) > READ_FIGURES or values > READ_SAMPLES:
        raise InputError(f"{source}: {len(parsed.figures)} figures and {values} sample values, "
                         f"more than the {READ_FIGURES} and {READ_SAMPLES} a captured log may "
                         "hold; split the log")
    rows = []
    for fig, arithmetic in zip(parsed.figures, precision.of_log(parsed.figures, parsed.headers),
                               strict=True):
        row = {col.dataset: getattr(fig, col.name) for col in schema.FIGURE_COLUMNS}
        row.update(arithmetic)
        row.update({col: row[col] or "" for col in _BLANK})
        row.update(run_id=f"log:{source}", experiment=fig.section or "",
                   cache=CacheState.of(fig.cache).column, status=Status.OK.value,
                   role=Role.MEASURE.value, profile_of="", seed="", variant="", **NO_STOP)
        rows.append(row)
    samples = [{"run_id": f"log:{source}", "experiment": s.section or "", "label": s.label,
                "shape": s.shape, "method": s.method, "idx": i, "value_s": v,
                "summary_line": s.summary_line}
               for s in parsed.samples for i, v in enumerate(s.values)]
    return Dataset(_frame(rows, vocabulary.column_keys()), _frame(samples, SAMPLE_COLUMNS),
                   pd.DataFrame(), {}, headers=list(parsed.headers))


def csv_paths(out: Path) -> tuple[Path, Path, Path]:
    """The figures CSV, its samples CSV and its schema sidecar."""
    return out, out.with_name(out.stem + ".samples.csv"), out.with_name(out.stem + ".schema.json")


def _sidecar(path: Path) -> dict[str, Any] | None:
    try:
        meta = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    ok = isinstance(meta, dict) and "schema_version" in meta and \
        all(isinstance(meta.get(k), dict) for k in ("figures", "samples"))
    return meta if ok else None


def _exported(path: Path, meta: dict[str, Any] | None) -> bool:
    """Whether `path` is a CSV an export wrote: its sidecar names it (and, from sidecars that
    keep digests, nobody changed it since)."""
    if meta is None:
        return False
    if path.name not in (meta["figures"].get("file"), meta["samples"].get("file")):
        return False
    written, replacing = meta.get("written"), meta.get("replacing")
    if not isinstance(written, dict):
        return True
    sha = outputs.digest(path)
    return written.get(path.name) == sha or (isinstance(replacing, dict) and
                                             replacing.get(path.name) == sha)


def _write_sidecar(path: Path, meta: dict[str, Any]) -> None:
    outputs.replace_file(path, "--csv", lambda p: p.write_text(
        json.dumps(meta, indent=2) + "\n", encoding="utf-8"))


def check_export(out: Path, inputs: outputs.Inputs = outputs.NO_INPUTS) -> None:
    """Refuse, in one line, a `--csv` the export must not write (data/outputs.py)."""
    figures, samples, sidecar = csv_paths(out)
    meta = _sidecar(sidecar) if sidecar.is_file() and not sidecar.is_symlink() else None
    what = "an export of this orchestrator"
    outputs.check_target(sidecar, "--csv", inputs, lambda p: meta is not None, what)
    written = meta.get("written") if meta else None
    for path in (figures, samples):
        if isinstance(written, dict) and inputs.holds(path) is None and not (
                path.is_file() and not path.is_symlink() and _exported(path, meta)):
            outputs.refuse_changed(path, "--csv", written, what)
        outputs.check_target(path, "--csv", inputs, lambda p: _exported(p, meta), what)


def export_csv(data: Dataset, out: Path,
               inputs: outputs.Inputs = outputs.NO_INPUTS) -> tuple[Path, Path]:
    """Write the figures CSV and, beside it, the samples CSV (`NAME.samples.csv`) and what
    format both are in (`NAME.schema.json`: schema_version and the columns of each file, and
    the digest of each as written, so a later export knows they are its own).

    The version goes in a sidecar, not into the CSVs: a comment line or a constant column
    would be in every pandas user's way. Existing files that are not an earlier export's, or
    that are an input (`inputs`), are refused before anything is written."""
    figures, samples, sidecar = csv_paths(out)
    outputs.prepare_folder(out.parent, "--csv")
    check_export(out, inputs)
    staged = [outputs.stage_file(figures, "--csv", lambda p: data.figures.replace(
        {np.nan: None}).to_csv(p, index=False, float_format="%.9g"))]
    try:  # both CSVs written whole before any name is replaced: a full disk changes nothing
        staged.append(outputs.stage_file(samples, "--csv", lambda p: data.samples[
            SAMPLE_CSV_COLUMNS].to_csv(p, index=False, float_format="%.9g")))
        written = {p.name: outputs.digest(t) for p, t in zip((figures, samples), staged,
                                                            strict=True)}
        meta = {"schema_version": schema.VERSION,
                "figures": {"file": out.name, "columns": vocabulary.column_keys()},
                "samples": {"file": samples.name, "columns": SAMPLE_CSV_COLUMNS},
                "written": written, **data.sweep_facts()}  # the sweep's status, runs, damage
        # the sidecar first, naming the new digests and the ones the files have now: cut
        # anywhere between the renames, each CSV is one it names (the next export replaces it)
        before = {p.name: outputs.digest(p) for p in (figures, samples)
                  if p.is_file() and not p.is_symlink()}
        _write_sidecar(sidecar, {**meta, "replacing": before} if before else meta)
        for path, tmp in zip((figures, samples), staged, strict=True):
            os.replace(tmp, path)
        if before:
            _write_sidecar(sidecar, meta)
    except OSError as exc:
        raise InputError(f"--csv: cannot write {out}: {exc.strerror}") from None
    finally:
        for tmp in staged:
            tmp.unlink(missing_ok=True)
    return out, samples
