"""A sweep's runs and facts read out of the store, for the dataset (data/dataset.py).

Each readable run's context (its definition, status, load, state and cache columns), the runs
left out as damaged, the headers they printed; the sweep asked for, its host facts and name,
its order seed, the stop rule's columns of each series; and the accuracy rows, compared from
the arrays the accuracy runs stored.
"""

from __future__ import annotations

import json
from typing import Any

import numpy as np

from orchestrator import axes
from orchestrator.data import accuracy, cache_columns, measure_env, state_columns
from orchestrator.data import damage as damage_mod
from orchestrator.data.damage import Damage
from orchestrator.data.merge import latest_of_host
from orchestrator.data.store import Store
from orchestrator.errors import InputError
from orchestrator.records import Header, RunDef

# Figure columns the run's own definition knows better than a printed line does
FROM_RUN = {"framework", "cache"}
# The dataset writes these as '' rather than empty cells when a figure has none
BLANK = {"framework", "warmup"}
SWEEPS_NAMED = 10  # the latest sweeps an unknown --sweep's error lists


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


def accuracy_entries(store: Store, runs: list[dict[str, Any]],
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


def accuracy_rows(entries: list[accuracy.Arrays], contexts: dict[str, dict[str, Any]],
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


def headers(runs: list[dict[str, Any]]) -> list[Header]:
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



def sweep_of(store: Store, sweep: str | None) -> str:
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


def readable_runs(runs: list[dict[str, Any]], sweep_id: str, damage: Damage
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



def host_name(store: Store, sweep_id: str, facts: dict[str, Any]) -> str:
    """The host column: the name `merge` recorded, else the machine's hostname."""
    rows = store.query("SELECT host FROM sweeps WHERE sweep_id=?", (sweep_id,))
    return str(rows[0]["host"] if rows and rows[0]["host"] else facts.get("hostname") or "")


NO_STOP = {"stop_reason": "", "half_width": "", "stop_target": ""}


def stops(store: Store, sweep_id: str,
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


def seed(store: Store, sweep_id: str) -> str:
    """The seed column: the latest start's order seed ('' for file order)."""
    starts = store.config_texts(sweep_id)
    seed = starts[-1]["seed"] if starts else None
    return "" if seed is None else str(seed)


def host(store: Store, sweep_id: str, damage: Damage) -> dict[str, Any]:
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
