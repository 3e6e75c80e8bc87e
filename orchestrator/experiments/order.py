"""Interleaved, seeded order of an experiment's runs (`defaults.order: {interleave, seed}`).

Running all processes of target A before all of B turns a drifting machine into differences
between them (Duplyakin et al., ATC '23). With `interleave: true` the processes of an
experiment's targets run in rounds (Abedi & Brecht's randomized multiple interleaved trials):
round k holds the k-th process of every series (a target at one shape, thread count and
warm-up), each round in an order shuffled from the seed, the experiment's name and the round.
The seed is part of the experiments file, whose text the store records for every start: the
same file gives the same order, and a resume replays it (finished runs are skipped in place).

What stays together, so that every constraint of the file order still holds:
- a cache series (cold: its processes after a deleted cubecl cache, repeats included; warm:
  its priming first process and the warm ones after it) is one unit, placed whole in the first
  round: a cold run deletes the cubecl folder every burn build shares, so nothing may run
  between a warm series' priming and its warm processes, and nothing does. In an experiment
  without a cold run (`cache: [warm]`, the chapter's `methods`) nothing deletes a cache: its
  warm series' processes take their rounds (the first, primed, in round 0);
- a profile run stays right after its measured run;
- builds are made before any run (the sweep's own order): they never interleave.
Experiments keep their file order; only the runs inside one experiment are interleaved.
"""

from __future__ import annotations

import random
from dataclasses import replace
from typing import TYPE_CHECKING

from orchestrator.records import CacheAction, CacheState

if TYPE_CHECKING:  # plan.py calls this module: the type only, no import cycle
    from orchestrator.experiments.plan import PlannedRun

Unit = list["PlannedRun"]


def _units(runs: list[PlannedRun]) -> list[tuple[int, Unit]]:
    """(round, unit): a process with its profile runs, or a whole cache series in round 0.
    Where the experiment has no cold run, nothing in it empties a cache: a warm series' later
    processes then take their rounds like any other (its first, with the priming, in round
    0), so a stopping target's rounds hold every series alike."""
    units: list[tuple[int, Unit]] = []
    series: dict[tuple[object, ...], Unit] = {}
    # a mega series empties the cache folder too (then loads its blob): it counts as cold here
    no_cold = all(p.run.cache not in (CacheState.COLD, CacheState.MEGA) for p in runs)
    for planned in runs:
        run = planned.run
        if run.profile is not None and units:  # a profile run: after its measured run
            units[-1][1].append(planned)
            continue
        if run.cache == CacheState.NONE or (no_cold and run.cache == CacheState.WARM):
            units.append((run.process - 1, [planned]))
            continue
        key = (*_series(planned),)
        if key not in series:
            series[key] = []
            units.append((0, series[key]))
        series[key].append(planned)
    return units


def _series(planned: PlannedRun) -> tuple[object, ...]:
    """What one cache series shares: its definition but the process, the cache label and
    action (cold, then warm) and the repeat (each repeat a full series of its own, kept in
    one unit with the others: they share the series' caches in turn)."""
    run = replace(planned.run, process=1, cache=CacheState.NONE,
                  cache_action=CacheAction.NONE, repeat=1)
    return (run.run_id,)


def interleave(runs: list[PlannedRun], seed: int, experiment: str) -> list[PlannedRun]:
    """One experiment's runs in seeded rounds (module docstring)."""
    units = _units(runs)
    rounds = max((r for r, _ in units), default=-1) + 1
    out: list[PlannedRun] = []
    for k in range(rounds):
        mine = [u for r, u in units if r == k]
        random.Random(f"{seed}:{experiment}:{k}").shuffle(mine)
        for unit in mine:
            out.extend(unit)
    return out
