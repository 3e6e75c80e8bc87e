"""Expand the experiments file into individual runs, each runnable or skipped with a reason.

A run is identified by its full definition (a hash of it): change anything that affects the
measurement and the run is new; keep it and a resumed sweep knows the run is already done.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterator
from dataclasses import dataclass, field, fields
from functools import cached_property
from typing import Any

from orchestrator.spec.config import Build, Experiment, ExperimentsFile, Target

# Devices whose runs need something the host may lack, beyond the target's own `requires`.
DEVICE_NEEDS = {
    ("torch", "cuda"): ("torch", "cuda"),
    ("torch", "mps"): ("torch", "mps"),
    ("torch", "cpu"): ("torch",),
    ("torch", "auto"): ("torch",),
    ("burn", "cuda"): ("cuda",),
    ("burn", "metal"): ("metal",),
    ("burn", "vulkan"): ("vulkan",),
    ("burn", "flex"): (),
}
# Only cubecl devices autotune into the on-disk cache; a cache sweep means nothing elsewhere.
CACHED_DEVICES = ("cuda", "metal", "vulkan")


@dataclass(frozen=True)
class RunDef:
    """Everything that defines one measured process."""

    experiment: str
    program: str
    device: str
    mode: str
    shape: tuple[int, int]
    reps: int
    build: str | None = None
    crate: str | None = None
    features: tuple[str, ...] = ()
    threads: int | None = None
    cache: str = "none"  # the state the process should find: cold | warm | none
    cache_action: str = "none"  # delete | ensure | none, done before the process starts
    warmup: str | None = None
    timed_runs: int | None = None
    process: int = 1
    processes: int = 1
    samples: bool = True
    env: tuple[tuple[str, str], ...] = ()
    timeout_s: float = field(default=600, compare=False)

    def definition(self) -> dict[str, Any]:
        """The fields as a dict. Every field is a string, a number or a tuple of them, so this
        equals `dataclasses.asdict` without its deep copy (a sixth of the cost, paid per run)."""
        return {f.name: getattr(self, f.name) for f in fields(self)}

    @classmethod
    def from_definition(cls, definition: dict[str, Any]) -> RunDef:
        """The run a stored `definition()` describes (JSON turned the tuples into lists)."""
        fixed = dict(definition)
        fixed["shape"] = tuple(fixed["shape"])
        fixed["features"] = tuple(fixed["features"])
        fixed["env"] = tuple(tuple(pair) for pair in fixed["env"])
        return cls(**fixed)

    @cached_property  # asked for several times per run; the fields are frozen
    def run_id(self) -> str:
        definition = self.definition()
        definition.pop("timeout_s")  # a longer timeout measures the same thing
        blob = json.dumps(definition, sort_keys=True, separators=(",", ":"))
        return hashlib.sha256(blob.encode()).hexdigest()[:16]

    @property
    def shape_text(self) -> str:
        return f"{self.shape[0]}x{self.shape[1]}"

    def describe(self) -> str:
        """One human line: what this run is."""
        what = f"burn {self.build}" if self.program == "burn" else "torch"
        parts = [f"{self.experiment}: {what} {self.device} {self.mode} {self.shape_text}"]
        if self.threads is not None:
            parts.append(f"threads {self.threads}")
        if self.cache != "none":
            parts.append(f"{self.cache} cache")
        if self.warmup:
            parts.append(f"warm-up {self.warmup}")
        if self.processes > 1:
            parts.append(f"process {self.process}/{self.processes}")
        return ", ".join(parts)


@dataclass(frozen=True)
class PlannedRun:
    run: RunDef
    skip_reason: str | None = None
    expect_failure: bool = False


def _cache_series(state: str, processes: int) -> Iterator[tuple[int, str, str]]:
    """(process, cache label, action): a cold series is cold only before its first process."""
    for process in range(1, processes + 1):
        if state == "none":
            yield process, "none", "none"
        elif process == 1:
            yield process, state, "delete" if state == "cold" else "ensure"
        else:
            yield process, "warm", "none"


def _threads(target: Target, exp: Experiment, cores: int) -> list[int | None]:
    specs = target.threads if target.threads is not None else exp.threads
    resolved = [cores if t == "auto" else t for t in specs] or [None]
    return list(dict.fromkeys(resolved))  # 'auto' may equal an explicit count


def _skip_reason(target: Target, build: Build | None, caps: dict[str, str | None]) -> str | None:
    needs = [*DEVICE_NEEDS[(target.program, target.device)], *target.requires]
    if build is not None:
        needs += build.requires
    for need in needs:
        if caps.get(need):
            return caps[need]
    return None


def expand(config: ExperimentsFile, caps: dict[str, str | None], cores: int,
           only: list[str] | None = None) -> list[PlannedRun]:
    """Every run of the selected experiments, in execution order."""
    planned: list[PlannedRun] = []
    for name, exp in config.experiments.items():
        if only and name not in only:
            continue
        planned.extend(_expand_experiment(config, name, exp, caps, cores))
    return planned


def _expand_experiment(config: ExperimentsFile, name: str, exp: Experiment,
                       caps: dict[str, str | None], cores: int) -> Iterator[PlannedRun]:
    d = config.defaults
    env = tuple(sorted({**d.env, **exp.env}.items()))
    for target in exp.targets:
        build = config.builds[target.build] if target.build else None
        reason = _skip_reason(target, build, caps)
        cached = target.program == "burn" and target.device in CACHED_DEVICES
        caches = exp.cache if cached else ("none",)
        warmups: tuple[str | None, ...] = exp.warmup if exp.mode == "warm" else (None,)
        for shape in exp.shapes or (d.shape,):
            for threads in _threads(target, exp, cores):
                for state in dict.fromkeys(caches):
                    for warmup in warmups:
                        for process, label, action in _cache_series(state, exp.processes):
                            run = RunDef(
                                experiment=name, program=target.program, device=target.device,
                                mode=exp.mode, shape=shape, reps=exp.reps or d.reps,
                                build=target.build, crate=build.crate if build else None,
                                features=tuple(sorted(build.features)) if build else (),
                                threads=threads, cache=label, cache_action=action,
                                warmup=warmup,
                                timed_runs=exp.timed_runs if exp.mode == "warm" else None,
                                process=process, processes=exp.processes, samples=d.samples,
                                env=env, timeout_s=exp.timeout_s or d.timeout_s,
                            )
                            yield PlannedRun(run, reason,
                                             bool(build and build.expect_failure))


def builds_needed(config: ExperimentsFile, planned: list[PlannedRun]) -> dict[str, Build]:
    """The builds the runnable part of the plan uses, by name, in first-use order."""
    names = [p.run.build for p in planned if p.run.build and p.skip_reason is None]
    return {name: config.builds[name] for name in dict.fromkeys(names) if name}
