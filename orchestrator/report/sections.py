"""The report's sections, in the chapter's order: what each shows, its tables, its checks.

A section builder selects its rows from the prepared figures (tables.prepare) ONCE and hands
that selection to its tables, its measurement warnings (checks) and, through `Section.rows`, to
the plot the writer draws for it (plots). A check that compares across sections (a first call
against the steady figure of table 1, threads asked for in any run) still reads all figures.
A new report section is one builder here and one entry in `build_sections`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import pandas as pd

from orchestrator import programs
from orchestrator.data.dataset import Dataset
from orchestrator.report import (
    cache_report,
    checks,
    clocks,
    drift,
    energy,
    env_checks,
    first_call_breakdown,
    process_table,
    ratios,
    sizes_report,
    state_checks,
    tables,
    timing_tables,
)
from orchestrator.report.checks import Thresholds
from orchestrator.report.tables import Table


@dataclass
class Section:
    """A heading, a sentence on what the table shows, its tables, and what to mind."""

    title: str
    intro: str
    tables: list[Table]
    warnings: list[str] = field(default_factory=list)
    plot: str | None = None  # the PNG shown under the section, when it was drawn
    # the figures the section selected: its tables, its checks and its plot read these
    rows: pd.DataFrame = field(default_factory=pd.DataFrame)


def build_sections(data: Dataset, fig: pd.DataFrame, sets: checks.SampleSets,
                   th: Thresholds) -> list[Section]:
    """The report's sections in the chapter's order, then what goes beyond it."""
    builders: list[Callable[[], Section]] = [
        lambda: _methods(fig, sets, th), lambda: _clocks(fig),
        lambda: _first_call(fig, th, data),
        lambda: _cpu(fig, sets, data.host, th), lambda: _accuracy(fig, th),
        lambda: _warmup(fig, th, data), lambda: _statistics(fig, sets),
        lambda: _sizes(fig, data.host),
        lambda: _failures(data.figures), lambda: _machine(fig, data.host),
    ]
    return [build() for build in builders]


def _methods(fig: pd.DataFrame, sets: checks.SampleSets, th: Thresholds) -> Section:
    rows = timing_tables.methods_rows(fig)  # selected once: the table and checks use them
    return Section(
        "1. Timing methods on the accelerator",
        "Each method timed the same matmul in one process (first call excluded): min and "
        "median of the timed runs, and the 1-minute load average around the runs.",
        [timing_tables.methods_table(rows), energy.energy_table(fig)],
        env_checks.environment(fig) + env_checks.queued_proof(fig) + checks.odd_times(rows)
        + checks.call_overhead(rows, th) + checks.no_time(rows) + checks.short_window(rows, th)
        + checks.spread(rows, sets, th)
        + checks.load(rows, th) + _gpu_warnings(rows), "methods.png", rows)


def _clocks(fig: pd.DataFrame) -> Section:
    selected = clocks.select(fig)  # selected once: every clock table and check
    return Section(
        "1b. Beyond the chapter: what each clock measured",
        "Per GPU target, every clock beside the kernels' own GPU time from a profiler that is "
        "not the framework's timer (CUPTI in bench_py, Nsight Compute in a profile run), min "
        "and median, with the differences named; then the kernels each framework ran, and "
        "burn / PyTorch on kernel time.",
        [*clocks.clock_tables(selected), clocks.kernel_table(selected),
         clocks.kernel_ratio_table(selected),
         # every other candidate's (JAX) only where it has kernel times beside the reference's
         *(t for t in (clocks.kernel_ratio_table(selected, name) for name in programs.names()
                       if name not in ("torch", "burn")) if not t.frame.empty)],
        checks.odd_times(selected.kernels)
        + clocks.device_time_excess(selected) + clocks.undivided(selected),
        rows=selected.rows)


def _first_call(fig: pd.DataFrame, th: Thresholds, data: Dataset) -> Section:
    rows = timing_tables.first_call_rows(fig)  # selected once: tables, checks and plot
    # the spread only where a cold series was repeated; priming runs where there were any
    spread, priming = cache_report.cold_spread_table(rows), cache_report.priming_table(data)
    breakdown = first_call_breakdown.breakdown_table(fig)  # jax: only where it was printed
    return Section(
        "2. First call across processes",
        "The first matmul of each process: when the call returned and when a sync after it "
        "returned. For burn, process 1 starts from a cold autotune cache, process 2 finds it "
        "warm.", [timing_tables.first_call_table(rows),
                  *(t for t in (spread, priming, breakdown) if not t.frame.empty)],
        checks.odd_times(rows)
        + checks.first_call_cost(fig[fig["device"] != "cpu"], th) + checks.load(rows, th)
        + cache_report.unproven_warnings(rows) + cache_report.settings_warnings(data),
        "first_call.png", rows)


def _cpu(fig: pd.DataFrame, sets: checks.SampleSets, host: dict[str, Any],
         th: Thresholds) -> Section:
    cpu = timing_tables.cpu_figures(fig)  # selected once: tables, checks and plot
    rows = cpu[cpu["method"].isin(tables.TIMING_METHODS)]
    return Section(
        "3. CPU builds and threads",
        "Minimum time of `with sync` (else `no sync`) per build and thread count; the BLAS "
        "PyTorch's build uses, when the host facts recorded it.",
        [timing_tables.cpu_table(cpu, host), timing_tables.cpu_first_call_table(cpu)],
        checks.odd_times(cpu)
        + checks.cpu_sync(rows, th) + checks.thread_mismatch(fig) + checks.thread_gain(
            timing_tables.cpu_rows(cpu, ["with_sync", "no_sync"]), th)
        + checks.spread(rows, sets, th) + checks.load(rows, th)
        + tables.unexpected_successes(rows)  # beside its figures
        + state_checks.cpu_governor(rows, host), "cpu_threads.png", cpu)


def _accuracy(fig: pd.DataFrame, th: Thresholds) -> Section:
    rows = tables.accuracy_rows(fig)  # selected once: the table and the checks
    notes = checks.bitwise_summary(rows) + checks.accuracy(rows, th)
    max_ref = tables.global_max_ref(rows)
    if max_ref:
        notes.insert(0, f"max |ref| = {max_ref} (one value for all builds, as printed).")
    return Section(
        "4. Same numbers from every build",
        "c = a @ b with a = sin(k), b = cos(k) in every build, against a float64 reference "
        "computed from the build's own f32 inputs, and against torch cpu.",
        [tables.accuracy_table(rows)], notes, rows=rows)


def _warmup(fig: pd.DataFrame, th: Thresholds, data: Dataset) -> Section:
    rows = timing_tables.warmup_rows(fig)  # selected once: the table, checks and plot
    return Section(
        "5. The warm-up puzzle",
        "burn: one warm-up without sync (result dropped, or kept alive unread), then timed "
        "runs that each end with a sync, on a cold and on a warm autotune cache.",
        [timing_tables.warmup_table(rows)],
        checks.odd_times(rows)
        + checks.warmup_first_run(rows, th) + checks.load(rows, th)
        + cache_report.unproven_warnings(rows), "warmup.png", rows)


def _statistics(fig: pd.DataFrame, sets: checks.SampleSets) -> Section:
    pairs = ratios.pairs(fig, sets)  # paired (and bootstrapped) once: both tables and checks
    return Section(
        "6. Beyond the chapter: spread, confidence and ratios",
        "Every time figure over its processes, the unit of replication (median [95% "
        "interval] from the processes, processes × reps); then from the raw samples of each "
        "process: each median with its 95% confidence interval (order statistics), and burn / "
        "PyTorch time ratios of the same measurement with a bootstrap 95% interval of the "
        "median ratio (fixed seed).",
        [process_table.figures_table(fig, sets), ratios.spread_table(fig, sets),
         ratios.ratio_table(pairs),
         *(t for t in [ratios.mixed_ratio_table(pairs)] if not t.frame.empty)],
        ratios.arithmetic_checks(pairs) + drift.warnings(fig)
        + process_table.missed_targets(fig))


def _sizes(fig: pd.DataFrame, host: dict[str, Any]) -> Section:
    rows = sizes_report.with_peaks(fig, host)  # selected once: the tables, findings and plot
    return Section(
        "6b. Beyond the chapter: how cost grows",
        "Per target, the matmul's time at each size (the smallest min over its runs) by three "
        "clocks: the kernels' own time, the queued device time, with sync; throughput "
        "2·M·N·M / t from the first of them measured (basis), % of the device's peak for the "
        "run's arithmetic (the peaks table, each number with its source; 'peak unknown' where "
        "none is known), and at least the three f32 matrices moved once, 4·(2·M·N + M·M) "
        "bytes. Then where the launch gap equals the kernel time, where burn / PyTorch crosses "
        "1, and the cost model t ≈ a + b·n³ fitted per target, with where it stops holding.",
        sizes_report.size_tables(rows, host), sizes_report.findings(rows), "sizes.png", rows)


def _failures(figures: pd.DataFrame) -> Section:
    return Section("7. Runs skipped or failed",
                   "Runs that measured nothing, with the reason recorded for them.",
                   [tables.failures_table(figures)], tables.unexpected_successes(figures),
                   rows=figures)


def _gpu_warnings(rows: pd.DataFrame) -> list[str]:
    """What NVML said about the GPU around these runs (state_checks)."""
    return (state_checks.gpu_start(rows) + state_checks.gpu_throttle(rows)
            + state_checks.gpu_others(rows))


def _machine(fig: pd.DataFrame, host: dict[str, Any]) -> Section:
    return Section(
        "8. The machine around the runs",
        "What was recorded before and after every run: for GPU runs NVML's SM clock (and its "
        "max and application clock), performance state, temperature, power, clock-event "
        "reasons, the energy the GPU drew during the run and the time it was throttled, and "
        "other processes on it; the CPU's frequency policy per sweep and per run. "
        + " ".join(state_checks.cpu_state_lines(host, fig)),
        [state_checks.gpu_state_table(fig)],
        _gpu_warnings(fig) + state_checks.cpu_governor(fig, host), rows=fig)
