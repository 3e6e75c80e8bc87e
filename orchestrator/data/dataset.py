"""The tidy dataset: one row per figure, with each run's context; samples in a second table.

Python users get DataFrames from `load(results_folder)`; `export_csv` writes them for the
chapter (data/csv_export.py). Runs that produced no figure (skipped, failed) still get a row
with their reason, so nothing vanishes from the dataset. Accuracy rows are computed from the
stored arrays. `load` reads a sweep through data/sweep_runs.py (its runs, their contexts
and the sweep's facts) and data/sweep_rows.py (its figures and samples).
"""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd

from orchestrator import programs, vocabulary
from orchestrator.data import accuracy, heap, precision, schema, sweep_rows, sweep_runs
from orchestrator.data.csv_export import check_export, csv_paths, export_csv
from orchestrator.data.damage import Damage
from orchestrator.data.store import Store, SweepState
from orchestrator.data.sweep_rows import SAMPLE_COLUMNS
from orchestrator.data.sweep_runs import BLANK, NO_STOP
from orchestrator.errors import InputError
from orchestrator.records import CacheState, Figure, Header, ParseResult, Role, Status

# where the export lives (data/csv_export.py), named here for the dataset's callers
__all__ = ["COLUMNS", "READ_FIGURES", "READ_SAMPLES", "SAMPLE_COLUMNS", "Dataset", "check_export",
           "csv_paths", "export_csv", "from_parse", "load", "typed"]

# The figures' columns, in the CSV's order, each with its dtype: the measurement vocabulary's
# (orchestrator/vocabulary.py: run, state (data/state_columns.py), cache (data/cache_columns.py),
# precision (data/precision.py), profiler, host, measure_env (data/measure_env.py) columns)
COLUMNS = vocabulary.column_keys()
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
    """Records (dicts, lists or tuples), or columns (a dict of lists, or of `sweep_rows.texts`:
    non-empty; pandas infers each list's dtype as it does a record's column), as the typed
    frame."""
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


def load(results: Path, sweep: str | None = None,
         registry: programs.Registry | None = None) -> Dataset:
    """The dataset of one sweep (default: the latest) of a results folder. A sweep id the
    store does not hold is an InputError naming those it does; damaged rows are left out and
    counted (`Dataset.damage`); `Dataset.sweep` says whether the sweep is complete. Its
    columns and the programs its lines are read with: `registry`'s (None: the active one)."""
    with programs.use(registry):
        return _load(results, sweep)


def _load(results: Path, sweep: str | None) -> Dataset:
    store = Store(results)
    damage = Damage()
    with store.reading():
        sweep_id = sweep_runs.sweep_of(store, sweep)
        # refused past the limit, before a row is read (the limits read now: tests lower them)
        sized = sweep_rows.size(store, sweep_id, READ_FIGURES, READ_SAMPLES)
        state = store.sweep_state(sweep_id)
        runs, contexts, damaged = sweep_runs.readable_runs(store.query(
            f"SELECT {_RUN_SELECT} FROM runs WHERE sweep_id=? ORDER BY started_at, rowid",
            (sweep_id,)), sweep_id, damage)
        entries = sweep_runs.accuracy_entries(store, runs, contexts, damage)
        inferred = {e.run_id: accuracy.infer_precision(e.a, e.b, e.c) for e in entries}
        kernels = sweep_rows.run_kernels(store, sweep_id, contexts, damaged)
        for rid, columns in precision.assign(runs, inferred, kernels).items():
            contexts[rid].update(columns)
        # each figure a list in the columns' order as it is read: a dict of ~70 keys per
        # figure held 1.3 GiB at 81,634 figures (bench figure 6, a store of 5000 runs)
        layout = sweep_rows.Layout()
        rows, with_figures = sweep_rows.figure_rows(store, sweep_id, sized, contexts, damaged,
                                                     damage, layout)
        bare = [ctx for rid, ctx in contexts.items()  # a run with no figure still shows
                if rid not in with_figures and not (ctx["status"] == "ok"
                                                    and ctx["mode"] == "accuracy")]
        extra = [*bare, *sweep_runs.accuracy_rows(entries, contexts, inferred)]
        samples = sweep_rows.sample_rows(store, sweep_id, sized, contexts, damaged, damage)
        for sample in sweep_rows.ncu_samples(store, sweep_id, [*rows, *map(layout.row, extra)],
                                             layout):
            for column, value in zip(samples.values(), sample, strict=True):
                column.append(value)
        texts = {k: sweep_rows.texts(v) if k in sweep_rows.SAMPLE_TEXT else v
                 for k, v in samples.items()}
        host = sweep_runs.host(store, sweep_id, damage)
        host_name = sweep_runs.host_name(store, sweep_id, host)
        seed = sweep_runs.seed(store, sweep_id)
        stops = sweep_runs.stops(store, sweep_id, runs)
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
    loaded = Dataset(_frame(rows, layout.columns), _frame(texts, SAMPLE_COLUMNS),
                     run_frame, host, state, damage, sweep_runs.headers(runs))
    del rows, texts, samples, extra, contexts  # the lists the frames were made of: freed
    heap.release()  # and handed back, not kept under what the caller does next
    return loaded


