"""The two sides of `compare`, and what it lists before any verdict: how they differ.

A side is a results folder (its latest sweep), `folder@sweep`, or a captured log (`parse`'s
input, such as the chapter's listings); anything else is one line and exit code 2.

A side's facts come from its sweep's host facts (OS, CPU, GPUs and driver, torch and its BLAS,
burn), the program headers it printed (torch and burn versions, burn's enabled features, which
name its backend), its figures (the accelerators it ran on, precision, CPU thread counts) and
its runs (1-minute load before each run; CPU governor and the GPU's SM clock where a sweep
recorded them). A captured log has no host facts: those read 'not recorded'. A sweep records the
facts of the programs it ran: another program's read 'not probed', which is no difference. A fact
neither side recorded is not listed.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from functools import partial
from pathlib import Path
from typing import Any

from orchestrator import programs
from orchestrator.data import dataset, identity, measure_env
from orchestrator.data.damage import run_problem
from orchestrator.data.dataset import Dataset
from orchestrator.data.merge import latest_of_host
from orchestrator.data.parse import headers_of, parse_text, read_log
from orchestrator.data.store import Store
from orchestrator.errors import InputError
from orchestrator.programs.base import NOT_PROBED, FactRow, probed
from orchestrator.records import Header

NOT_RECORDED = "not recorded"


@dataclass
class Side:
    """One side of a comparison: where it came from, its dataset and its program headers."""

    spec: str  # as the user wrote it
    name: str  # 'h200@20261130-154152-599978', 'chapter_listings.log'
    data: Dataset
    headers: list[Header]
    kind: str  # 'store' | 'log'
    sweep: str | None = None
    env: set[str] = field(default_factory=set)  # 'K=V' an experiment added to its runs
    # the same per variant of an A/B (`variants:`): a variant side shows all its own env
    variant_env: dict[str, set[str]] = field(default_factory=dict)
    variant: str = ""  # `FOLDER#VARIANT`: the variant of an A/B in one sweep


def load_side(spec: str) -> Side:
    """A results folder (latest sweep), `folder@sweep`, or a captured log file; `#VARIANT`
    after a folder: that variant's runs of an A/B measured in one sweep (`variants:`)."""
    path = Path(spec)
    if path.exists() and not path.is_dir():  # a file, or a device or pipe read as a log
        return _log_side(spec, path)
    if not path.exists() and "#" in spec:
        head, variant = spec.rsplit("#", 1)
        return variant_side(load_side(head), variant, spec)
    folder, sweep = path, None
    if not path.exists() and "@" in spec:
        head, sweep = spec.rsplit("@", 1)
        folder = Path(head)
    if not folder.is_dir():
        raise InputError(f"{spec}: no such results folder or log file")
    return _store_side(spec, folder, sweep)


def one_part(spec: str) -> Side:
    """compare's side: `load_side` of a spec that names one part of a store; a store of
    several hosts, or a sweep of several variants, named whole is refused in one line naming
    its parts (data/identity.py: compare never pools them)."""
    try:
        found = identity.parts(spec)
    except InputError:  # a sweep or host the store lacks: said in a side's own words
        return load_side(spec)
    if len(found) > 1:
        raise InputError(f"{spec}: holds {len(found)} parts compare never pools (hosts or "
                         f"variants): {', '.join(found)}; name one of them as the side")
    return load_side(spec)


def variant_side(side: Side, variant: str, spec: str) -> Side:
    """The side's runs of one variant (data/identity.py): its figures, samples and runs, its
    environment."""
    chosen = identity.select_variant(side.data, variant, side.name)
    # every variable the variant's runs were given (the store's definitions), not only the
    # measurement-changing ones the dataset's measure_env column lists
    env = side.variant_env.get(variant) or \
        {e for r in chosen.figures["measure_env"] for e in measure_env.pairs_text(r)}
    return replace(side, spec=spec, name=f"{side.name}#{variant}", data=chosen,
                   env=env if env else set(), variant=variant)


