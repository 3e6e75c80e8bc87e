"""`merge`: several results stores (one per host) into one, keyed by host, sweep and run.

Each sweep of a source is copied whole, every table's every column (the machine facts of
`host_json`, each run's state, raw output, arrays), into the merged store, with the host it ran
on in `sweeps.host`. Merging a sweep again replaces it with its newer copy (a sweep fetched
while still running), so merging the same sources twice leaves the same store: idempotent. A
sweep id is a timestamp plus random hex: the same id from two different hosts is refused
rather than silently mixed.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from orchestrator.data.store import Store
from orchestrator.errors import InputError

TABLES = ("sweeps", "sweep_starts", "stops", "builds", "runs", "artifacts", "figures",
          "samples")


@dataclass(frozen=True)
class Source:
    """A results folder, and the host name its own sweeps get (None: from its host facts)."""

    folder: Path
    host: str | None = None

    @classmethod
    def parse(cls, spec: str) -> Source:
        """`NAME=FOLDER` or `FOLDER`."""
        name, sep, folder = spec.partition("=")
        if sep and name and "/" not in name and not Path(spec).exists():
            return cls(Path(folder), name)
        return cls(Path(spec))


def host_of(sweep: dict[str, Any], given: str | None, folder: Path) -> str:
    """The host a sweep ran on: recorded by an earlier merge, else the name given for the
    source, else the hostname in its machine facts, else the folder's name."""
    if sweep.get("host"):
        return str(sweep["host"])
    if given:
        return given
    try:
        facts = json.loads(sweep.get("host_json") or "{}")
    except ValueError:
        facts = {}
    name = facts.get("hostname") if isinstance(facts, dict) else None
    return str(name) if name else folder.resolve().name


@dataclass(frozen=True)
class Merged:
    """What one source gave: its folder, and (host, sweep id, runs) per sweep."""

    folder: Path
    sweeps: list[tuple[str, str, int]]

    def line(self) -> str:
        told = ", ".join(f"{h}@{s} ({n} runs)" for h, s, n in self.sweeps) or "no sweep"
        return f"{self.folder}: {told}"


def merge(out: Path, sources: list[Source]) -> list[Merged]:
    """Every sweep of every source into `out`'s store (created if needed, held locked)."""
    for source in sources:
        if source.folder.resolve() == out.resolve():
            raise InputError(f"merge: {out} is both the output and a source")
    done = []
    with Store(out).writing() as dest:
        known = {s["sweep_id"]: s.get("host") for s in dest.sweeps()}
        for source in sources:
            done.append(_merge_one(dest, source, known))
    return done


def _merge_one(dest: Store, source: Source, known: dict[str, Any]) -> Merged:
    copied = []
    with Store(source.folder).reading() as src:
        for sweep in src.sweeps():
            sweep_id = str(sweep["sweep_id"])
            host = host_of(sweep, source.host, source.folder)
            if known.get(sweep_id) not in (None, host):
                raise InputError(f"merge: sweep {sweep_id} of {source.folder} (host {host}) is "
                                 f"already in {dest.path} from host {known[sweep_id]}")
            # in rowid order: readers order ties (runs of one start time, figures) by rowid
            rows = {t: src.query(f"SELECT * FROM {t} WHERE sweep_id=? ORDER BY rowid",
                                 (sweep_id,)) for t in TABLES}
            for row in rows["sweeps"]:
                row["host"] = host
            dest.replace_sweep(sweep_id, rows)
            known[sweep_id] = host
            copied.append((host, sweep_id, len(rows["runs"])))
    return Merged(source.folder, copied)


def hosts_of(folder: Path) -> list[str]:
    """The hosts a merged store holds sweeps of, in the order they first ran ([] for a store
    of this machine's sweeps alone)."""
    with Store(folder).reading() as store:
        hosts = [s["host"] for s in store.sweeps() if s.get("host")]
    return list(dict.fromkeys(hosts))


def latest_of_host(sweeps: list[dict[str, Any]], host: str) -> str | None:
    """The latest sweep id of `host` among `Store.sweeps()` (oldest first), or None."""
    ids = [str(s["sweep_id"]) for s in sweeps if s.get("host") == host]
    return ids[-1] if ids else None
