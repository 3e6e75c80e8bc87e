"""The sweeps of a history, ordered by time, and what changed between two of them.

Each RESULTS is a results folder (every sweep of its store: merged stores hold several hosts'
sweeps, each keeps its host) or `FOLDER@SWEEP` (that sweep); a store of any format opens through
its migrations, read-only. A sweep that measured `variants:` is one point per variant
(`FOLDER@SWEEP#NAME`), in the variants' order. The sweeps are ordered by their start time; a
sweep met twice (a store and a merge of it) is kept once; `last` keeps the latest N.

What changed between two sweeps is compare's machine facts (report/compare/sides.py: GPU and
its card, driver, CPU, OS, torch, JAX, burn, precision, threads, the experiments' environment,
...) that differ, and the sweep's own: the host, the project's commit, Python, the experiments
file. The machine's state around the runs (the 1-minute load, the GPU's clocks) differs at
every step and is not a change anyone made: it is left out.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from orchestrator.data.store import Store
from orchestrator.errors import InputError
from orchestrator.report.compare.sides import NOT_RECORDED, Side, load_side, machine_facts

# the machine's state, measured at each sweep: it differs every time, nobody changed it
STATE_FACTS = frozenset({"1-minute load before runs", "GPU clocks before runs"})


@dataclass
class Sweep:
    """One point of the history: a sweep (or one variant of it) as compare's side."""

    spec: str  # FOLDER@SWEEP[#VARIANT], as load_side reads it
    started_at: float  # epoch seconds
    host: str  # the merged store's host name, else the sweep's hostname
    commit: str  # the project's git commit, '' if not recorded
    experiments: str  # a short digest of the experiments file of its starts
    side: Side

    @property
    def when(self) -> str:
        return datetime.fromtimestamp(self.started_at, UTC).strftime("%Y-%m-%d %H:%M")

    @property
    def name(self) -> str:
        return self.side.name


@dataclass(frozen=True)
class Change:
    what: str
    before: str
    after: str

    def __str__(self) -> str:
        return f"{self.what}: {self.before} → {self.after}"


def load(results: list[str], last: int | None = None) -> list[Sweep]:
    """Every sweep of the RESULTS, oldest first (the latest `last` of them)."""
    if last is not None and last < 2:
        raise InputError(f"--last must be 2 or more (got {last}): a history needs two sweeps")
    found: dict[tuple[str, str], tuple[str, float, dict[str, Any], str]] = {}
    for spec in results:
        for sweep_id, row, text in _sweeps_of(spec):
            key = (sweep_id, str(row.get("host") or ""))
            found.setdefault(key, (_spec(spec, sweep_id), float(row["started_at"] or 0), row,
                                   text))
    ordered = sorted(found.values(), key=lambda f: (f[1], f[0]))
    if last is not None:
        ordered = ordered[-last:]
    sweeps = [s for spec, at, row, text in ordered for s in _points(spec, at, row, text)]
    if not sweeps:  # one sweep is a history with nothing to judge yet (a CI gate's first push)
        raise InputError(f"{' '.join(results)}: no sweep in these results stores")
    return sweeps


def _spec(spec: str, sweep_id: str) -> str:
    return spec if "@" in spec and not Path(spec).exists() else f"{spec}@{sweep_id}"


def _sweeps_of(spec: str) -> list[tuple[str, dict[str, Any], str]]:
    """(sweep id, its row of `sweeps`, its experiments text) of a folder or FOLDER@SWEEP."""
    path, wanted = Path(spec), None
    if not path.exists() and "@" in spec:
        head, wanted = spec.rsplit("@", 1)
        path = Path(head)
    if not path.is_dir():
        raise InputError(f"{spec}: no such results folder (history reads results stores)")
    store = Store(path)
    if not store.path.is_file():
        raise InputError(f"{spec}: {path} holds no results store ({store.path.name})")
    with store.reading():
        rows = store.sweeps()
        if wanted is not None:
            rows = [r for r in rows if r["sweep_id"] == wanted]
            if not rows:
                raise InputError(f"{spec}: no sweep {wanted!r} in {path}")
        return [(str(r["sweep_id"]), r, _experiments_text(store, str(r["sweep_id"])))
                for r in rows]


def _experiments_text(store: Store, sweep_id: str) -> str:
    starts = store.config_texts(sweep_id)
    return "\n".join(str(s.get("config_text") or "") for s in starts)


def _points(spec: str, started_at: float, row: dict[str, Any], text: str) -> list[Sweep]:
    host = json.loads(row.get("host_json") or "{}") or {}
    name = str(row.get("host") or host.get("hostname") or "")
    digest = hashlib.sha256(text.encode()).hexdigest()[:12] if text.strip() else ""
    side = load_side(spec)
    variants = sorted({str(v) for v in side.data.figures.get("variant", []) if str(v)
                       and str(v) != "nan"})
    sides = [load_side(f"{spec}#{v}") for v in variants] if len(variants) > 1 else [side]
    return [Sweep(s.spec, started_at, name, str(host.get("git_commit") or ""), digest, s)
            for s in sides]


def changes(a: Sweep, b: Sweep) -> list[Change]:
    """What differs between two sweeps: the sweep's own facts, then compare's machine facts
    (those recorded on at least one side), the machine's state left out."""
    own = [("host", a.host, b.host), ("project commit", a.commit, b.commit),
           ("experiments file (sha256)", a.experiments, b.experiments),
           ("variant", _variant(a), _variant(b)), ("Python", _python(a), _python(b))]
    found = [Change(what, x or NOT_RECORDED, y or NOT_RECORDED) for what, x, y in own
             if (x or y) and x != y]
    found += [Change(f.what, f.a, f.b) for f in machine_facts(a.side, b.side)
              if f.differs and f.what not in STATE_FACTS]
    return found


def _variant(s: Sweep) -> str:
    return s.spec.rsplit("#", 1)[1] if "#" in s.spec else ""


def _python(s: Sweep) -> str:
    return str((s.side.data.host or {}).get("python") or "")
