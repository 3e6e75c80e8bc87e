"""A sweep: plan, build, run everything in order, record each run the moment it ends.

A failed build or run is a data row, not an abort (asv's model); Ctrl-C or SIGTERM stops after
killing the running program, with every finished run saved, and `run` again resumes. The
orchestrator's own work (parsing, writing, drawing progress) happens only between runs.
"""

from __future__ import annotations

import contextlib
import json
import sys
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path

from rich.console import Console
from rich.text import Text

from orchestrator import programs
from orchestrator.data import old_proofs
from orchestrator.data.damage import Damage
from orchestrator.data.damage import run_problem as damage_problem
from orchestrator.data.parse import parse_text
from orchestrator.data.store import Store
from orchestrator.errors import CacheSafetyError, InputError, StoreError
from orchestrator.experiments import config as config_mod
from orchestrator.experiments.plan import PlannedRun, builds_needed, expand
from orchestrator.records import (
    BuildResult,
    CacheAction,
    CacheState,
    Context,
    ParseResult,
    Role,
    RunDef,
    RunRecord,
    Status,
    classify,
)
from orchestrator.run import driver_cache, leftovers, profile, results_place, resume, stopping
from orchestrator.run.background import BackgroundBuilds
from orchestrator.run.cache import CacheContents, cache_home, config_override
from orchestrator.run.detect import ARCHITECTURES, OPERATING_SYSTEMS, assumed
from orchestrator.run.machine import capabilities, cpu_count, host_facts, hung_note, to_probe
from orchestrator.run.progress import Progress
from orchestrator.run.runner import RunContext, execute, program_cwd, wait_quiet

PartialReport = Callable[[str, list[str]], None]  # (sweep id, builds still building)


class Interrupted(Exception):
    """Ctrl-C or SIGTERM during a sweep; everything finished is saved."""

    exit_code = 130


@dataclass
class SweepSummary:
    sweep_id: str
    resumed: bool
    counts: Counter[str] = field(default_factory=Counter)
    failures: list[str] = field(default_factory=list)

    @property
    def exit_code(self) -> int:
        # runs that failed before a resume count too: the exit code describes the sweep, not
        # where it happened to be interrupted
        return 1 if self.counts[Status.FAILED] or self.counts["failed earlier"] else 0


def parse_record(rec: RunRecord) -> ParseResult:
    run = rec.run
    context = Context(framework=run.program, threads=None, cache=run.cache,
                      process=run.process, warmup=run.warmup)
    return parse_text(rec.stdout.decode("utf-8", "replace"), context)


def plan(config_path: Path, only: list[str] | None = None, python: str = sys.executable,
         assume: list[str] | None = None) -> tuple[config_mod.ExperimentsFile,
                                                   list[PlannedRun]]:
    """The runs of the selected experiments on this machine; no results folder needed.

    `assume` pretends capabilities are present (to build for another machine); naming an OS
    or an architecture plans for another machine, with none of this one's (detect.assumed)."""
    config = config_mod.load(config_path)
    unknown = [name for name in only or [] if name not in config.experiments]
    if unknown:
        raise InputError(f"--only: no experiment named {', '.join(unknown)} in "
                         f"{config_path} (known: {', '.join(config.experiments)})")
    here = capabilities(python)
    caps = assumed(here, assume or [])
    # capabilities added to this machine's (not another machine described): label the runs
    # that need one this machine lacks
    other = set(assume or []) & {*OPERATING_SYSTEMS, *ARCHITECTURES}
    return config, expand(config, caps, cpu_count(), only, None if other else here)


def _priming_state(planned: PlannedRun, project: Path,
                   driver_root: Path | None) -> CacheState | None:
    """The state a warm run's priming run starts in, or None when no priming is needed: cold
    when cubecl's folder is empty; warm when only the shared warm driver cache is (a cold
    series filled cubecl's, in its own driver cache): warm means both caches warm. A program
    whose folder holds many runs' entries (torch.compile's) primes every warm series. A mega
    series is primed by a cold run of its own definition, which saves the artifacts its first
    process loads (`_priming_run`)."""
    run = planned.run
    if run.cache == CacheState.MEGA and run.cache_action == CacheAction.DELETE:
        return CacheState.COLD if programs.get(run.program).caches.artifacts else None
    if run.cache_action != CacheAction.ENSURE:
        return None
    cwd = program_cwd(run, project)
    try:
        cache = cache_home(run, project, cwd)[0]
    except CacheSafetyError:
        return None  # the measured run fails with the reason; priming would be wasted
    if config_override(cwd, programs.get(run.program).caches.overrides) is not None:
        return None
    if CacheContents.of(cache).files == 0:
        return CacheState.COLD
    program = programs.get(run.program)
    if program.caches.prime_warm:  # one folder for many runs' entries: not empty is not primed
        return CacheState.WARM
    if driver_root is not None and run.device in program.caches.driver_devices:
        warm, _kind = driver_cache.folder(driver_root, None, cached=True)
        if CacheContents.of(warm).files == 0:
            return CacheState.WARM
    return None