def _log_side(spec: str, path: Path) -> Side:
    parsed = parse_text(read_log(path))  # bounded: the one reader of every captured log
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
        label = sweep
        if sweep is not None and sweep not in known:  # FOLDER@HOST of a merged store
            sweep = latest_of_host(store.sweeps(), sweep) or sweep
        if sweep is not None and sweep not in known:
            raise InputError(f"{spec}: no sweep {sweep!r} in {folder} (sweeps: "
                             f"{', '.join(known[-5:])})")
        sweep = sweep or store.latest_sweep()
        runs = [r for r in store.query("SELECT stdout, definition_json FROM runs WHERE "
                                       "sweep_id=? AND status='ok'", (sweep,))
                if run_problem(r) is None]  # a damaged row: dataset.load counts it
    headers = [h for r in runs
               for h in headers_of((r["stdout"] or b"").decode("utf-8", "replace"))]
    env: set[str] = set()
    by_variant: dict[str, set[str]] = {}
    for r in runs:
        definition = json.loads(r["definition_json"] or "{}")
        pairs = {f"{k}={v}" for k, v in (definition.get("env") or [])}
        env |= pairs
        if definition.get("variant"):
            by_variant.setdefault(str(definition["variant"]), set()).update(pairs)
    return Side(spec, f"{folder.name}@{label or sweep}", dataset.load(folder, sweep), headers,
                "store", sweep, env, by_variant)


@dataclass
class Fact:
    what: str
    a: str
    b: str

    @property
    def differs(self) -> bool:
        """A program's facts one sweep did not probe (it ran none of its targets) are no
        difference of the machines."""
        return self.a != self.b and NOT_PROBED not in (self.a, self.b)


def _join(values: Any) -> str | None:
    found = sorted({str(v) for v in values if v is not None and str(v) not in ("", "nan")})
    return ", ".join(found) if found else None


def _gpus(side: Side) -> str | None:
    return _join(g.get("name") for g in side.data.host.get("gpus") or [])


def _cards(side: Side) -> str | None:
    """The GPUs' UUIDs: the same kind of machine is not the same card."""
    return _join(g.get("uuid") for g in side.data.host.get("gpus") or [])


def _driver(side: Side) -> str | None:
    return _join(g.get("driver") for g in side.data.host.get("gpus") or [])


def _accelerators(side: Side) -> str | None:
    fig = side.data.figures
    if fig.empty:
        return None
    devices = fig.loc[fig["status"].fillna("ok").eq("ok") & fig["value_s"].notna(), "device"]
    return _join(d for d in devices if d not in programs.cpu_devices())


def _cpu(side: Side) -> str | None:
    host = side.data.host
    if not host.get("cpu_model"):
        return None
    cores = host.get("cores_usable") or host.get("cores_logical")
    return f"{host['cpu_model']}" + (f", {cores} cores" if cores else "")


def _os(side: Side) -> str | None:
    host = side.data.host
    return " ".join(str(host[k]) for k in ("os", "arch") if host.get(k)) or None


def _program_row(program: str, row: FactRow, side: Side) -> str | None:
    """The row's value; 'not probed' where the side's sweep asked none of this program's facts
    (it ran none of its targets) and no run printed it."""
    host = side.data.host or {}
    found = row.read(side.headers, host)
    return NOT_PROBED if found is None and not probed(program, host) else found


def owned_rows() -> list[tuple[str, FactRow]]:
    """Every registered program's machine-fact rows (Program.fact_rows) with the program's
    name, in registry order."""
    return [(p.name, row) for p in programs.active().programs for row in p.fact_rows()]


def program_rows() -> list[FactRow]:
    return [row for _, row in owned_rows()]


def _precision(side: Side) -> str | None:
    fig = side.data.figures
    return _join(fig["precision"]) if "precision" in fig else None


