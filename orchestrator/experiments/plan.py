"""Expand the experiments file into individual runs, each runnable or skipped with a reason.

A run is identified by its full definition (a hash of it): change anything that affects the
measurement and the run is new; keep it and a resumed sweep knows the run is already done.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, replace
from itertools import islice
from typing import Any

from orchestrator import axes, programs
from orchestrator.errors import InputError
from orchestrator.experiments import order
from orchestrator.experiments.config import (
    Build,
    Experiment,
    ExperimentsFile,
    StoppingTarget,
    Target,
    Variant,
)
from orchestrator.experiments.limits import MAX_RUNS
from orchestrator.records import CacheAction, CacheState, RunDef

__all__ = ["PlannedRun", "RunDef", "builds_needed", "expand"]

@dataclass(frozen=True)
class PlannedRun:
    run: RunDef
    skip_reason: str | None = None
    expect_failure: bool = False
    # the run id of the first process of the cold series this run belongs to (its CUDA driver
    # cache folder, run/driver_cache); None: not in a cold series
    cold_series: str | None = None
    # a runnable run that needs a capability only `--assume` gave: what this machine lacks
    assumed: str | None = None
    # the stopping target its series stops at (run/stopping.py), and the scope whose runs
    # share its time budget: the experiment's name, or 'NAME.targets[i]' for a target's own
    rule: StoppingTarget | None = None
    rule_scope: str = ""


def _cache_series(state: CacheState, processes: int,
                  repeat: int = 1) -> Iterator[tuple[int, int, CacheState, CacheAction]]:
    """(repeat, process, cache label, action): a cold series is cold only before its first
    process; only cold series are repeated (each repeat a full series from cold caches). A mega
    series' first process finds the folder emptied too (then loads the artifacts its priming
    run saved); its later processes find it warm but keep the label `mega`: labelled `warm`
    they would be the very runs of a cold series' later processes (one run id, one record)."""
    emptied = (CacheState.COLD, CacheState.MEGA)
    for again in range(1, (repeat if state == CacheState.COLD else 1) + 1):
        for process in range(1, processes + 1):
            if state == CacheState.NONE:
                yield again, process, CacheState.NONE, CacheAction.NONE
            elif process == 1:
                yield again, process, state, (CacheAction.DELETE if state in emptied
                                              else CacheAction.ENSURE)
            elif state == CacheState.MEGA:
                yield again, process, state, CacheAction.NONE
            else:
                yield again, process, CacheState.WARM, CacheAction.NONE


def _threads(target: Target, exp: Experiment, cores: int) -> list[int | None]:
    specs = target.threads if target.threads is not None else exp.threads
    resolved = [cores if t == "auto" else t for t in specs] or [None]
    return list(dict.fromkeys(resolved))  # 'auto' may equal an explicit count


def _needs(target: Target, build: Build | None) -> list[str]:
    # what the device needs (the program says), then what the target and its build ask for
    needs = [*programs.get(target.program).device_needs[target.device], *target.requires]
    return needs + list(build.requires) if build is not None else needs


def _skip_reason(target: Target, build: Build | None, caps: dict[str, str | None]) -> str | None:
    for need in _needs(target, build):
        if caps.get(need):
            return caps[need]
    return None


def _assumed(target: Target, build: Build | None, real: dict[str, str | None] | None) -> str | None:
    """'assumed avx512f: <why this machine lacks it>' for each need only --assume gave: such a
    run is built and planned, but here it would not measure what its row says."""
    lacking = [f"assumed {need}: {real[need]}" for need in _needs(target, build)
               if real is not None and real.get(need)]
    return "; ".join(lacking) or None


def _precision(target: Target) -> str | None:
    """The arithmetic asked for; None for the program's default (an explicit 'fp32' on torch
    is the same run as none, with the same id)."""
    choices = programs.get(target.program).precisions.get(target.device, ())
    return None if not choices or target.precision in (None, choices[0]) else target.precision


def expand(config: ExperimentsFile, caps: dict[str, str | None], cores: int,
           only: list[str] | None = None,
           real: dict[str, str | None] | None = None,
           registry: programs.Registry | None = None) -> list[PlannedRun]:
    """Every run of the selected experiments, in execution order: file order, or with
    `defaults.order.interleave` each experiment's processes in seeded rounds (experiments/order.py).
    `real`: this machine's own capabilities when `caps` adds assumed ones to them (runs needing
    those are labelled); `registry`: whose programs and axes (None: the active one)."""
    with programs.use(registry):
        return _expand(config, caps, cores, only, real)


