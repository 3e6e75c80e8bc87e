"""The definition of a run: statuses, roles and cache states (StrEnums, stored as the same
strings as before), its sweep parameters and `RunDef`, hashed into the run id."""

from __future__ import annotations

import hashlib
import json
from dataclasses import MISSING, dataclass, field, fields, replace
from enum import StrEnum
from functools import cached_property
from typing import Any

from orchestrator import axes


class Status(StrEnum):
    OK = "ok"
    FAILED = "failed"
    SKIPPED = "skipped"


class Role(StrEnum):
    MEASURE = "measure"  # the run the experiment asked for
    # a run that only fills burn's cache before a warm run; its definition says the state it
    # started in (cold: no cubecl cache), its cache record what it found and left
    PRIMING = "priming"
    # a measured run's twin under a profiler (Nsight Compute): its program's own figures are
    # kept but are never chapter figures; the profiler's are (`kernel_time`, profiler 'ncu')
    PROFILE = "profile"


class CacheState(StrEnum):
    """The on-disk autotune cache a process should find (or a log says it found).

    NONE is the one spelling of "no cache state": devices without an on-disk cache, and lines
    whose log does not say. The dataset's `cache` column writes it as '' (`column`). MEGA: the
    cache folders emptied as for COLD, then filled from a blob of the cache artifacts an earlier
    process saved (torch.compile's mega-cache, a program with `artifacts_home`).
    """

    COLD = "cold"
    WARM = "warm"
    NONE = "none"
    MEGA = "mega"

    @property
    def column(self) -> str:
        """The dataset's spelling: 'cold', 'warm', 'mega' or ''."""
        return "" if self == CacheState.NONE else self.value

    @classmethod
    def of(cls, value: str | None) -> CacheState:
        """From a stored or printed value; '' and NULL (a version-1 store) mean NONE."""
        return cls(value.lower()) if value else cls.NONE


class CacheAction(StrEnum):
    """What is done to the cache before a process starts."""

    DELETE = "delete"
    ENSURE = "ensure"
    NONE = "none"


class Params(dict):  # type: ignore[type-arg]
    """A run's sweep parameters (axis name -> value, orchestrator/axes.py), hashable: a
    RunDef is a dict key and a set member. Never changed once its run is made."""

    def __hash__(self) -> int:  # type: ignore[override]
        return hash(tuple(self.items()))


