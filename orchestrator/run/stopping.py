"""Stop at a stopping target (`precision_target:` of an experiment): the rule and its record.

A series (one target at one shape and thread count, planned with max_processes processes, run
in interleaved rounds: experiments/order.py) is looked at before each of its processes from the
pilot on. Its steady-state figures (each method's median of a mm run; first calls are one value
per process and another question) get their 95% interval from the processes measured so far, by
the report's own method (stats/intervals.estimate: one home, a leaf every layer may import).
The series stops when every figure has a reason:

- `target met`: half-width ≤ target with at least min_processes;
- `noise floor`: the interval stopped shrinking (no narrower than NOISE_ROUNDS looks ago), or
  the spread seen so far could not give ±target even at max_processes (`reachable`);
- `time budget`: the runs under the rule took budget_s (their wall time, as stored: a resumed
  sweep counts what it ran before), or one more round would pass it; the runs under the rule
  are the experiment's (its own target) or one target's (a target's own `precision_target`);
- `max processes`: every planned process ran;
- `no figure`: its runs measured nothing steady (failed or skipped).

The rule looks at precision, never at a difference (stopping when a change looks real would
inflate false verdicts), once per round, and every look is a function of the stored figures
only, so a resumed sweep takes the same decisions and continues where it was. A stopped
series' later runs leave the plan (Store.drop_planned); each figure's reason, half-width and
processes are in the store's `stops` (the dataset's `stop_reason`, `half_width`).

Repetitions per process are not chosen here from Kalibera and Jones' r* = ceil(sqrt((c_proc /
c_rep)·σw²/σb²)), on purpose: reps are part of a run's definition (its id), so a resume must
find the same runs, and the chapter fixes its 20; only processes are added. Between-process
spread dominates here (torch cpu 13.4-23.3 ms), where r* says few reps: more processes is the
cure either way.
"""

from __future__ import annotations

import math
import time
from collections.abc import Sequence
from dataclasses import dataclass, replace

import numpy as np

from orchestrator import vocabulary
from orchestrator.data.store import Store
from orchestrator.experiments.config import ExperimentsFile, StoppingTarget
from orchestrator.experiments.plan import PlannedRun
from orchestrator.records import CacheAction, CacheState, RunDef
from orchestrator.run import deciding
from orchestrator.stats import intervals

NOISE_ROUNDS = 3  # no narrower than this many looks ago: the interval stopped shrinking
MET, NOISE, BUDGET, MAX, NONE = ("target met", "noise floor", "time budget", "max processes",
                                 "no figure")
Figure = tuple[str, str]  # (label, method)


def series_of(run: RunDef) -> str:
    """A series' id: the run id of its first process (profile runs belong to their run's)."""
    return run.series_id


@dataclass(frozen=True)
class Look:
    """One figure at one look: its estimate's half-width over p processes."""

    half_width: float | None
    processes: int
    log_sd: float = 0.0


def _values(store: Store, sweep_id: str,
            members: dict[str, int]) -> dict[Figure, list[tuple[int, float, np.ndarray | None]]]:
    """Per figure, (process, median, samples) of the series' measured runs so far. Only the
    series' own runs are read, by their planned ids (`members`: run id -> process; at most
    max_processes of them, no definition decoded: a look at a 6,099-run experiment read and
    decoded every row, 1.97 s), and only runs that ran ok: a failed run's figures (a partial
    line, a zero) never count toward the target."""
    if not members:
        return {}
    marks = ",".join("?" * len(members))
    rows = store.query(
        "SELECT f.run_id, f.label, f.method, f.value, f.line_no FROM figures f JOIN runs r ON "
        "r.sweep_id=f.sweep_id AND r.run_id=f.run_id WHERE f.sweep_id=? AND r.role='measure' "
        f"AND r.status='ok' AND f.stat='median' AND f.run_id IN ({marks})",
        (sweep_id, *members))
    out: dict[Figure, list[tuple[int, float, np.ndarray | None]]] = {}
    steady = set(vocabulary.steady_methods())
    for row in rows:
        if row["method"] not in steady or not row["value"]:
            continue
        samples = [s["value"] for s in store.query(
            "SELECT value FROM samples WHERE sweep_id=? AND run_id=? AND summary_line=? "
            "ORDER BY idx", (sweep_id, row["run_id"], row["line_no"]))]
        out.setdefault((row["label"], row["method"]), []).append(
            (members[row["run_id"]], float(row["value"]),
             np.asarray(samples) if samples else None))
    return out