def _expand(config: ExperimentsFile, caps: dict[str, str | None], cores: int,
            only: list[str] | None, real: dict[str, str | None] | None) -> list[PlannedRun]:
    planned: list[PlannedRun] = []
    for name, exp in config.experiments.items():
        if only and name not in only:
            continue
        # each count is within its limit, their product may not be: one run past the limit
        # is expanded, never the whole product (1000 x 1000 took a minute to be refused)
        runs = list(islice(_expand_experiment(config, name, exp, caps, cores, real),
                           MAX_RUNS - len(planned) + 1))
        if len(planned) + len(runs) > MAX_RUNS:
            raise InputError(f"experiment '{name}' takes the plan past {MAX_RUNS} runs, "
                             "the limit for one sweep: fewer processes, repeats, thread "
                             "counts, shapes or targets")
        if config.defaults.order.interleave:  # rounds, shuffled from the file's seed
            runs = order.interleave(runs, config.defaults.order.seed, name)
        planned.extend(runs)
    return planned


def _expand_experiment(config: ExperimentsFile, name: str, exp: Experiment,
                       caps: dict[str, str | None], cores: int,
                       real: dict[str, str | None] | None) -> Iterator[PlannedRun]:
    # one run id, one record: a warm series' later processes are a cold series' later
    # processes (both find the cache warm), so `cache: [cold, warm]` with processes > 1 plans
    # each once; planned twice, the second would overwrite the first's record
    run_ids: set[str] = set()
    for variant, extra in (exp.variants or {None: Variant()}).items():
        for run in _expand_variant(config, name, exp, caps, cores, real, extra, variant):
            if run.run.run_id not in run_ids:
                run_ids.add(run.run.run_id)
                yield run


def _expand_variant(config: ExperimentsFile, name: str, exp: Experiment,
                    caps: dict[str, str | None], cores: int,
                    real: dict[str, str | None] | None, extra: Variant,
                    variant: str | None) -> Iterator[PlannedRun]:
    """One variant's runs (all of them without `variants:`); their order is `expand`'s: per
    target, every point of the axes' sweep (orchestrator/axes.py), nested in their order. A
    variant's `builds:` swaps a target's build for another (an A/B of two builds)."""
    d = config.defaults
    env = tuple(sorted({**d.env, **exp.env, **extra.env}.items()))
    for index, target in enumerate(exp.targets):
        _refuse_axes(name, exp, index, target)
        _refuse_mega(name, exp, index, target)
        build_name = extra.builds.get(target.build, target.build) if target.build else None
        build = config.builds[build_name] if build_name else None
        reason = _skip_reason(target, build, caps)
        note = None if reason else _assumed(target, build, real)
        expect = bool(build and build.expect_failure)
        rule = exp.rule_for(target)
        scope = f"{name}.targets[{index}]" if target.precision_target else name
        processes = exp.processes_for(target)
        identity = dict(experiment=name, program=target.program, device=target.device,
                        mode=exp.mode, reps=exp.reps or d.reps, build=build_name,
                        **_build_identity(target, build),
                        timed_runs=exp.timed_runs if exp.mode == "warm" else None,
                        processes=processes, samples=d.samples, env=env,
                        timeout_s=exp.timeout_s or d.timeout_s, energy_s=exp.energy_s or None)
        point = _Point(config, exp, target, cores, processes)
        for params in _sweep(point, axes.axes(), {"variant": variant}):
            if rule is not None and reason is not None and params["process"] > 1:
                continue  # a skipped series stopping at a target: one row
            run = RunDef(**identity, **params)
            if run.process == 1:  # later processes share the first's driver cache
                first = run.run_id if run.cache in (CacheState.COLD, CacheState.MEGA) else None
            yield PlannedRun(run, reason, expect, cold_series=first, assumed=note, rule=rule,
                             rule_scope=scope)
            yield from _profile_runs(run, _profilers(target, exp), reason, caps, expect, rule,
                                     scope)


def _build_identity(target: Target, build: Build | None) -> dict[str, Any]:
    """Which build the run runs, as its program's build system names it (stored `crate`,
    `features`: the run id's names since the first stores)."""
    system = programs.get(target.program).build_system
    if build is None or system is None:
        return {"crate": None, "features": ()}
    return system.identity(build)


def _refuse_axes(name: str, exp: Experiment, index: int, target: Target) -> None:
    """A keyed axis's value on a target whose program does not take it (Program.accepts): one
    line naming its YAML path, before anything runs (the value would reach no program)."""
    program = programs.get(target.program)
    for axis in axes.axes():
        if axis.key is None or axis.name in program.accepts:
            continue
        takes = f"it takes {', '.join(program.accepts)}" if program.accepts else "it takes none"
        if getattr(target, axis.key, None) is not None:
            raise InputError(f"experiments.{name}.targets[{index}].{axis.key}: a "
                             f"{program.name} target takes no '{axis.key}' ({takes})")
        if getattr(exp, axis.key, None) is not None:
            raise InputError(f"experiments.{name}.{axis.key}: targets[{index}] is "
                             f"{program.name}, which takes no '{axis.key}' ({takes}); "
                             "put it on the targets whose program takes it")


