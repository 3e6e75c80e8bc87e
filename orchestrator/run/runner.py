"""Run one benchmark: explicit environment, chosen folder, cache action, timeout, record.

The process itself is `process.spawn`'s; whether the run failed is `records.classify`'s. A
crash, a non-zero exit, a signal, a timeout, empty, partial or over-long output becomes a failed
record with the stderr tail, never an exception that stops the sweep; so does a run that cannot
start (a cache file that cannot be removed, a cache another orchestrator holds, no scratch
folder, an environment the OS refuses), caught in one place (`execute`), and an accuracy array
larger than the run's shape allows (run/artifacts).
"""

from __future__ import annotations

import os
import shutil
import time
from contextlib import ExitStack
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import Any

from orchestrator import programs
from orchestrator.errors import CacheSafetyError
from orchestrator.programs import Paths
from orchestrator.records import (
    CacheAction,
    CacheState,
    Role,
    RunDef,
    RunRecord,
    Status,
    classify,
)
from orchestrator.run import (
    artifacts,
    cache_lock,
    cache_record,
    cpu_state,
    driver_cache,
    gpu_state,
    profile,
)
from orchestrator.run.cache import cache_home, check_removable, config_override, remove_cache
from orchestrator.run.machine import Load
from orchestrator.run.process import spawn

# What a measured process inherits from the orchestrator's environment; everything else is set
# explicitly per run, so nothing leaks from one run (or from the user's shell) into the next.
# Never CUDA_CACHE_PATH/CUDA_CACHE_DISABLE: each run gets its own driver cache (driver_cache).
PASS_THROUGH = ("PATH", "HOME", "USER", "LOGNAME", "LANG", "LC_ALL", "LC_CTYPE", "TMPDIR",
                "TERM", "LD_LIBRARY_PATH", "DYLD_LIBRARY_PATH", "CUDA_PATH", "CUDA_HOME",
                "CUDA_VISIBLE_DEVICES", "NVIDIA_VISIBLE_DEVICES", "SYSTEMROOT")
PROFILE_CAP = 256 * 2**20  # bytes of ncu's CSV read into a profile run's record


@dataclass(frozen=True)
class RunContext:
    project: Path
    python: str
    scratch: Path  # where accuracy runs write their arrays before they go into the store
    binaries: dict[str, Path]  # build name -> binary
    # <results>/driver-cache: the CUDA driver cache folders (run/driver_cache); None: not set
    driver_cache: Path | None = None
    # the results folder: its ledger names the running program (run/leftovers); None: none kept
    ledger: Path | None = None


def program_cwd(run: RunDef, project: Path) -> Path:
    """The folder the run's program starts in (its program decides)."""
    return programs.get(run.program).cwd(run, project)


def program_env(run: RunDef, base: dict[str, str] | None = None) -> dict[str, str]:
    """Only PASS_THROUGH from `base`, the program's thread settings, the run's own env, then
    the variables of the sweep axes its program takes (the point the run's row names)."""
    source = os.environ if base is None else base
    env = {k: source[k] for k in PASS_THROUGH if k in source}
    if run.threads is not None:
        env.update(programs.get(run.program).thread_env(run.threads))
    env["PYTHONUNBUFFERED"] = "1"
    env.update(dict(run.env))
    env.update(programs.get(run.program).axis_env(run))
    return env


def program_argv(run: RunDef, ctx: RunContext, out_dir: Path | None) -> list[str]:
    paths = Paths(ctx.project, ctx.python, ctx.binaries)
    return programs.get(run.program).argv(run, paths, out_dir)


def wait_quiet(max_load1: float | None, max_wait_s: float, poll_s: float) -> dict[str, Any]:
    """Wait until the 1-minute load is under `max_load1` (bounded); record what happened."""
    start = time.monotonic()
    load = Load.now()
    while max_load1 is not None and load.load1 > max_load1 and \
            time.monotonic() - start < max_wait_s:
        time.sleep(poll_s)
        load = Load.now()
    loaded = max_load1 is not None and load.load1 > max_load1
    return {"max_load1": max_load1, "waited_s": round(time.monotonic() - start, 3),
            "load1": load.load1, "went_ahead_loaded": loaded}