def _priming_run(run: RunDef, state: CacheState) -> RunDef:
    """A warm series' priming run starts from the folder as it is (`state`: what it holds);
    a mega series' empties it, as a cold series' first process does, and so saves the
    artifacts of a cold compile (the program's argv says where)."""
    if run.cache == CacheState.MEGA:
        return replace(run, cache=CacheState.COLD, cache_action=CacheAction.DELETE)
    return replace(run, cache=state, cache_action=CacheAction.NONE)


class Sweep:
    def __init__(self, project: Path, results: Path, python: str = sys.executable,
                 show: bool = True, on_partial: PartialReport | None = None,
                 registry: programs.Registry | None = None) -> None:
        self.project = project
        self.registry = registry  # whose programs and axes it plans and runs (None: active)
        # while builds go on and runs have finished: a first report (cli writes it)
        self.on_partial = on_partial
        self.store = Store(results)
        self.python = python
        self.progress = Progress(show)

    def plan(self, config_path: Path, only: list[str] | None,
             assume: list[str] | None = None) -> tuple[config_mod.ExperimentsFile,
                                                       list[PlannedRun]]:
        """The module's `plan` with this sweep's Python."""
        with programs.use(self.registry):
            return plan(config_path, only, self.python, assume)

    def run(self, config_path: Path, only: list[str] | None = None, new: bool = False,
            retry_failed: bool = False) -> SweepSummary:
        with programs.use(self.registry):
            return self._run(config_path, only, new, retry_failed)

    def _run(self, config_path: Path, only: list[str] | None, new: bool,
             retry_failed: bool) -> SweepSummary:
        config, planned = self.plan(config_path, only)
        results_place.refuse_results_in_cache(self.store.folder, planned, self.project)
        # a run's orphans become ours (Linux) while the sweep runs, and only then
        with self.store.writing() as store, leftovers.subreaper():
            # the folder's lock is ours: what its ledger names is a dead orchestrator's program
            found = leftovers.end_leftovers(store.folder)
            # the facts of the programs it runs (a resume: those its sweep lacks)
            recorded = resume.recorded_host(store, new)
            used = to_probe({p.run.program for p in planned}, recorded)
            facts = host_facts(self.project, self.python, used)
            if (slow := hung_note(facts)) is not None:
                self._warn(slow)
            # sweeps a dead orchestrator left running, the state resumed, an edited file
            sweep_id, resumed = resume.begin(store, config_path, config, planned, facts,
                                             sys.argv, new, self._warn, recorded=recorded)
            if found or resumed:  # a resume says what it found
                self.progress.note(found or "no leftover processes of an earlier sweep are "
                                   "running")
            summary = SweepSummary(sweep_id, resumed)
            try:
                self._run_all(config, planned, summary, retry_failed)
            except KeyboardInterrupt:
                store.end_sweep(sweep_id, "interrupted")
                # counted in the store: the signal may come just after a run was written
                saved = len(store.finished_runs(sweep_id))
                raise Interrupted(f"interrupted: {saved} finished runs of sweep {sweep_id} "
                                  "saved; run the same command to resume") from None
            except Exception:
                with contextlib.suppress(StoreError):  # a full disk cannot record it either
                    store.end_sweep(sweep_id, "stopped")
                raise
            store.end_sweep(sweep_id, "complete")
        return summary

    @staticmethod
    def _warn(text: str) -> None:
        """What the sweep found as it began: said even with --quiet (not progress)."""
        Console(stderr=True, highlight=False, soft_wrap=True).print(Text(text, style="yellow"))

    def _run_all(self, config: config_mod.ExperimentsFile, planned: list[PlannedRun],
                 summary: SweepSummary, retry_failed: bool) -> None:
        store, sweep_id = self.store, summary.sweep_id
        finished = store.finished_runs(sweep_id)
        todo = [p for p in planned if p.run.run_id not in finished or
                (retry_failed and finished[p.run.run_id] == Status.FAILED)]
        summary.counts["already done"] = len(planned) - len(todo)
        redo = {p.run.run_id for p in todo}
        summary.counts["failed earlier"] = sum(
            1 for p in planned if p.run.run_id not in redo and not p.expect_failure
            and finished[p.run.run_id] == Status.FAILED)
        runnable = [p for p in todo if p.skip_reason is None]
        # the builds start first (each by its build system), in the background; the runs that
        # need no build (or a finished one) go on meanwhile
        background = BackgroundBuilds(programs.builders(self.project),
                                      builds_needed(config, runnable))
        builds: dict[str, BuildResult] = {}
        # absolute: programs start in other folders and are told to write there
        scratch = (store.folder / "scratch").absolute()
        ctx = RunContext(self.project, self.python, scratch, {},
                         (store.folder / "driver-cache").absolute(), store.folder.absolute())
        self.progress.start(len(todo))
        for name, build in background.builds.items():
            self.progress.note(f"build {name} ({' '.join([build.crate, *build.features])}) "
                               "in the background")
        stops = stopping.Stopping(store, sweep_id, config, planned)
        try:
            background.start()
            self._run_staged(todo, background, builds, ctx, config, summary, stops)
            stops.finish(planned)
        finally:
            background.stop()  # an interrupt or an error: cargo is ended, group and all
            self.progress.close()  # an interrupt or a write error must not leave the bar up
        self.progress.stop(summary.counts)

    def _run_staged(self, todo: list[PlannedRun], background: BackgroundBuilds,
                    builds: dict[str, BuildResult], ctx: RunContext,
                    config: config_mod.ExperimentsFile, summary: SweepSummary,
                    stops: stopping.Stopping) -> None:
        """Each run in plan order as soon as its build is there; while none is ready, the
        partial report (`on_partial`) once per new batch of runs, then wait for cargo. A run
        a stopping target no longer needs is left out with the rest of its series."""
        pending, measured_since_report = list(todo), False
        while pending:
            self._take_builds(background, builds, ctx, summary.sweep_id)
            ready = next((p for i, p in enumerate(pending) if _ready(p, pending[:i], builds)),
                         None)
            if ready is None:
                if measured_since_report and self.on_partial is not None:
                    self.on_partial(summary.sweep_id, background.left())
                measured_since_report = False
                background.wait()
                continue
            pending.remove(ready)
            left = len(pending)
            why = stops.not_needed(ready, pending)
            if why is not None:
                summary.counts["not needed"] += 1 + left - len(pending)
                self.progress.note(why)
                continue
            # measured with the builds stopped: nothing of the sweep's own beside a run
            with background.paused() if ready.skip_reason is None else \
                    contextlib.nullcontext([]) as waiting:
                rec = self._one(ready, builds, ctx, config, summary.sweep_id, waiting)
            measured_since_report = measured_since_report or rec.status != Status.SKIPPED
            self._count(rec, summary)

    def _take_builds(self, background: BackgroundBuilds, builds: dict[str, BuildResult],
                     ctx: RunContext, sweep_id: str) -> None:
        """Record the builds finished since the last look (the store is this thread's)."""
        for result in background.take():
            self.store.record_build(sweep_id, result)
            self.progress.build_done(result)
            builds[result.name] = result
            if result.binary is not None:
                ctx.binaries[result.name] = result.binary

    @staticmethod
    def _count(rec: RunRecord, summary: SweepSummary) -> None:
        status: str = rec.status
        if status == Status.FAILED and rec.expect_failure:
            status = "failed (expected)"
        summary.counts[status] += 1
        if status == Status.FAILED:
            summary.failures.append(f"{rec.run.describe()}: {rec.reason}")

    def _one(self, planned: PlannedRun, builds: dict[str, BuildResult], ctx: RunContext,
             config: config_mod.ExperimentsFile, sweep_id: str,
             paused: list[str] | None = None) -> RunRecord:
        run = planned.run
        self.progress.begin(run)
        build = builds.get(run.build or "")
        role = Role.PROFILE if run.profile else Role.MEASURE
        if planned.skip_reason is not None:
            rec = RunRecord(run=run, role=role, status=Status.SKIPPED,
                            reason=planned.skip_reason)
        elif build is not None and build.status != Status.OK:
            first = build.error.splitlines()[0] if build.error else "no error text"
            rec = RunRecord(run=run, role=role, status=Status.FAILED,
                            reason=f"build {build.name} failed: {first}")
        else:
            state = _priming_state(planned, self.project, ctx.driver_cache) \
                if role == Role.MEASURE else None
            if state is not None:  # labelled with the state it starts in
                priming = _priming_run(run, state)
                self._record(self._measure(priming, ctx, config, Role.PRIMING, paused=paused),
                             sweep_id)
            rec = self._measure(run, ctx, config, role, planned.cold_series, paused)
        rec.expect_failure = planned.expect_failure
        self._record(rec, sweep_id)
        return rec

    def _measure(self, run: RunDef, ctx: RunContext, config: config_mod.ExperimentsFile,
                 role: Role, cold_series: str | None = None,
                 paused: list[str] | None = None) -> RunRecord:
        quiet = config.defaults.quiet
        gate = wait_quiet(quiet.max_load1, quiet.max_wait_s, quiet.poll_s)
        if paused:  # the load average still counts them: said beside the load warning
            gate["builds_paused"] = list(paused)
        return execute(run, ctx, role=role, gate=gate, cold_series=cold_series)

    def _record(self, rec: RunRecord, sweep_id: str) -> None:
        parsed = parse_record(rec) if rec.stdout else None
        rec.status, rec.reason = classify(rec, parsed)
        if rec.role == Role.PROFILE and rec.outcome is not None:  # ncu's figures, or why not
            parsed = profile.add_figures(rec, parsed)
        self.store.record_run(sweep_id, rec, parsed)
        self.progress.run_done(rec, parsed)


