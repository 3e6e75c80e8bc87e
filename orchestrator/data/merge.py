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
import os
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any

from orchestrator.data import identity
from orchestrator.data.store import Store
from orchestrator.errors import InputError

TABLES = ("sweeps", "sweep_starts", "stops", "builds", "runs", "artifacts", "figures",
          "samples")


@dataclass(frozen=True)
class Source:
    """A results folder, and the host name its sweeps get (None: from its host facts)."""

    folder: Path
    host: str | None = None

    @classmethod
    def parse(cls, spec: str) -> Source:
        """`NAME=FOLDER` or `FOLDER`; a NAME a spec could not name back (`@`, `#`) is refused."""
        name, sep, folder = spec.partition("=")
        if sep and "/" not in name and not Path(spec).exists():
            identity.check_name(name, f"merge {spec}: host name")
            return cls(Path(folder), name)
        return cls(Path(spec))


def host_of(sweep: dict[str, Any], given: str | None, folder: Path) -> str:
    """The host a sweep ran on: the name given for the source, else the one an earlier merge
    recorded, else the hostname in its machine facts, else the folder's name."""
    if given:
        return given
    if sweep.get("host"):
        return str(sweep["host"])
    name = _facts(sweep).get("hostname")
    return str(name) if name else folder.resolve().name


def _facts(sweep: dict[str, Any]) -> dict[str, Any]:
    try:
        facts = json.loads(sweep.get("host_json") or "{}")
    except ValueError:
        return {}
    return facts if isinstance(facts, dict) else {}


def machine(sweep: dict[str, Any]) -> tuple[Any, ...]:
    """What tells one machine from another in a sweep's facts (a hostname does not: 'vm',
    'localhost'): its CPU, cores, memory and GPUs (names and UUIDs)."""
    facts = _facts(sweep)
    gpus = facts.get("gpus") if isinstance(facts.get("gpus"), list) else []
    return (facts.get("hostname"), facts.get("cpu_model"), facts.get("cores_logical"),
            facts.get("memory_bytes"),
            tuple(sorted((str(g.get("name")), str(g.get("uuid"))) for g in gpus
                         if isinstance(g, dict))))


@dataclass(frozen=True)
class Merged:
    """What one source gave: its folder, and (host, sweep id, runs) per sweep."""

    folder: Path
    sweeps: list[tuple[str, str, int]]

    def line(self) -> str:
        told = ", ".join(f"{h}@{s} ({n} runs)" for h, s, n in self.sweeps) or "no sweep"
        return f"{self.folder}: {told}"


@dataclass
class _Planned:
    """One sweep to copy: its source, id, host, and the machine it ran on."""

    source: Source
    sweep_id: str
    host: str
    machine: tuple[Any, ...]
    runs: int


def merge(out: Path, sources: list[Source]) -> list[Merged]:
    """Every sweep of every source into `out`'s store (created if needed, held locked): every
    refusal is found before anything is written, and the copy is one transaction, so a merge
    is whole or not at all."""
    for source in sources:
        if _same_store(source.folder, out):
            raise InputError(f"merge: {out} is both the output and a source ({source.folder}: "
                             "the same store file)")
    with Store(out).writing() as dest:
        # what the output already holds: sweep -> (host, machine); host -> machine
        held = {str(s["sweep_id"]): (s.get("host"), machine(s)) for s in dest.sweeps()}
        planned = _plan(dest.path, sources, held)
        dest.replace_sweeps([(p.sweep_id, partial(_rows, p)) for p in planned])
    return [Merged(s.folder, [(p.host, p.sweep_id, p.runs) for p in planned if p.source is s])
            for s in sources]


def _same_store(a: Path, b: Path) -> bool:
    """Whether two results folders hold one store file (a link, a folder named twice)."""
    first, second = Store(a).path, Store(b).path
    try:
        return os.path.samefile(first, second)
    except OSError:  # one is not there yet: then only the same path is the same file
        return first.resolve() == second.resolve()


def _plan(dest: Path, sources: list[Source],
          held: dict[str, tuple[Any, tuple[Any, ...]]]) -> list[_Planned]:
    """Every sweep to copy, checked: one sweep never from two hosts; one host name never two
    machines unless the user gave it by name (NAME=)."""
    planned: list[_Planned] = []
    seen: dict[str, _Planned] = {}
    # host -> (the source that named it, its machine): the output's own hosts first
    names: dict[str, tuple[Path | None, tuple[Any, ...]]] = {
        str(h): (None, m) for h, m in held.values() if h}
    for source in sources:
        with Store(source.folder).reading() as src:
            sweeps = src.sweeps()
            counts = dict(src.db.execute("SELECT sweep_id, count(*) FROM runs GROUP BY "
                                         "sweep_id").fetchall())
        named = {str(s["host"]) for s in sweeps if s.get("host")}
        if source.host and len(named) > 1:
            raise InputError(f"merge: {source.folder} holds sweeps of {len(named)} hosts "
                             f"({', '.join(sorted(named))}); one NAME= would give them one "
                             "name; nothing merged")
        for sweep in sweeps:
            one = _Planned(source, str(sweep["sweep_id"]), host_of(sweep, source.host,
                                                                    source.folder),
                           machine(sweep), counts.get(sweep["sweep_id"], 0))
            _check(one, seen.get(one.sweep_id), held, dest)
            if source.host is None and sweep.get("host") is None:
                _check_name(one, names.get(one.host))  # a name from the machine's facts
            names.setdefault(one.host, (source.folder, one.machine))
            if one.sweep_id in seen:  # the same sweep twice, from the same host: once
                planned.remove(seen[one.sweep_id])
            seen[one.sweep_id] = one
            planned.append(one)
    return planned


def _check(one: _Planned, earlier: _Planned | None,
           held: dict[str, tuple[Any, tuple[Any, ...]]], dest: Path) -> None:
    where = f"sweep {one.sweep_id} of {one.source.folder} (host {one.host})"
    if earlier is not None and earlier.host != one.host:
        raise InputError(f"merge: {where} is also given as host {earlier.host} "
                         f"(from {earlier.source.folder}): one sweep, one host; nothing merged")
    if held.get(one.sweep_id, (None,))[0] not in (None, one.host):
        raise InputError(f"merge: {where} is already in {dest} from host "
                         f"{held[one.sweep_id][0]}; nothing merged")


def _check_name(one: _Planned, named: tuple[Path | None, tuple[Any, ...]] | None) -> None:
    """A hostname taken from the facts that another source's sweeps (or the output's, of
    another machine) already go by: two machines would read as one host, so the user names
    them."""
    if named is None:
        return
    folder, other = named
    if folder is None and other == one.machine:
        return  # the output's own sweeps of this machine: merged again
    if folder is not None and _same_store(folder, one.source.folder):
        return
    was = f"{folder}'s" if folder is not None else "the output's"
    raise InputError(f"merge: {one.source.folder} and {was} sweeps both ran on a host "
                     f"named {one.host!r}; name each machine (merge OUT NAME1=FOLDER1 "
                     f"NAME2=FOLDER2, the same NAME twice for one machine); nothing merged")


def _rows(planned: _Planned) -> dict[str, list[dict[str, Any]]]:
    """One sweep's rows of every table, in rowid order (readers order ties by rowid), with
    its host."""
    with Store(planned.source.folder).reading() as src:
        rows = {t: src.query(f"SELECT * FROM {t} WHERE sweep_id=? ORDER BY rowid",
                             (planned.sweep_id,)) for t in TABLES}
    for row in rows["sweeps"]:
        row["host"] = planned.host
    return rows


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
