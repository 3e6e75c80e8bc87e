"""What the caches were behind the first-call and warm-up tables.

Cells for the tables that show them (`autotune kernel`, `autotune median`, `cache proof`, only
where the data has them: captured logs and stores older than the cache record do not), the cold
first call's spread over an experiment's repeats (min / median / max), the priming runs with
their role and the state they started in, and a check that names runs whose environment changed
what cold or warm mean (the cache record's `env`)."""

from __future__ import annotations

import json
from typing import Any

import pandas as pd

from orchestrator import programs, vocabulary
from orchestrator.data import frame_records
from orchestrator.data.dataset import Dataset
from orchestrator.report.cells import duration
from orchestrator.report.tables import Table, column_name, empty, framework_name, ordered, prepare

CELLS = ("autotune kernel", "autotune median", "cache proof")


def has_cache_info(rows: pd.DataFrame) -> bool:
    """Does any row carry what autotune chose or a cache proof?"""
    present = [c for c in ("autotune_kernel", "cache_proof") if c in rows]
    return any(rows[c].fillna("").astype(str).ne("").any() for c in present)


def cells(mine: pd.DataFrame | list[dict[str, Any]]) -> dict[str, str]:
    """A table row's cache cells, from the run's first row that has them (rows as a frame or
    as records)."""
    rows = frame_records.records(mine) if isinstance(mine, pd.DataFrame) else mine
    median = next((r["autotune_median_s"] for r in rows
                   if pd.notna(r.get("autotune_median_s"))), None)
    return {"autotune kernel": _first(rows, "autotune_kernel"),
            "autotune median": duration(median) if median is not None else "",
            "cache proof": _first(rows, "cache_proof")}


CELL_FIELDS = ["autotune_kernel", "autotune_median_s", "cache_proof"]  # what `cells` reads


def _first(rows: list[dict[str, Any]], col: str) -> str:
    """The first non-empty text of `col` (a missing column: '')."""
    for r in rows:
        value = r.get(col)
        text = "" if value is None or (not isinstance(value, str) and pd.isna(value)) \
            else str(value)
        if text != "":
            return text
    return ""


def cold_spread_table(first_calls: pd.DataFrame) -> Table:
    """The cold first call over repeats: each experiment's cold process-1 runs, min/median/max.

    From the accelerator first-call rows its section selected (timing_tables.first_call_rows).
    """
    title = "Cold first call over repeats"
    rows = first_calls[first_calls["cache"] == "cold"]
    rows = rows[(rows["process"].astype("Int64") == 1).fillna(True)]
    if rows.empty:
        return empty("cold_spread", title, "no cold first calls in this data")
    records = []
    keys = ["experiment", "framework", "label", "warmup"]
    for experiment, framework, label, warmup in ordered(rows, keys):
        mine = rows[(rows["experiment"] == experiment) & (rows["framework"] == framework)
                    & (rows["label"] == label) & (rows["warmup"] == warmup)]
        if mine["unit"].nunique() < 2:
            continue  # one cold series: no spread (it is in the first-call table)
        record = {"experiment": experiment, "framework": framework_name(framework),
                  "device": label, "runs": str(mine["unit"].nunique())}
        for method, column in vocabulary.first_call_columns().items():
            values = mine.loc[mine["method"] == method, "value_s"].dropna().astype(float)
            record[column] = "" if values.empty else " / ".join(
                duration(v) for v in (values.min(), values.median(), values.max()))
        records.append(record)
    if not records:
        return empty("cold_spread", title, "no cold series was repeated")
    return Table("cold_spread", title, pd.DataFrame(records),
                 notes=["Each cell: min / median / max over the cold series (experiment key "
                        "`repeat`), each from an empty cubecl cache and a new CUDA driver cache."])


def priming_table(data: Dataset) -> Table:
    """Priming runs: the first process of a warm series, which started with no cubecl cache."""
    title = "Priming runs (they fill the cache a warm run needs)"
    figures = data.figures
    priming = figures[figures["role"].fillna("") == "priming"]
    if priming.empty:
        return empty("priming", title, "no priming runs in this data")
    # prepare() keeps measured runs only: the priming rows go through it as if measured
    fig = prepare(Dataset(priming.assign(role="measure"), data.samples, data.runs, data.host))
    fig = fig[fig["method"].isin(vocabulary.method_keys(first_call_column=True))]
    if fig.empty:
        return empty("priming", title, "the priming runs printed no first call")
    with_cache = has_cache_info(fig)
    # a mega series' priming run: a cold compile that saved the blob its first process loads
    saved = set(priming.loc[priming["stat"] == "saved_bytes", "run_id"])
    records = []
    for unit, experiment, framework, label in ordered(
            fig, ["unit", "experiment", "framework", "label"]):
        mine = fig[fig["unit"] == unit]
        # a sweep primes only where cubecl's folder holds no file: it started cold, whatever
        # a store older than the cache record says ('warm', its measured run's label)
        started = MEGA_STARTED if set(mine["run_id"]) & saved else _started(framework)
        record = {"experiment": experiment, "role": "priming",
                  "target": column_name(framework, label), "started": started}
        for method, column in vocabulary.first_call_columns().items():
            values = mine.loc[mine["method"] == method, "value_s"]
            record[column] = duration(values.iloc[0]) if len(values) else ""
        if with_cache:
            record.update(cells(mine))
        records.append(record)
    return Table("priming", title, pd.DataFrame(records), notes=[
        "A priming run is the first process of a warm series whose cubecl cache was empty; "
        "its first call is a cold one (its driver cache: the shared warm one, see cache proof)."])


MEGA_STARTED = "cold (its cache folder emptied), then saved the mega-cache blob a mega series loads"


def _started(framework: str) -> str:
    """What a priming run started from: cubecl's folder empty; a program that primes every
    warm series (torch.compile's one folder of all modes' entries) from that folder as found."""
    program = programs.active().by_name.get(framework)
    if program is not None and program.caches.prime_warm:
        return f"{program.title}'s cache folder as found (its cache proof says what it held)"
    return "cold (no cubecl cache)"


def settings_warnings(data: Dataset) -> list[str]:
    """Runs whose own environment changed what cold or warm mean (recorded, flagged here)."""
    if data.runs.empty or "cache_record" not in data.runs:
        return []
    flagged: dict[str, list[str]] = {}
    for _, run in data.runs.iterrows():
        record = json.loads(run["cache_record"]) if run["cache_record"] else None
        if isinstance(record, dict) and record.get("env"):
            text = ", ".join(f"{k}={v}" for k, v in record["env"].items())
            flagged.setdefault(text, []).append(str(run["experiment"]))
    return [f"cache settings in the runs' environment change what cold and warm mean: {text} "
            f"(experiments {', '.join(dict.fromkeys(names))})"
            for text, names in flagged.items()]


def unproven_warnings(fig: pd.DataFrame) -> list[str]:
    """Runs labelled warm (or mega: loaded from artifacts) whose store did not prove it."""
    if "cache_proof" not in fig:
        return []
    proofs = fig["cache_proof"].fillna("").astype(str)
    rows = fig[fig["cache"].isin(["warm", "mega"]) & proofs.str.startswith("not ")]
    return [f"{experiment} {column_name(framework, label)}: labelled {cache}, but {proof}"
            for experiment, framework, label, cache, proof in ordered(
                rows, ["experiment", "framework", "label", "cache", "cache_proof"])]