def prepare_cache(run: RunDef, project: Path, held: ExitStack | None = None,
                  results: Path | None = None) -> dict[str, Any] | None:
    """Apply the run's cache action; the record says what was removed. Raises CacheSafetyError
    (and OSError: a file in the cache that cannot be removed). `held`: where the cache folder's
    machine-wide lock (run/cache_lock) is entered, to be held until the run's record is taken."""
    program = programs.get(run.program)
    cached = program.caches.cached(run.device, run.params.get("exec"))
    if run.cache == CacheState.NONE and run.mode == "accuracy" and cached:
        return _look_only(run, project, held, results)
    if run.cache == CacheState.NONE or not cached:
        return None
    cwd = program_cwd(run, project)
    override = config_override(cwd, programs.get(run.program).caches.overrides)
    if override is not None:
        raise CacheSafetyError(f"{override} may move {programs.get(run.program).title}'s cache; "
                               "remove it for cache sweeps")
    path, rust, parts = cache_home(run, project, cwd)
    if run.cache_action == CacheAction.DELETE:
        check_removable(path, rust, parts)  # refused before the lock, whose key is the real path
    if held is not None:
        held.enter_context(cache_lock.held(path, results,
                                           owner=programs.get(run.program).title))
    info: dict[str, Any] = {"path": str(path), "action": run.cache_action}
    if run.cache_action == CacheAction.DELETE:
        info["removed"] = asdict(remove_cache(path, rust, parts,
                                              programs.get(run.program).title))
    return cache_record.begin(run, path, info)


def _look_only(run: RunDef, project: Path, held: ExitStack | None,
               results: Path | None) -> dict[str, Any]:
    """An accuracy run on an autotuned device: the cache is left as it is (no cache action),
    but its store is looked at before and after, so the record names the kernel autotune
    chose for the matmul that computed the arrays (the accuracy table's kernel)."""
    cwd = program_cwd(run, project)
    path, _rust, _parts = cache_home(run, project, cwd)
    if held is not None:
        held.enter_context(cache_lock.held(path, results, owner=programs.get(run.program).title))
    return cache_record.begin(run, path, {"path": str(path), "action": CacheAction.NONE})


def _driver_cache(run: RunDef, ctx: RunContext, cold_series: str | None) -> dict[str, Any] | None:
    """The run's own CUDA driver cache folder (a cold series' first process empties it)."""
    program = programs.get(run.program)
    if ctx.driver_cache is None or run.device not in program.caches.driver_devices:
        return None
    chosen = driver_cache.named(dict(run.env))
    if chosen is not None:  # the experiment's own folder: recorded as it is, ours not made
        return chosen
    first = run.cache_action == CacheAction.DELETE
    series = run.run_id if first else cold_series
    return driver_cache.prepare(ctx.driver_cache, series, first,
                                program.caches.cached(run.device, run.params.get("exec")),
                                (program.name, program.caches.driver_why))


def _fresh_dir(path: Path) -> str | None:
    """Empty `path` for a program's arrays; why not, when the results disk refuses or the
    folder leads elsewhere (emptying through a symlink would delete what it points to)."""
    for link in (path, path.parent):
        if link.is_symlink():
            return f"refusing scratch folder {path}: {link} is a symlink"
    try:
        shutil.rmtree(path, ignore_errors=True)
        path.mkdir(parents=True)
    except OSError as exc:
        return f"cannot make scratch folder {path}: {exc.strerror}"
    return None


def _gpu_snapshot(run: RunDef, env: dict[str, str]) -> dict[str, Any]:
    """NVML's view of the run's GPU, for runs on an NVIDIA device; else why not."""
    if "cuda" not in programs.get(run.program).device_needs.get(run.device, ()):
        return {"reason": f"not an NVIDIA GPU run (device {run.device})"}
    return gpu_state.snapshot(env)


def execute(run: RunDef, ctx: RunContext, role: Role = Role.MEASURE,
            gate: dict[str, Any] | None = None, cold_series: str | None = None) -> RunRecord:
    """Run one program to the end and return its record (never raises for program faults).

    Every step before the program starts that can fail (the cache action and lock, the driver
    cache, the scratch folder) fails here, in one place, as a failed run with the reason, and
    the sweep goes on. `cold_series`: the first process's run id of its cold series."""
    record = RunRecord(run=run, role=role, gate=gate, cwd=str(program_cwd(run, ctx.project)))
    with ExitStack() as held:  # the cache lock, from the cache action to the record
        try:
            out_dir = _prepare(record, ctx, cold_series, held)
        except (CacheSafetyError, OSError) as exc:
            record.status, record.reason = Status.FAILED, _cannot_start(exc)
            return record
        _run_program(record, ctx, out_dir)
    if out_dir is not None:
        _collect(record, out_dir)
        shutil.rmtree(out_dir, ignore_errors=True)
    # what the process did; its figures are checked once the sweep has parsed them
    record.status, record.reason = classify(record)
    return record


