"""The report's sections, in the chapter's order, registered: each owns its rows, tables,
findings (checks) and plot.

A section is one function under `@section(...)`: the registration names its row selection
(`select`, run ONCE per report), its plot (the PNG's file name and its drawer in plots.py) and
the tables `report A B` joins across sides; the function turns the selected rows into its
tables and measurement warnings. `report` (writer.py) and `report A B` (side_by_side.py) read
this one registry, and Markdown, CSV and PNG are exporters over the sections it builds. A check
that compares across sections (a first call against the steady figure of table 1, threads asked
for in any run) still reads all figures (`Context.fig`). A new report section is one registered
function here (`test_contract_section*` adds one from a test).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

import pandas as pd

from orchestrator import programs, vocabulary
from orchestrator.data.dataset import Dataset
from orchestrator.report import (
    cache_report,
    checks,
    clock_checks,
    clocks,
    drift,
    energy,
    env_checks,
    first_call_breakdown,
    plots,
    process_table,
    profile_report,
    ratios,
    sizes_plot,
    sizes_report,
    state_checks,
    tables,
    timing_tables,
)
from orchestrator.report.checks import Thresholds
from orchestrator.report.spread import sample_sets
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
    draw: plots.Drawer | None = None  # the plot's drawer (the registration's)


@dataclass
class Context:
    """What a section may read: the dataset, its prepared figures (tables.prepare), the
    thresholds; the raw sample sets are computed on first use (`report A B` needs none)."""

    data: Dataset
    fig: pd.DataFrame
    th: Thresholds = field(default_factory=Thresholds)
    given_sets: checks.SampleSets | None = None

    @cached_property
    def sets(self) -> checks.SampleSets:
        return self.given_sets if self.given_sets is not None else sample_sets(self.data.samples)

    @cached_property
    def paused(self) -> dict[str, list[str]]:
        """Run id -> the sweep's builds paused while it was measured (checks.load says so)."""
        return checks.paused_builds(self.data.runs)


@dataclass(frozen=True)
class SideTable:
    """A table `report A B` joins across sides: its CSV name, its heading there, its builder
    from the section's selected rows, and the columns that say what a row stands for."""

    name: str
    title: str
    build: Callable[[pd.DataFrame, Dataset], Table]
    keys: tuple[str, ...]


@dataclass(frozen=True)
class CompareSection:
    """A section as `compare` shows it: its words there, its place in compare's order (not the
    report's: compare's rows sort by it), whether its rows get verdict tables, and which
    matched figures it takes (a figure goes to the last section, in compare's order, that
    takes it: the more specific sections come later)."""

    words: str
    rank: int
    takes: Callable[[dict[str, Any]], bool]  # a matched row (report/compare_match.py)
    verdicts: bool = True


@dataclass(frozen=True)
class Registered:
    """One registered section: its row selection, its builder, its plot, its side tables,
    its place in `compare`."""

    name: str
    select: Callable[[Context], Any]  # a frame, or a bundle of frames (clocks.ClockRows)
    build: Callable[[Context, Any], Section]
    plot: tuple[str, plots.Drawer] | None = None  # the PNG's file name and its drawer
    side_by_side: tuple[SideTable, ...] = ()
    compare: CompareSection | None = None

    def section(self, ctx: Context) -> Section:
        rows = self.select(ctx)  # selected once: the tables, the checks and the plot read it
        built = self.build(ctx, rows)
        if self.plot is not None:
            built.plot, built.draw = self.plot
        return built


REGISTRY: list[Registered] = []  # in the report's order, the order of registration


Builder = Callable[[Context, Any], Section]


def section(name: str, select: Callable[[Context], Any], *,
            plot: tuple[str, plots.Drawer] | None = None,
            side_by_side: tuple[SideTable, ...] = (),
            compare: CompareSection | None = None) -> Callable[[Builder], Builder]:
    """Register the decorated builder as the report's next section."""
    def register(build: Builder) -> Builder:
        if any(r.name == name for r in REGISTRY):
            raise ValueError(f"report section {name!r} registered twice")
        REGISTRY.append(Registered(name, select, build, plot, side_by_side, compare))
        return build
    return register


def compare_sections() -> list[CompareSection]:
    """The sections `compare` shows, in its order."""
    return sorted((r.compare for r in REGISTRY if r.compare is not None), key=lambda c: c.rank)


def _method_section(name: str) -> Callable[[dict[str, Any]], bool]:
    """Compare takes a figure whose method the vocabulary puts in section `name`."""
    def takes(row: dict[str, Any]) -> bool:
        entry = vocabulary.method(row["method"])
        return entry is not None and entry.section == name
    return takes


