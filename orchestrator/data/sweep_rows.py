"""A sweep's figures and samples read out of the store, for the dataset (data/dataset.py).

Its size counted first (refused past what one dataset may hold), each figure laid over its
run's context as a list in the columns' order, the samples read column by column a chunk at a
time, their text shared; rows SQLite does not see as sound checked one by one (data/damage.py)
and left out, counted; the per-kernel rows of profile runs and their ncu kernel times.
"""

from __future__ import annotations

import operator
from collections.abc import Callable, Iterable, Iterator
from typing import Any, NamedTuple

import numpy as np
import pandas as pd
import pyarrow as pa

from orchestrator import vocabulary
from orchestrator.data import damage as damage_mod
from orchestrator.data import ncu, precision, schema
from orchestrator.data.damage import Damage
from orchestrator.data.store import Store
from orchestrator.data.sweep_runs import BLANK, FROM_RUN
from orchestrator.errors import InputError

# the samples CSV; the DataFrame adds `summary_line` (the figures' `line_no` it belongs to);
# here, where `sample_rows` and `ncu_samples` build rows in this order (data/dataset.py
# names SAMPLE_COLUMNS, data/csv_export.py writes SAMPLE_CSV_COLUMNS)
SAMPLE_CSV_COLUMNS = ["run_id", "experiment", "label", "shape", "method", "idx", "value_s",
                      "sweep_id"]
SAMPLE_COLUMNS = [*SAMPLE_CSV_COLUMNS, "summary_line"]
ABSENT = np.nan  # a column a row lacks: NaN, as pandas fills a record's missing key


class Layout:
    """The dataset's columns as a figure's list holds them: taken from the vocabulary when a
    load begins (an axis registered since import, a test's stand-in included, has its
    column), each column's position looked up once."""

    def __init__(self) -> None:
        self.columns = vocabulary.column_keys()
        self.at = {column: i for i, column in enumerate(self.columns)}

    def cell(self, row: list[Any], column: str) -> Any:
        """A list row's cell, None where the row lacks it (a record's `dict.get`)."""
        value = row[self.at[column]]
        return None if value is ABSENT else value

    def row(self, record: dict[str, Any]) -> list[Any]:
        return [record.get(column, ABSENT) for column in self.columns]


def run_kernels(store: Store, sweep_id: str, contexts: dict[str, dict[str, Any]],
                damaged: set[str]) -> dict[str, list[str]]:
    """Each readable run's kernels as its profiler named them (data/kernel_names reads their
    arithmetic), from the few per-kernel rows, before the figures are laid over their runs."""
    if "kernel" not in schema.column_names(store.db, "figures"):
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


def figure_rows(store: Store, sweep_id: str, sized: Size,
                contexts: dict[str, dict[str, Any]], damaged: set[str],
                damage: Damage, layout: Layout) -> tuple[list[list[Any]], set[str]]:
    """Every readable figure of the sweep over its run's context (what the line says wins
    where it says it; threads as asked where it did not), as a list in the columns' order;
    and the runs that have one. A row SQLite already sees as
    sound (damage.figure_problem's rules) is laid over its run's context straight from the
    tuple read; any other goes through the checks one by one."""
    present = schema.column_names(store.db, "figures")
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
    overlay = [(i + 4, layout.at[c.dataset], c.name in BLANK) for i, c in enumerate(cols)
               if c.name not in FROM_RUN and c.dataset in layout.at]
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


def sample_rows(store: Store, sweep_id: str, sized: Size, contexts: dict[str, dict[str, Any]],
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


def size(store: Store, sweep_id: str, read_figures: int, read_samples: int) -> Size:
    """The sweep's rows, counted on the store's indexes; an InputError past what one dataset
    may hold (dataset.READ_FIGURES, READ_SAMPLES: `read_figures`, `read_samples`), naming the
    way out: nothing is read or written."""
    found = Size(*(store.cursor(f"SELECT count(*) FROM {table} WHERE sweep_id=?",
                                (sweep_id,)).fetchone()[0] for table in ("figures", "samples")))
    if found.figures > read_figures or found.samples > read_samples:
        raise InputError(
            f"{store.path}: sweep {sweep_id} holds {found.figures} figures and {found.samples} "
            f"sample values, more than the {read_figures} and {read_samples} a report, compare "
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
SAMPLE_TEXT = {"run_id", "experiment", "label", "shape", "method", "sweep_id"}


def texts(values: list[Any]) -> Any:
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


def ncu_samples(store: Store, sweep_id: str, rows: list[list[Any]],
                layout: Layout) -> list[tuple[Any, ...]]:
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
                 "kernel_time", i, v, sweep_id, 0 if line is ABSENT else line)
                for i, v in enumerate(values)]
    return out



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
