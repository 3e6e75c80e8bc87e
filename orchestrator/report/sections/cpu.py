"""The report's section 3. CPU builds and threads: table 3 and the CPU builds' first calls."""

from __future__ import annotations

import pandas as pd

from orchestrator import programs, vocabulary
from orchestrator.report import checks, plots, state_checks, tables, timing_tables
from orchestrator.report.cells import duration
from orchestrator.report.checks import Thresholds, cpu_target, per_run
from orchestrator.report.findings import Kind
from orchestrator.report.names import column_name, cpu_build_name
from orchestrator.report.registry import CompareSection, Context, Section, SideTable, section
from orchestrator.report.tables import ordered
from orchestrator.stats.spread import ratio


@section("cpu", number="3", select=lambda ctx: timing_tables.cpu_figures(ctx.fig),
         plot=("cpu_threads.png", plots.draw_cpu),
         side_by_side=(SideTable("cpu_threads", "CPU builds and threads (min, with sync)",
                                 lambda cpu, d: timing_tables.cpu_table(cpu, d.host),
                                 ("build",)),
                       SideTable("cpu_first_call", "CPU builds: first call",
                                 lambda cpu, d: timing_tables.cpu_first_call_table(cpu),
                                 ("build",))),
         compare=CompareSection("CPU", 3, lambda row: row["device"] == "cpu"))
def _cpu(ctx: Context, cpu: pd.DataFrame) -> Section:
    fig, sets, host, th = ctx.fig, ctx.sets, ctx.data.host, ctx.th
    rows = cpu[cpu["method"].isin(vocabulary.method_keys(table1=True))]
    return Section(
        "CPU builds and threads",
        "Minimum time of `with sync` (else `no sync`) per build and thread count; the BLAS "
        "PyTorch's build uses, when the host facts recorded it.",
        [timing_tables.cpu_table(cpu, host), timing_tables.cpu_first_call_table(cpu)],
        checks.odd_times(cpu)
        + cpu_sync(rows, th) + thread_mismatch(fig) + thread_gain(
            timing_tables.cpu_rows(cpu, vocabulary.cpu_methods()), th)
        + checks.spread(rows, sets, th) + checks.load(rows, th, ctx.paused)
        + tables.unexpected_successes(rows)  # beside its figures
        + state_checks.cpu_governor(rows, host), rows=cpu)


# ---- its checks -----------------------------------------------------------------------------


def cpu_sync(rows: pd.DataFrame, th: Thresholds) -> list[str]:
    """On the CPU nothing is asynchronous: no sync and with sync must agree (a program that
    dispatches asynchronously there, JAX, gets a line saying what its difference means)."""
    out = []
    for run in per_run(rows[rows["device"] == "cpu"]):
        row = run.row
        for stat in ("min", "median"):
            no_sync, synced = run.stat("no_sync", stat), run.stat("with_sync", stat)
            if no_sync is None or synced is None:
                continue
            if _async_cpu(row["framework"]):
                if stat == "min":  # said once per run: a fact of the program, not a fault
                    out.append(f"{cpu_target(row)}: no sync {duration(no_sync)} vs with sync "
                               f"{duration(synced)}: this program dispatches asynchronously on "
                               "the CPU too, so no sync times the dispatch alone.")
            elif abs(no_sync - synced) > th.cpu_sync * synced:
                out.append(Kind.CPU_SYNC_MISMATCH.says(f"{cpu_target(row)} {stat} no sync "
                           f"{duration(no_sync)} vs with sync {duration(synced)} (more than "
                           f"{th.cpu_sync:.0%} apart): on the CPU they should be equal."))
    return out


def _async_cpu(framework: object) -> bool:
    found = programs.active().by_name.get(str(framework))
    return found is not None and found.async_cpu


def thread_mismatch(fig: pd.DataFrame) -> list[str]:
    """The program reported other threads than the orchestrator asked for."""
    both = fig[fig["threads"].notna() & fig["threads_requested"].notna()]
    wrong = both[both["threads"] != both["threads_requested"]]
    out = []
    for _, row in wrong.drop_duplicates(["unit", "label"]).iterrows():
        name = cpu_build_name(row["framework"], row["label"]) if row["device"] == "cpu" \
            else column_name(row["framework"], row["label"])
        out.append(Kind.THREADS.says(f"{name} asked for "
                   f"{int(row['threads_requested'])} threads but reported "
                   f"{int(row['threads'])}."))
    return out


def thread_gain(rows: pd.DataFrame, th: Thresholds) -> list[str]:
    """More threads, same time: the thread setting does not reach the code doing the work."""
    out = []
    mins = rows[rows["stat"] == "min"].dropna(subset=["threads_key"])
    for framework, label in ordered(mins, ["framework", "label"]):
        mine = mins[(mins["framework"] == framework) & (mins["label"] == label)]
        by_threads = mine.groupby("threads_key")["value_s"].min()
        if 1 not in by_threads.index or by_threads.index.max() <= 1:
            continue
        most = int(by_threads.index.max())
        gain = ratio(by_threads[1], by_threads[most])
        if gain is not None and gain < th.thread_gain:
            load = _load_during(mine)
            cause = ("the machine was under load (1-minute load up to "
                     f"{load:.2f}, threshold {th.load_words()}): other work took the cores the "
                     "threads needed, the likely cause; rerun on a quiet machine"
                     if load is not None and load > th.load_limit else
                     "the thread setting does not reach the matmul (e.g. a BLAS with its own "
                     "threads)")
            out.append(Kind.THREADS_NO_EFFECT.says(f"{cpu_build_name(framework, label)} is "
                       f"{gain:.2f}× faster at {most} threads than at 1: {cause}."))
    return out


def _load_during(rows: pd.DataFrame) -> float | None:
    """The highest 1-minute load around `rows`' runs, None where none was recorded."""
    values = pd.concat([rows["load1_before"], rows["load1_after"]]).dropna()
    return float(values.max()) if not values.empty else None