def _refuse_mega(name: str, exp: Experiment, index: int, target: Target) -> None:
    """`cache: [mega]` on a target whose runs read an on-disk cache its program cannot save
    as artifacts (cubecl's, JAX's): one line naming its YAML path. Where a target has no
    cache at all (eager torch, a CPU build) every cache state means none, as cold does."""
    program = programs.get(target.program)
    if "mega" not in exp.cache or program.caches.artifacts:
        return
    if any(program.caches.cached(target.device, None if e == "eager" else e)
           for e in target.exec or ("eager",)):
        raise InputError(f"experiments.{name}.cache: 'mega' (the cache folders emptied, then "
                         f"filled from the artifacts a priming process saved) but "
                         f"targets[{index}] is {program.name} on {target.device}, whose cache "
                         "has no artifacts to save; give it its own experiment")


@dataclass(frozen=True)
class _Point:
    """What an axis's values depend on: the experiments file, the experiment, the target and
    the machine's cores."""

    config: ExperimentsFile
    exp: Experiment
    target: Target
    cores: int
    processes: int  # the target's planned processes (its own stopping target's max)


# An axis's values at a point, given the axes chosen outside it: parameter assignments (one
# axis may set others with it: a cache series sets process, repeat, cache and cache_action)
Expander = Callable[[_Point, dict[str, Any]], Iterable[dict[str, Any]]]


def _sweep(point: _Point, left: tuple[axes.Axis, ...],
           chosen: dict[str, Any]) -> Iterator[dict[str, Any]]:
    """Every assignment of the axes `left`, the first outermost."""
    if not left:
        yield chosen
        return
    for part in _expander(left[0])(point, chosen):
        yield from _sweep(point, left[1:], {**chosen, **part})


def _expander(axis: axes.Axis) -> Expander:
    """The plan's own rule for a built-in axis; any other sweeps its experiments-file key."""
    return _EXPANDERS.get(axis.name) or (
        lambda p, _chosen: [{axis.name: v} for v in axes.from_file(axis, p.target, p.exp)])


def _caches(p: _Point, chosen: dict[str, Any]) -> list[dict[str, Any]]:
    # only devices (and exec modes) with an on-disk cache get a cache sweep; elsewhere it
    # means nothing
    cached = programs.get(p.target.program).caches.cached(p.target.device, chosen.get("exec"))
    caches = [CacheState(c) for c in p.exp.cache] if cached else [CacheState.NONE]
    return [{"cache": state} for state in dict.fromkeys(caches)]


def _series(p: _Point, chosen: dict[str, Any]) -> Iterator[dict[str, Any]]:
    for repeat, process, label, action in _cache_series(chosen["cache"],
                                                        p.processes, p.exp.repeat):
        yield {"repeat": repeat, "process": process, "cache": label, "cache_action": action}


def _set_outside(_p: _Point, _chosen: dict[str, Any]) -> list[dict[str, Any]]:
    return [{}]  # one value, set elsewhere


_EXPANDERS: dict[str, Expander] = {
    "shape": lambda p, _c: [{"shape": s} for s in p.exp.shapes or (p.config.defaults.shape,)],
    "threads": lambda p, _c: [{"threads": t} for t in _threads(p.target, p.exp, p.cores)],
    # 'eager' is the default: no `--exec`, and the run id it always had
    "exec": lambda p, _c: [{"exec": None if e == "eager" else e}
                           for e in dict.fromkeys(p.target.exec or ("eager",))],
    "cache": _caches,
    "warmup": lambda p, _c: [{"warmup": w} for w in (p.exp.warmup if p.exp.mode == "warm"
                                                      else (None,))],
    "process": _series,  # with repeat, the cache label and the action of a cache series
    "repeat": _set_outside,  # by the series
    "precision": lambda p, _c: [{"precision": _precision(p.target)}],
    "variant": _set_outside,  # a variant is a pass over every target (its env merged)
    "profile": _set_outside,  # a measured run's twins (_profile_runs)
}


def _profilers(target: Target, exp: Experiment) -> tuple[str, ...]:
    """The profilers a target's runs get a profile run under (the target's list wins)."""
    return exp.profile if target.profile is None else target.profile


def _profile_runs(run: RunDef, profilers: tuple[str, ...], reason: str | None,
                  caps: dict[str, str | None], expect: bool,
                  rule: StoppingTarget | None, scope: str) -> Iterator[PlannedRun]:
    """Right after a measured mm run on CUDA, the same run under each profiler: a new run id
    (the `profile` marker is hashed), the measured run's id unchanged. Skipped where the
    measured run is, or where the profiler is missing (`ncu` capability)."""
    if run.mode != "mm" or run.device != "cuda":
        return
    for profiler in profilers:
        # every profiler of a profile run is a variant of ncu: its capability is 'ncu'
        yield PlannedRun(replace(run, profile=profiler), reason or caps.get("ncu"), expect,
                         rule=rule, rule_scope=scope)


def builds_needed(config: ExperimentsFile, planned: list[PlannedRun]) -> dict[str, Build]:
    """The builds the runnable part of the plan uses, by name, in first-use order."""
    names = [p.run.build for p in planned if p.run.build and p.skip_reason is None]
    return {name: config.builds[name] for name in dict.fromkeys(names) if name}