def reparse(results: Path) -> tuple[int, int, Damage]:
    """Read every stored run's raw stdout again with this parser: (runs, figures, the damaged
    run rows left as they are). A folder without a store is refused: nothing is created."""
    store = Store(results)
    if not store.path.is_file():
        raise InputError(f"no results store at {store.path} (nothing to parse again; name the "
                         "results folder of a sweep)")
    runs = figures = 0
    damage = Damage()
    with store.writing():
        rows = store.query("SELECT sweep_id, run_id, role, status, definition_json, stdout, "
                           "stderr FROM runs WHERE length(stdout) > 0")
        for row in rows:
            problem = damage_problem(row)
            if problem is not None:
                damage.add("run", f"sweep {row['sweep_id']} run {row['run_id']}", problem)
                continue
            rec = RunRecord(run=RunDef.from_definition(json.loads(row["definition_json"])),
                            role=Role(row["role"]), status=Status(row["status"]),
                            stdout=row["stdout"])
            # a queued proof an older bench_py said on stderr only: read back (data/old_proofs);
            # the stored raw output stays as it was
            text = rec.stdout.decode("utf-8", "replace")
            read = old_proofs.with_old_proof(text, row["stderr"] if isinstance(
                row["stderr"], bytes) else None)
            if read != text:
                rec.stdout = read.encode()
            parsed = parse_record(rec)
            if rec.role == Role.PROFILE:  # ncu's CSV is read again too (status as recorded)
                rec.artifacts = {a["name"]: a["data"] for a in store.query(
                    "SELECT name, data FROM artifacts WHERE sweep_id=? AND run_id=?",
                    (row["sweep_id"], row["run_id"]))}
                parsed = profile.add_figures(rec, parsed)
            store.replace_parsed(row["sweep_id"], row["run_id"], parsed)
            runs, figures = runs + 1, figures + len(parsed.figures)
    return runs, figures, damage


def _ready(run: PlannedRun, earlier: list[PlannedRun], builds: dict[str, BuildResult]) -> bool:
    """Whether `run` may go now: its build is there (or it needs none), and, for a variant of
    an A/B in one sweep, no earlier run of its experiment is still waiting for a build: a
    variant whose build is still compiling must not let the other's runs overtake it, or the
    rounds (one process of each variant, judged paired by round) would not be the plan's."""
    def waiting(p: PlannedRun) -> bool:
        return p.skip_reason is None and bool(p.run.build) and p.run.build not in builds
    if waiting(run):
        return False
    return not run.run.variant or not any(
        p.run.experiment == run.run.experiment and p.run.variant and waiting(p)
        for p in earlier)