# A run's stdout and stderr are read only where a dataset needs them (an accuracy run's build
# name): the rest stand in as b'' (a blob) or as stored (NULL, or text: damage says so)
_RUN_SELECT = "*, " + ", ".join(
    f"CASE WHEN typeof({c})='blob' THEN X'' ELSE {c} END AS {c}" for c in ("stdout", "stderr"))


def from_parse(parsed: ParseResult, source: str,
               registry: programs.Registry | None = None) -> Dataset:
    """A captured log's figures as the same tidy dataset (run_id 'log:<file>'); an InputError
    for a log of more figures or sample values than a dataset of it can hold in sane memory.
    Its columns: `registry`'s (None: the active one)."""
    with programs.use(registry):
        return _from_parse(parsed, source)


def _from_parse(parsed: ParseResult, source: str) -> Dataset:
    values = sum(len(s.values) for s in parsed.samples)
    if len(parsed.figures) > READ_FIGURES or values > READ_SAMPLES:
        raise InputError(f"{source}: {len(parsed.figures)} figures and {values} sample values, "
                         f"more than the {READ_FIGURES} and {READ_SAMPLES} a captured log may "
                         "hold; split the log")
    rows = []
    for fig, arithmetic, mode in zip(parsed.figures,
                                     precision.of_log(parsed.figures, parsed.headers),
                                     exec_modes_of_log(parsed.figures, parsed.headers),
                                     strict=True):
        row = {col.dataset: getattr(fig, col.name) for col in schema.FIGURE_COLUMNS}
        row.update(arithmetic, exec_mode=mode)
        row.update({col: row[col] or "" for col in BLANK})
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


def exec_modes_of_log(figures: Sequence[Figure], headers: Sequence[Header]) -> list[str]:
    """For a captured log, each figure's `exec_mode`, as a stored run's definition gives it:
    the mode its program's exec header said (`torch exec compile:max-autotune, cache DIR`:
    a header whose facts hold `exec`) after that program's last main header (`torch 2.15.0,
    threads 1`: a new process) before the figure's line; '' (the program's own way, eager)
    where its process said none. Per framework, so a log of several programs keeps each
    apart; by bisection, so a long log of many processes stays linear."""
    starts: dict[str, list[int]] = {}
    modes: dict[str, list[tuple[int, str]]] = {}
    for h in sorted(headers, key=lambda h: h.line_no):
        program = h.kind.split("_", 1)[0]
        if h.kind == program:
            starts.setdefault(program, []).append(h.line_no)
        if isinstance(h.facts.get("exec"), str):
            modes.setdefault(program, []).append((h.line_no, h.facts["exec"]))
    lines = {program: [n for n, _mode in said] for program, said in modes.items()}
    found = []
    for fig in figures:
        said = modes.get(fig.framework or "")
        if not said:
            found.append("")
            continue
        at = bisect_left(lines[fig.framework], fig.line_no) - 1
        mine = starts.get(fig.framework, [])
        start = mine[bisect_left(mine, fig.line_no) - 1] if mine and mine[0] < fig.line_no \
            else 0
        found.append(said[at][1] if at >= 0 and said[at][0] > start else "")
    return found