@dataclass(frozen=True, init=False)
class RunDef:
    """Everything that defines one measured process: its identity (the fields) and its sweep
    parameters (`params`, one per axis of orchestrator/axes.py; `run.threads` and the other
    built-in axes read as properties, and construct as keywords: `RunDef(..., threads=4)`).

    Its definition (a JSON of the fields and the axes) is hashed into the run id, which a resumed
    sweep and the committed stores rely on: names and values must stay as they are (enum
    members serialise as their strings, so the JSON is byte-identical to plain strings).
    """

    experiment: str
    program: str
    device: str
    mode: str
    reps: int
    build: str | None = None
    crate: str | None = None
    features: tuple[str, ...] = ()
    cache_action: CacheAction = CacheAction.NONE  # done before the process starts
    timed_runs: int | None = None
    processes: int = 1
    samples: bool = True
    env: tuple[tuple[str, str], ...] = ()
    timeout_s: float = field(default=600, compare=False)
    # seconds of the energy block (`--energy`); None: no block (0 in the experiments file)
    energy_s: float | None = None
    params: Params = field(default_factory=Params)

    def __init__(self, experiment: str, program: str, device: str, mode: str,
                 shape: tuple[int, int] | None = None, reps: int | None = None, *,
                 params: dict[str, Any] | None = None, **rest: Any) -> None:
        """The identity's fields and the axes, both by keyword (`replace` passes `params` and
        the changes); a name that is neither is a TypeError, as a dataclass's would be."""
        if reps is None or (shape is None and not params):
            raise TypeError("RunDef needs its 'shape' and 'reps'")
        chosen = Params(axes.defaults())
        chosen.update(params or {})
        if shape is not None:
            chosen["shape"] = shape
        identity = {f.name: f for f in fields(self)}
        values: dict[str, Any] = {"experiment": experiment, "program": program,
                                  "device": device, "mode": mode, "reps": reps}
        for name, value in rest.items():
            if name in chosen:
                chosen[name] = value
            elif name in identity and name != "params":
                values[name] = value
            else:
                raise TypeError(f"RunDef got an unexpected keyword argument {name!r}")
        for name, f in identity.items():
            if name not in values and name != "params":
                values[name] = f.default_factory() if f.default is MISSING else f.default
        # one spelling: a caller's plain 'cold' becomes CacheState.COLD (equal, same JSON)
        chosen["cache"] = CacheState(chosen["cache"])
        values["cache_action"] = CacheAction(values["cache_action"])
        for name, value in (*values.items(), ("params", chosen)):
            object.__setattr__(self, name, value)

    # the built-in axes, by their old field names
    shape = property(lambda self: self.params["shape"])
    threads = property(lambda self: self.params["threads"])
    cache = property(lambda self: self.params["cache"])  # the state the process should find
    warmup = property(lambda self: self.params["warmup"])
    process = property(lambda self: self.params["process"])
    repeat = property(lambda self: self.params["repeat"])
    precision = property(lambda self: self.params["precision"])
    variant = property(lambda self: self.params["variant"])
    profile = property(lambda self: self.params["profile"])

    def definition(self) -> dict[str, Any]:
        """The fields and the axes as one flat dict (as stored: `runs.definition_json`). Every
        value is a string, a number or a tuple of them, so this equals `dataclasses.asdict`
        without its deep copy (a sixth of the cost, paid per run)."""
        found = {f.name: getattr(self, f.name) for f in fields(self) if f.name != "params"}
        return {**found, **axes.stored(self.params)}

    @classmethod
    def from_definition(cls, definition: dict[str, Any]) -> RunDef:
        """The run a stored `definition()` describes (JSON turned the tuples into lists)."""
        fixed = dict(definition)
        fixed["features"] = tuple(fixed["features"])
        fixed["env"] = tuple(tuple(pair) for pair in fixed["env"])
        fixed["cache_action"] = CacheAction(fixed.get("cache_action", "none"))
        for axis in axes.axes():
            if axis.name in fixed:
                fixed[axis.name] = axis.load(fixed[axis.name])
        fixed["shape"] = tuple(fixed["shape"])  # required: a definition without one is damage
        return cls(**fixed)

    @property
    def series_id(self) -> str:
        """The run id of the first process of this run's series (a profile run's: its
        measured run's): what a stopping target stops (run/stopping.py). A warm series'
        first process is the one that ensures the cache (its later ones find it warm); a
        stopping target has no cold series, whose later processes would read as warm."""
        first = {CacheState.WARM: CacheAction.ENSURE,
                 CacheState.MEGA: CacheAction.DELETE}.get(self.cache, self.cache_action)
        return replace(self, process=1, profile=None, cache_action=first).run_id

    @cached_property  # asked for several times per run; the fields are frozen
    def run_id(self) -> str:
        definition = self.definition()
        definition.pop("timeout_s")  # a longer timeout measures the same thing
        # axes and fields added later, at their defaults: old run ids stay as they were
        for name in axes.unhashed(self.params):
            definition.pop(name, None)
        for name in _UNHASHED_DEFAULTS:
            if definition[name] is None:
                definition.pop(name)
        blob = json.dumps(definition, sort_keys=True, separators=(",", ":"))
        return hashlib.sha256(blob.encode()).hexdigest()[:16]

    @property
    def shape_text(self) -> str:
        return f"{self.shape[0]}x{self.shape[1]}"

    @property
    def profile_of(self) -> str | None:
        """A profile run's measured run (the same definition without the profiler)."""
        return replace(self, profile=None).run_id if self.profile else None

    def describe(self) -> str:
        """One human line: what this run is ('burn cuda' for a build, 'torch' without), then
        its axes' parts in the registry's order."""
        what = f"{self.program} {self.build}" if self.build else self.program
        head = f"{self.experiment}: {what} {self.device} {self.mode} {self.shape_text}"
        return ", ".join([head, *axes.describe(self.params, self)])


# RunDef fields left out of the run id while None (their default), newest last (the axes say
# their own: orchestrator/axes.py `hashed_default`)
_UNHASHED_DEFAULTS = ("energy_s",)