def looks(points: list[tuple[int, float, np.ndarray | None]],
          first: int) -> list[Look]:
    """The figure's half-width over its first k processes, for every k from `first`."""
    points = sorted(points, key=lambda point: point[0])
    out = []
    for k in range(first, len(points) + 1):
        e = intervals.estimate([v for _, v, _ in points[:k]], [s for _, _, s in points[:k]])
        out.append(Look(None, k) if e is None else Look(e.half_width, k, e.log_sd))
    return out


def reason(history: list[Look], rule: StoppingTarget, planned: int) -> str | None:
    """Why a figure stops now, or None to go on (module docstring)."""
    now = history[-1]
    if now.half_width is not None and now.half_width <= rule.target \
            and now.processes >= rule.min_processes:
        return MET
    if now.processes >= min(planned, rule.max_processes):
        return MAX
    if now.half_width is None:
        return None
    earlier = history[-1 - NOISE_ROUNDS].half_width if len(history) > NOISE_ROUNDS else None
    stuck = earlier is not None and now.half_width >= earlier
    if stuck or not reachable(now.log_sd, rule):
        return NOISE
    return None


def reachable(log_sd: float, rule: StoppingTarget) -> bool:
    """Whether the spread seen so far could give ±target within max_processes: the t
    interval's half-width exp(t(p-1)·sd/√p) − 1 at p = max_processes (the t quantile shrinks
    with p as much as √p does at first: a projection without it stops far too early)."""
    p = rule.max_processes
    return math.expm1(intervals.t_quantile(0.5 + intervals.LEVEL / 2, p - 1) * log_sd
                      / math.sqrt(p)) <= rule.target


