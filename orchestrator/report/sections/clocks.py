"""The report's section 1b. What each clock measured: the clocks beside the kernels' own time, the
kernels, kernel-time ratios.
"""

from __future__ import annotations

from orchestrator import programs
from orchestrator.report import arithmetic_checks, checks, clocks, profile_report
from orchestrator.report.registry import Context, Section, section


@section("clocks", number="1b", select=lambda ctx: clocks.select(ctx.fig))
def _clocks(ctx: Context, selected: clocks.ClockRows) -> Section:
    return Section(
        "Beyond the chapter: what each clock measured",
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
        + clocks.device_time_excess(selected) + clocks.undivided(selected)
        + arithmetic_checks.kernel_name_notes(ctx.fig)
        + arithmetic_checks.disagreements(ctx.fig),
        rows=selected.rows)