def _cannot_start(exc: Exception) -> str:
    if isinstance(exc, OSError) and exc.strerror:
        where = f" {exc.filename}" if exc.filename else ""
        return f"could not start the run:{where}: {exc.strerror}"
    return str(exc)


def _prepare(record: RunRecord, ctx: RunContext, cold_series: str | None,
             held: ExitStack) -> Path | None:
    """Cache action, driver cache, scratch folder, argv and environment; the scratch folder."""
    run = record.run
    primed = record.role in (Role.MEASURE, Role.PRIMING)  # a priming run is recorded as cold
    if primed:
        record.cache = prepare_cache(run, ctx.project, held, ctx.ledger)
    elif record.role == Role.PROFILE:  # recorded, never emptied: as its measured run left it
        record.cache = prepare_cache(replace(run, cache_action=CacheAction.NONE), ctx.project,
                                     held, ctx.ledger)
    else:
        record.cache = None
    driver = _driver_cache(run, ctx, cold_series)
    out_dir = ctx.scratch / record.run_id if run.mode == "accuracy" or run.profile else None
    problem = _fresh_dir(out_dir) if out_dir is not None else None
    if problem is not None:
        raise CacheSafetyError(problem)
    if run.profile and out_dir is not None:  # the program under ncu, its CSV into out_dir
        record.argv = profile.argv(program_argv(run, ctx, None), out_dir / profile.ARTIFACT,
                                   run.profile)
    else:
        record.argv = program_argv(run, ctx, out_dir)
    record.env = program_env(run)
    if driver is not None:  # an experiment's own CUDA_CACHE_PATH wins, and is flagged
        if driver["path"] is not None:
            record.env.setdefault("CUDA_CACHE_PATH", driver["path"])
        record.cache = {**(record.cache or {}), "driver_cache": driver}
    return out_dir


def _run_program(record: RunRecord, ctx: RunContext, out_dir: Path | None) -> None:
    run = record.run
    # snapshots right before the spawn and right after the exit; while the program runs only
    # the SM-clock sampler (a thread, one NVML call per 200 ms, on NVIDIA runs)
    record.state = {"cpu_before": cpu_state.read(), "gpu_before": _gpu_snapshot(run, record.env)}
    record.load_before = asdict(Load.now())
    # the SM clock while it runs (one NVML read per 200 ms in a thread): NVIDIA runs only
    sampler = gpu_state.Sampler(record.env) if "gpu" in record.state["gpu_before"] else None
    if sampler is not None:
        sampler.start()
    record.started_at = time.time()
    record.outcome = outcome = spawn(record.argv, record.env, Path(record.cwd), run.timeout_s,
                                     ctx.ledger)
    record.ended_at = time.time()
    if sampler is not None:
        record.state["gpu_during"] = sampler.stop()
    gpu_after = _gpu_snapshot(run, record.env)
    record.load_after = asdict(Load.now())
    record.state.update(gpu_after=gpu_after, cpu_after=cpu_state.read(),
                        gpu_delta=gpu_state.delta(record.state["gpu_before"], gpu_after))
    if outcome.left_running:  # not a failure: the program's own daemon, ended (leftovers)
        record.state["left_running"] = list(outcome.left_running)
    if outcome.stderr_truncated_at is not None:  # its tail is lost, no figure is
        record.state["stderr_cut_at"] = outcome.stderr_truncated_at
    record.wall_s, record.returncode = outcome.wall_s, outcome.returncode
    record.stdout, record.stderr = outcome.stdout, outcome.stderr
    if record.cache is not None:
        try:
            if "driver_cache" in record.cache:
                driver_cache.finish(record.cache["driver_cache"])
            cache_record.finish(run, record.cache)
        except OSError as exc:  # a cache folder the program left unreadable: said, not raised
            record.cache["error"] = f"cannot read the cache after the run: {exc}"


def _collect(record: RunRecord, out_dir: Path) -> None:
    """Take the arrays (bounded by the run's shape: `refused` says why not) and the profiler's
    CSV into the record."""
    record.artifacts, record.refused = artifacts.read_arrays(out_dir, record.run.shape)
    if record.run.profile:
        csv = out_dir / profile.ARTIFACT
        data, problem = artifacts.read_plain(csv, PROFILE_CAP)
        if problem:
            record.refused = f"ncu's CSV {problem}"
        elif data is not None:
            record.artifacts[profile.ARTIFACT] = data