class Stopping:
    """The sweep's stopping rule: `allows` before each run, `finish` after the last. Each
    planned run carries its rule (the experiment's or its target's: plan.PlannedRun.rule)
    and the scope whose runs share the rule's time budget."""

    def __init__(self, store: Store, sweep_id: str, config: ExperimentsFile,
                 planned: Sequence[PlannedRun] = ()) -> None:
        self.store, self.sweep_id, self.config = store, sweep_id, config
        self.stopped: set[str] = set()
        # run id -> the budget scope of its rule; a warm series' priming run (stored as its
        # own definition's id + '-prime', in the state it started in) counts with its run
        self.scope: dict[str, str] = {}
        # series id -> its measured runs' ids and processes: what a look reads
        self.members: dict[str, dict[str, int]] = {}
        # run until decided: a group's series, one per variant in the file's order
        self.groups: dict[tuple[object, ...], list[str]] = {}
        for p in planned:
            if p.rule is not None and p.run.profile is None:
                series = series_of(p.run)
                self.members.setdefault(series, {})[p.run.run_id] = p.run.process
                if p.rule.decide and series not in (g := self.groups.setdefault(
                        deciding.group_of(p.run), [])):
                    g.append(series)
        for p in planned:
            if p.rule is None:
                continue
            self.scope[p.run.run_id] = p.rule_scope
            if p.run.cache_action == CacheAction.ENSURE:
                for state in (CacheState.COLD, CacheState.WARM):
                    prime = replace(p.run, cache=state, cache_action=CacheAction.NONE)
                    self.scope[prime.run_id + "-prime"] = p.rule_scope

    def not_needed(self, planned: PlannedRun, pending: list[PlannedRun]) -> str | None:
        """None while this run is needed; else why not: a series that stops here has its
        later runs dropped from `pending` and from the stored plan, its reasons recorded."""
        run, rule = planned.run, planned.rule
        if rule is None or planned.skip_reason is not None:
            return None
        series = series_of(run)
        if run.process <= rule.first_look or run.profile is not None:
            return None
        if rule.decide:
            group = self.groups.get(deciding.group_of(run), [series])
            records = self._decide_group(group, planned, run.process - 1)
        else:
            group = [series]
            records = self._decide(series, planned, run.process - 1)
        if records is None:
            return None
        self.stopped.update(group)
        later = [p for p in [planned, *pending] if series_of(p.run) in group
                 and p.run.process >= run.process]
        for p in later[1:]:
            pending.remove(p)
        self.store.drop_planned(self.sweep_id, {p.run.run_id for p in later})
        self.store.record_stops(self.sweep_id, records)
        reasons = ", ".join(sorted({str(r[4]) for r in records}))
        whose = "its variants' series" if rule.decide else "its series"
        return (f"{run.describe()}: {whose} stopped at {run.process - 1} processes "
                f"({reasons}); {len(later)} runs not needed")

    def finish(self, planned: list[PlannedRun]) -> None:
        """After the sweep: the series that ran every planned process record why too."""
        done: set[str] = set()
        for p in planned:
            series = series_of(p.run)
            if p.rule is None or series in self.stopped or series in done \
                    or p.skip_reason is not None:
                continue
            if p.rule.decide:  # the group's series together, once
                group = self.groups.get(deciding.group_of(p.run), [series])
                done.update(group)
                records = self._decide_group(group, p, p.run.processes, final=True)
            else:
                done.add(series)
                records = self._decide(series, p, p.run.processes, final=True)
            if records:
                self.store.record_stops(self.sweep_id, records)

    def _decide(self, series: str, planned: PlannedRun, measured: int,
                final: bool = False) -> list[tuple[object, ...]] | None:
        """The stop records of the series after `measured` processes, or None to go on."""
        run, rule = planned.run, planned.rule
        assert rule is not None  # callers pass planned runs with a rule only
        figures = _values(self.store, self.sweep_id, self.members.get(series, {}))
        spent = self._spent(run.experiment, planned.rule_scope)
        per_round = spent / max(measured, 1)
        over = spent + per_round > rule.budget_s
        records: list[tuple[object, ...]] = []
        for (label, method), points in figures.items():
            history = looks(points, min(rule.first_look, len(points)))
            why = reason(history, rule, run.processes) if history else None
            why = why or (BUDGET if over else MAX if final else None)
            if why is None:
                return None
            now = history[-1] if history else Look(None, 0)
            records.append((run.experiment, series, label, method, why, now.half_width,
                            now.processes, rule.target, time.time()))
        if not figures:
            records.append((run.experiment, series, "", "", NONE, None, 0, rule.target,
                            time.time()))
        return records

    def _decide_group(self, group: list[str], planned: PlannedRun, measured: int,
                      final: bool = False) -> list[tuple[object, ...]] | None:
        """Run until decided (run/deciding.py): the group's stop records after `measured`
        rounds (`decided`, or the budget, or max processes when `final`), or None."""
        run, rule = planned.run, planned.rule
        assert rule is not None
        sides = [_values(self.store, self.sweep_id, self.members.get(s, {})) for s in group]
        last = self._horizon(run.experiment, planned.rule_scope, rule)
        verdicts = deciding.look(intervals, sides, measured, rule.first_look, last,
                                 rule.min_effect, rule.spending)
        spent = self._spent(run.experiment, planned.rule_scope)
        # the horizon is the budget's rounds: its last look spent, the budget is what ends it
        over = spent + spent / max(measured, 1) > rule.budget_s \
            or (last < rule.max_processes and measured >= last)
        why = deciding.DECIDED if deciding.decided(verdicts) else BUDGET if over \
            else MAX if final else None
        if why is None:
            return None
        records: list[tuple[object, ...]] = []
        for series, figures in zip(group, sides, strict=True):
            for (label, method), points in figures.items():
                e = intervals.estimate([v for k, v, _ in points if k <= measured])
                records.append((run.experiment, series, label, method, why,
                                None if e is None else e.half_width,
                                sum(k <= measured for k, _, _ in points), rule.target,
                                time.time()))
            if not figures:
                records.append((run.experiment, series, "", "", NONE, None, 0, rule.target,
                                time.time()))
        return records

    def _horizon(self, experiment: str, scope: str, rule: StoppingTarget) -> int:
        """The last round the looks spend α up to: max_processes, or fewer where the
        pilot's rounds show the time budget ends sooner (spending over rounds / max_processes
        that the budget cuts at half would leave most of α unspent). Fixed by the pilot's
        stored wall time alone, never by a figure, so every look and a resume agree."""
        pilot = {run_id for runs in self.members.values() for run_id, k in runs.items()
                 if k <= rule.first_look and self.scope.get(run_id) == scope}
        rows = self.store.query("SELECT run_id, wall_s FROM runs WHERE sweep_id=? AND "
                                "experiment=?", (self.sweep_id, experiment))
        spent = sum(row["wall_s"] or 0.0 for row in rows if row["run_id"] in pilot)
        if not spent > 0:
            return rule.max_processes
        rounds = int(rule.budget_s // (spent / rule.first_look))
        return max(rule.first_look, min(rule.max_processes, rounds))

    def _spent(self, experiment: str, scope: str) -> float:
        """The stored wall time of the runs whose rule shares this budget scope (priming runs
        with their run's)."""
        rows = self.store.query("SELECT run_id, wall_s FROM runs WHERE sweep_id=? AND "
                                "experiment=?", (self.sweep_id, experiment))
        return float(sum(row["wall_s"] or 0.0 for row in rows
                         if self.scope.get(row["run_id"]) == scope))