def build_sections(data: Dataset, fig: pd.DataFrame, sets: checks.SampleSets,
                   th: Thresholds) -> list[Section]:
    """The report's sections in the chapter's order, then what goes beyond it."""
    ctx = Context(data, fig, th, sets)
    return [entry.section(ctx) for entry in REGISTRY]


@section("methods", lambda ctx: timing_tables.methods_rows(ctx.fig),
         plot=("methods.png", plots.draw_methods),
         side_by_side=(SideTable("methods", "1. Timing methods on the accelerator",
                                 lambda rows, d: timing_tables.methods_table(rows),
                                 ("method",)),),
         compare=CompareSection("methods", 1, lambda row: True))
def _methods(ctx: Context, rows: pd.DataFrame) -> Section:
    fig, sets, th = ctx.fig, ctx.sets, ctx.th
    return Section(
        "1. Timing methods on the accelerator",
        "Each method timed the same matmul in one process (first call excluded): min and "
        "median of the timed runs, and the 1-minute load average around the runs.",
        [timing_tables.methods_table(rows), energy.energy_table(fig)],
        checks.unknown_methods(fig) + env_checks.environment(fig) + env_checks.queued_proof(fig)
        + checks.odd_times(rows)
        + checks.call_overhead(rows, th) + checks.no_time(rows) + checks.short_window(rows, th)
        + checks.spread(rows, sets, th)
        + checks.load(rows, th, ctx.paused) + _gpu_warnings(rows), rows=rows)


@section("clocks", lambda ctx: clocks.select(ctx.fig))
def _clocks(ctx: Context, selected: clocks.ClockRows) -> Section:
    return Section(
        "1b. Beyond the chapter: what each clock measured",
        "Per GPU target, every clock beside the kernels' own GPU time from a profiler that is "
        "not the framework's timer (CUPTI in bench_py, Nsight Compute in a profile run), min "
        "and median, with the differences named; then the kernels each framework ran, and "
        "burn / PyTorch on kernel time.",
        [*clocks.clock_tables(selected), clocks.kernel_table(selected),
         profile_report.profile_table(ctx.fig),
         clocks.kernel_ratio_table(selected, sets=ctx.sets),
         # every later candidate's (JAX) only where it has kernel times beside the reference's
         *(t for t in (clocks.kernel_ratio_table(selected, p.name, ctx.sets)
                       for p in programs.candidates()[1:]) if not t.frame.empty)],
        checks.odd_times(selected.kernels)
        + clocks.device_time_excess(selected) + clocks.undivided(selected),
        rows=selected.rows)


@section("first_call", lambda ctx: timing_tables.first_call_rows(ctx.fig),
         plot=("first_call.png", plots.draw_first_call),
         side_by_side=(SideTable("first_call", "2. First call across processes",
                                 lambda rows, d: timing_tables.first_call_table(rows),
                                 ("framework", "process")),),
         compare=CompareSection("first call", 2,
                                lambda row: vocabulary.is_first_call(row["method"])))
def _first_call(ctx: Context, rows: pd.DataFrame) -> Section:
    fig, th, data = ctx.fig, ctx.th, ctx.data
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
        + checks.first_call_cost(fig[fig["device"] != "cpu"], th)
        + checks.load(rows, th, ctx.paused)
        + cache_report.unproven_warnings(rows) + cache_report.settings_warnings(data),
        rows=rows)


@section("cpu", lambda ctx: timing_tables.cpu_figures(ctx.fig),
         plot=("cpu_threads.png", plots.draw_cpu),
         side_by_side=(SideTable("cpu_threads", "3. CPU builds and threads (min, with sync)",
                                 lambda cpu, d: timing_tables.cpu_table(cpu, d.host),
                                 ("build",)),
                       SideTable("cpu_first_call", "3. CPU builds: first call",
                                 lambda cpu, d: timing_tables.cpu_first_call_table(cpu),
                                 ("build",))),
         compare=CompareSection("CPU", 3, lambda row: row["device"] == "cpu"))
def _cpu(ctx: Context, cpu: pd.DataFrame) -> Section:
    fig, sets, host, th = ctx.fig, ctx.sets, ctx.data.host, ctx.th
    rows = cpu[cpu["method"].isin(vocabulary.method_keys(table1=True))]
    return Section(
        "3. CPU builds and threads",
        "Minimum time of `with sync` (else `no sync`) per build and thread count; the BLAS "
        "PyTorch's build uses, when the host facts recorded it.",
        [timing_tables.cpu_table(cpu, host), timing_tables.cpu_first_call_table(cpu)],
        checks.odd_times(cpu)
        + checks.cpu_sync(rows, th) + checks.thread_mismatch(fig) + checks.thread_gain(
            timing_tables.cpu_rows(cpu, vocabulary.cpu_methods()), th)
        + checks.spread(rows, sets, th) + checks.load(rows, th, ctx.paused)
        + tables.unexpected_successes(rows)  # beside its figures
        + state_checks.cpu_governor(rows, host), rows=cpu)


