"""Where a sweep's results folder may not be: inside a cache folder a planned run deletes or fills.

A cold run removes burn's cache folder (`bench_rust/target/environment`, run/cache.py) and a
warm run's priming fills it; a results folder inside it (`--results
bench_rust/target/environment/res`) would be deleted by the first cold run, store and all, and
the sweep would still report its runs as done. So before the sweep starts, every planned run
with a cache action is asked which folder it would touch, and a results folder inside one of
them (or that folder itself; compared resolved, so a symlink on the way is no way round it) is
refused in one line. A results folder that merely *contains* a cache folder (`--results ~`)
loses nothing when the cache goes and is left alone. `cache.check_removable` refuses, as a
second guard, to remove any folder that holds a results store.
"""

from __future__ import annotations

import os
from pathlib import Path

from orchestrator import programs
from orchestrator.errors import CacheSafetyError, InputError
from orchestrator.experiments.plan import PlannedRun
from orchestrator.records import CacheAction
from orchestrator.run.cache import cache_home
from orchestrator.run.runner import program_cwd


def caches_touched(planned: list[PlannedRun],
                   project: Path) -> dict[Path, tuple[str, str, str]]:
    """Resolved cache folder -> what the first run touching it does to it, that run, and
    whose cache it is (its program's title)."""
    found: dict[Path, tuple[str, str, str]] = {}
    for p in planned:
        if p.skip_reason is not None or p.run.cache_action == CacheAction.NONE:
            continue
        try:
            folder = cache_home(p.run, project, program_cwd(p.run, project))[0]
        except CacheSafetyError:
            continue  # no cache to touch: the run itself fails with the reason
        verb = "deletes" if p.run.cache_action == CacheAction.DELETE else "fills"
        found.setdefault(Path(os.path.realpath(folder)),
                         (verb, p.run.describe(), programs.get(p.run.program).title))
    return found


def refuse_results_in_cache(results: Path, planned: list[PlannedRun], project: Path) -> None:
    """InputError when the results folder lies in (or is) a cache folder a run would touch."""
    where = Path(os.path.realpath(results))
    for cache, (verb, run, owner) in caches_touched(planned, project).items():
        if where == cache or cache in where.parents:
            raise InputError(f"--results {results} is inside {owner}'s cache folder {cache}, "
                             f"which a planned run {verb} ({run}); choose a results folder "
                             "outside it")