def _cpu_threads(side: Side) -> str | None:
    fig = side.data.figures
    if fig.empty:
        return None
    cpu = fig[fig["device"].isin(sorted(programs.cpu_devices())) & fig["value_s"].notna()]
    return _join(int(t) for t in cpu["threads"].dropna())


def _load(side: Side) -> str | None:
    runs = side.data.runs
    if runs.empty or "load1_before" not in runs:
        return None
    load = runs["load1_before"].dropna()
    if load.empty:
        return None
    low, high = float(load.min()), float(load.max())
    return f"{low:.2f}" if low == high else f"{low:.2f} – {high:.2f}"


def _env(side: Side) -> str | None:
    """Variables the experiments added; a log cannot tell, a store with none says 'none'."""
    return _join(side.env) or ("none" if side.kind == "store" else None)


def _run_values(side: Side, column: str) -> list[Any]:
    """A per-run state column's recorded values ('' and None are not recorded)."""
    runs = side.data.runs
    if runs.empty or column not in runs:
        return []
    return [v for v in runs[column].dropna() if str(v) not in ("", "None", "nan")]


def _span(values: list[Any], unit: str) -> str | None:
    if not values:
        return None
    low, high = min(map(float, values)), max(map(float, values))
    return f"{low:g} {unit}" if low == high else f"{low:g} – {high:g} {unit}"


def _governor(side: Side) -> str | None:
    """The CPU frequency policy per run (the dataset's cpu_ state columns), else the sweep's."""
    state = side.data.host.get("cpu_state") or {}
    found = _join(_run_values(side, "cpu_governor")) or state.get("governor")
    boost = _join(_run_values(side, "cpu_boost")) or state.get("boost")
    return f"{found}, boost {boost}" if found and boost else found or None


def _gpu_clocks(side: Side) -> str | None:
    sm = _span(_run_values(side, "gpu_sm_clock_mhz"), "MHz")
    top = _span(_run_values(side, "gpu_sm_clock_max_mhz"), "MHz")
    return f"SM {sm}" + (f" (max {top})" if top else "") if sm else None


def _sweep(side: Side) -> str | None:
    """'complete', or why not: a side that is half a sweep must say so before any verdict."""
    state = side.data.sweep
    if state is None:
        return None
    # 'incomplete: killed (...), 3 of 6 planned runs finished'
    return "complete" if state.complete else (state.incomplete() or "").split(" is ", 1)[-1]


Reader = Callable[[Side], "str | None"]
_HOST_FACTS: list[tuple[str, Reader]] = [
    ("sweep (complete or not)", _sweep),
    ("accelerators (devices of the figures)", _accelerators),
    ("GPU", _gpus),
    ("GPU card (UUID)", _cards),
    ("GPU driver", _driver),
    ("CPU", _cpu),
    ("OS", _os),
]
_RUN_FACTS: list[tuple[str, Reader]] = [
    ("precision", _precision),
    ("CPU thread counts", _cpu_threads),
    ("1-minute load before runs", _load),
    ("experiment env", _env),
    ("CPU governor", _governor),
    ("GPU clocks before runs", _gpu_clocks),
]


def facts() -> list[tuple[str, Reader]]:
    """Every fact row: the host's, each program's (read from the registry, so a new program's
    rows appear), then the runs'."""
    rows = [(row.name, partial(_program_row, name, row)) for name, row in owned_rows()]
    return [*_HOST_FACTS, *rows, *_RUN_FACTS]


def machine_facts(a: Side, b: Side) -> list[Fact]:
    """Every fact at least one side recorded, those that differ first."""
    found = []
    for what, read in facts():
        va, vb = read(a), read(b)
        if {va, vb} <= {None, NOT_PROBED}:  # neither side recorded it
            continue
        found.append(Fact(what, va or NOT_RECORDED, vb or NOT_RECORDED))
    return sorted(found, key=lambda f: not f.differs)