@section("accuracy", lambda ctx: tables.accuracy_rows(ctx.fig),
         side_by_side=(SideTable("accuracy", "4. Same numbers from every build",
                                 lambda rows, d: tables.accuracy_table(rows), ("build", "shape")),),
         compare=CompareSection("accuracy", 5, _method_section("accuracy"), verdicts=False))
def _accuracy(ctx: Context, rows: pd.DataFrame) -> Section:
    th = ctx.th
    notes = checks.bitwise_summary(rows) + checks.accuracy(rows, th)
    max_ref = tables.global_max_ref(rows)
    if max_ref:
        notes.insert(0, f"max |ref| = {max_ref} (one value for all builds, as printed).")
    return Section(
        "4. Same numbers from every build",
        "c = a @ b with a = sin(k), b = cos(k) in every build, against a float64 reference "
        "computed from the build's own f32 inputs, and against torch cpu.",
        [tables.accuracy_table(rows)], notes, rows=rows)


@section("warmup", lambda ctx: timing_tables.warmup_rows(ctx.fig),
         plot=("warmup.png", plots.draw_warmup),
         side_by_side=(SideTable("warmup", "5. The warm-up puzzle",
                                 lambda rows, d: timing_tables.warmup_table(rows),
                                 ("cache", "warm-up")),),
         compare=CompareSection("warm-up", 4, _method_section("warm-up")))
def _warmup(ctx: Context, rows: pd.DataFrame) -> Section:
    th = ctx.th
    return Section(
        "5. The warm-up puzzle",
        "burn: one warm-up without sync (result dropped, or kept alive unread), then timed "
        "runs that each end with a sync, on a cold and on a warm autotune cache.",
        [timing_tables.warmup_table(rows)],
        checks.odd_times(rows)
        + checks.warmup_first_run(rows, th) + checks.load(rows, th, ctx.paused)
        + cache_report.unproven_warnings(rows), rows=rows)


@section("statistics", lambda ctx: ctx.fig)
def _statistics(ctx: Context, fig: pd.DataFrame) -> Section:
    sets = ctx.sets
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


@section("sizes", lambda ctx: sizes_report.with_peaks(ctx.fig, ctx.data.host),
         plot=("sizes.png", sizes_plot.draw),
         side_by_side=(SideTable("sizes", "6b. How cost grows: time, TFLOP/s and % of peak "
                                 "per size", lambda rows, d: sizes_report.summary_table(rows),
                                 ("target", "size")),))
def _sizes(ctx: Context, rows: pd.DataFrame) -> Section:
    host = ctx.data.host
    return Section(
        "6b. Beyond the chapter: how cost grows",
        "Per target, the matmul's time at each size (the smallest min over its runs) by three "
        "clocks: the kernels' own time, the queued device time, with sync; throughput "
        "2·M·N·M / t from the first of them measured (basis), % of the device's peak for the "
        "run's arithmetic (the peaks table, each number with its source; 'peak unknown' where "
        "none is known), and at least the three f32 matrices moved once, 4·(2·M·N + M·M) "
        "bytes. Then where the launch gap equals the kernel time, where burn / PyTorch crosses "
        "1, and the cost model t ≈ a + b·n³ fitted per target, with where it stops holding.",
        sizes_report.size_tables(rows, host), sizes_report.findings(rows), rows=rows)


@section("failures", lambda ctx: ctx.data.figures)
def _failures(ctx: Context, figures: pd.DataFrame) -> Section:
    return Section("7. Runs skipped or failed",
                   "Runs that measured nothing, with the reason recorded for them.",
                   [tables.failures_table(figures)], tables.unexpected_successes(figures),
                   rows=figures)


def _gpu_warnings(rows: pd.DataFrame) -> list[str]:
    """What NVML said about the GPU around these runs (state_checks)."""
    return (state_checks.gpu_start(rows) + state_checks.gpu_throttle(rows)
            + clock_checks.warnings(rows) + state_checks.gpu_others(rows))


@section("machine", lambda ctx: ctx.fig)
def _machine(ctx: Context, fig: pd.DataFrame) -> Section:
    host = ctx.data.host
    return Section(
        "8. The machine around the runs",
        "What was recorded before and after every run: for GPU runs NVML's SM clock (and its "
        "max and application clock), performance state, temperature, power, clock-event "
        "reasons, the energy the GPU drew during the run and the time it was throttled, and "
        "other processes on it; the CPU's frequency policy per sweep and per run. "
        + " ".join(state_checks.cpu_state_lines(host, fig)),
        [state_checks.gpu_state_table(fig)],
        _gpu_warnings(fig) + state_checks.cpu_governor(fig, host), rows=fig)
