"""Beyond the chapter: what each clock measured, beside the time of the kernels themselves.

Per GPU target (framework, label, shape): the chapter's clocks (no sync, with sync, device
time, read-back), the launch-gap-free device time (`device_time_queued`) and the kernels' own
GPU time from a profiler that is not the framework's timer (`kernel_time`: CUPTI inside
bench_py, Nsight Compute in a profile run), min and median, with the differences named: launch
gap = device time - kernel time, sync overhead = with sync - device time, read-back extra =
read-back - with sync (the `sum` kernel and the copy). A table of the kernels each framework
ran (name, launch shape for ncu, launches, min, median) and burn / PyTorch ratios on kernel
time follow. The check warns when a
figure labelled device time is more than 5% above the kernel time, and says why.

The section selects its rows once (`select`: the clock figures and the kernel list) and every
table and check here reads that selection.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cached_property
from typing import Any, NamedTuple

import pandas as pd

from orchestrator import programs, vocabulary
from orchestrator.data import frame_records, measure_env
from orchestrator.report import arithmetic, env_checks
from orchestrator.report.cells import duration
from orchestrator.report.tables import (
    Table,
    as_text,
    column_name,
    empty,
    group_positions,
    one_unit_per,
    ordered,
)
from orchestrator.stats.spread import ratio, ratio_ci

KEYS = ["framework", "label", "shape"]
EXCESS = 0.05  # a device time this far above the kernel time holds more than the kernels
# per-target tables written at most (each its CSV): a store of 500 runs of distinct shapes had
# 332, of 5000 runs 3,300 (bench figure 6); the rest are named in one line, as compare.png's cap
CLOCK_TABLES = 100
_STATS = ("min", "median")


class Target(NamedTuple):
    """One GPU target's clock figures, read once: its values by (method, profiler, stat), its
    queued proof, and the first sample key of each (method, profiler)'s `min`."""

    values: Values
    proof: env_checks.Proof | None
    min_keys: dict[tuple[Any, Any], str]
    breakers: str = ""  # recorded variables that defeat the held stream, `A=1, ...`

    def unproven(self) -> str | None:
        """Why the queued figure's premise (a held stream) is not this target's explanation:
        its proof failed, a recorded variable defeats it, or no proof was printed; None
        where the proof held."""
        if self.proof is not None and self.proof.failed:
            return f"its proof failed ({self.proof.words()})"
        if self.breakers:
            return f"{self.breakers} was set, which defeats the held stream"
        if self.proof is None:
            return ("no proof that the stream was held was printed (a program from before "
                    "the proof line)")
        return None


@dataclass
class ClockRows:
    """The section's selection: per-matmul figures of every clock, and the kernels seen."""

    rows: pd.DataFrame  # clock_rows
    kernels: pd.DataFrame  # kernel_rows

    @cached_property
    def targets(self) -> dict[tuple[Any, Any, Any], Target]:
        """(framework, label, shape) -> its Target, in order of first appearance, read once
        for every table and check here (a frame per target and check was seconds at 5000
        runs: bench figure 6)."""
        proofs = env_checks.proofs(self.rows, KEYS)
        fields = ["method", "profiler", "stat", "value_s", "sample_key", "measure_env"]
        records = frame_records.records(self.rows[[c for c in fields if c in self.rows]])
        out = {}
        for key, positions in group_positions(self.rows, KEYS).items():
            found: Values = {}
            keys: dict[tuple[Any, Any], str] = {}
            for i in positions:
                r = records[i]
                found.setdefault((r["method"], r["profiler"], r["stat"]), float(r["value_s"]))
                if r["stat"] == "min" and isinstance(r.get("sample_key"), str):
                    keys.setdefault((r["method"], r["profiler"]), r["sample_key"])
            breakers = dict.fromkeys(name for i in positions
                                     for name in measure_env.breaks_proof(
                                         records[i].get("measure_env")))
            out[key] = Target(found, proofs.get(key), keys, ", ".join(breakers))
        return out


def select(fig: pd.DataFrame) -> ClockRows:
    """The rows of the clocks section, selected once for its tables and checks."""
    return ClockRows(clock_rows(fig), kernel_rows(fig))


def _profilers(rows: pd.DataFrame) -> pd.Series:
    if "profiler" not in rows:
        return pd.Series("", index=rows.index, dtype=object)
    return rows["profiler"].astype(object).where(rows["profiler"].notna(), "")


def _kernels(rows: pd.DataFrame) -> pd.Series:
    if "kernel" not in rows:
        return pd.Series("", index=rows.index, dtype=object)
    return rows["kernel"].astype(object).where(rows["kernel"].notna(), "")


def clock_rows(fig: pd.DataFrame) -> pd.DataFrame:
    """Per-matmul figures of every clock on accelerators, one run per clock and target."""
    methods = {method for method, *_ in vocabulary.clocks()}
    # the queued proof (`queued_waited`) rides along: same run, same unit as its min/median
    rows = fig[(fig["device"] != "cpu") & fig["method"].isin(methods)
               & fig["stat"].isin([*_STATS, env_checks.PROOF_STAT])].copy()
    rows["profiler"] = _profilers(rows)
    rows = rows[_kernels(rows) == ""]
    return one_unit_per(rows, [*KEYS, "method", "profiler"])


def kernel_rows(fig: pd.DataFrame) -> pd.DataFrame:
    """One row per kernel a profiler saw (stats kernel_min / kernel_median)."""
    rows = fig[(fig["method"] == "kernel_time")
               & fig["stat"].isin(["kernel_min", "kernel_median"])].copy()
    rows["profiler"] = _profilers(rows)
    rows["kernel"] = _kernels(rows)
    return rows


Values = dict[tuple[Any, Any, Any], float]  # (method, profiler, stat) -> the first row's value


def values(mine: pd.DataFrame) -> Values:
    """A target's figures by (method, profiler, stat), read once: a mask per figure asked
    cost a DataFrame each (bench figure 6)."""
    out: Values = {}
    for key, value in zip(mine[["method", "profiler", "stat"]].itertuples(index=False,
                                                                          name=None),
                          mine["value_s"].tolist(), strict=True):
        out.setdefault(key, float(value))
    return out


def _value(mine: Values, method: str, profiler: str, stat: str) -> float | None:
    return mine.get((method, profiler, stat))


def reference_kernel(mine: Values, stat: str) -> tuple[float | None, str]:
    """The kernel time the other clocks are compared with: CUPTI's, else ncu's."""
    for profiler, name in (("cupti", "CUPTI"), ("ncu", "ncu")):
        value = _value(mine, "kernel_time", profiler, stat)
        if value is not None:
            return value, name
    return None, ""


def _difference(a: float | None, b: float | None) -> str:
    return "" if a is None or b is None else duration(a - b)


def _table(found: Target | None, target: tuple[str, str, str]) -> Table:
    framework, label, shape = target
    records = []
    proof = found.proof if found is not None else None
    mine = found.values if found is not None else {}
    for method, profiler, name, what in vocabulary.clocks():
        cells = [_value(mine, method, profiler, stat) for stat in _STATS]
        if method == "device_time_queued" and proof is not None and proof.failed:
            name = f"{name} (proof failed)"
            what = f"not the launch-gap-free time: {proof.words()}"
        elif method == "device_time_queued" and found is not None and found.breakers:
            name = f"{name} ({found.breakers})"
            what = f"not the launch-gap-free time: {found.breakers} defeats the held stream"
        if any(c is not None for c in cells):
            records.append({"clock": name, "min": duration(cells[0]),
                            "median": duration(cells[1]), "what it holds": what})
    get = {stat: {m: _value(mine, m, "", stat) for m in ("with_sync", "device_time",
                                                         "device_time_queued", "readback")}
           for stat in _STATS}
    ref = {stat: reference_kernel(mine, stat) for stat in _STATS}
    named = ref["min"][1] or "no kernel time"
    for name, a, b, what in (
            ("launch gap", "device_time", "kernel", f"device time - kernel time ({named})"),
            ("queued gap", "device_time_queued", "kernel",
             f"device time queued - kernel time ({named})"),
            ("sync overhead", "with_sync", "device_time", "with sync - device time"),
            ("read-back extra", "readback", "with_sync",
             "read-back - with sync: the sum kernel and the copy")):
        cells = [_difference(get[s][a], ref[s][0] if b == "kernel" else get[s][b])
                 for s in _STATS]
        if any(cells):
            records.append({"clock": f"= {name}", "min": cells[0], "median": cells[1],
                            "what it holds": what})
    title = f"What each clock measured: {column_name(framework, label)} {shape}"
    slug = re.sub(r"[^a-z0-9]+", "_", f"clocks {framework} {label} {shape}".lower()).strip("_")
    return Table(slug, title, pd.DataFrame(records))


def kernel_table(selected: ClockRows) -> Table:
    """Every kernel a profiler saw, per target: launches, min and median duration, each row's
    numbers from one run (the one with the most launches, then the first: the run the clocks
    table's kernel time comes from), named in the column `measured in`."""
    title = "Kernels each framework ran"
    kernels = selected.kernels
    if kernels.empty:
        return empty("kernels", title, "no profiler's kernel list in this data")
    # one run per kernel row: a first-call run's 5 launches no longer lend their min to the
    # methods run's 20 launches (55.775 µs beside the clocks table's 55.519 µs)
    kernels = one_unit_per(kernels, [*KEYS, "profiler", "kernel"])
    records = []
    fields = ["stat", "value_s", "runs", "run_id", "experiment", "section", "role"]
    rows = frame_records.records(kernels[[c for c in fields if c in kernels]])  # read once
    for (framework, label, shape, profiler, kernel), positions in group_positions(
            kernels, [*KEYS, "profiler", "kernel"]).items():
        one = [rows[i] for i in positions]
        stats = {r["stat"]: r["value_s"] for r in one}
        runs = [r["runs"] for r in one if pd.notna(r["runs"])]
        records.append({"run": column_name(framework, label), "shape": shape,
                        "profiler": "CUPTI" if profiler == "cupti" else profiler,
                        "kernel": kernel,
                        "launches": str(int(runs[0])) if runs else "",
                        "min": duration(stats.get("kernel_min")),
                        "median": duration(stats.get("kernel_median")),
                        "measured in": measured_in(one[0])})
    return Table("kernels", title, pd.DataFrame(records), notes=[
        "Each row from one run, named in `measured in` (experiment, the run's role, its id): "
        "launches, min and median are that run's."])


def measured_in(row: pd.Series | dict[str, Any]) -> str:
    """The run a row's figures come from: 'methods, profile run a71179626f860049'; a captured
    log's section where it has no experiment."""
    run = str(row["run_id"])
    where = as_text(row["experiment"]) or as_text(row.get("section")) or "log"
    role = as_text(row.get("role"))
    kind = f"{role} run" if role and role != "measure" else "run"
    return f"{where}, {kind} {run}" if not run.startswith("log:") else where


def undivided(selected: ClockRows) -> list[str]:
    """Targets whose ncu kernels do not divide into --reps matmuls: no per-matmul figure."""
    kernels = selected.kernels[selected.kernels["profiler"] == "ncu"]
    found = []
    targets = selected.targets if not kernels.empty else {}
    for framework, label, shape in ordered(kernels, KEYS):
        target = targets.get((framework, label, shape))
        mine = target.values if target is not None else {}
        if _value(mine, "kernel_time", "ncu", "min") is None:
            found.append(f"{column_name(framework, label)} {shape}: ncu's launches do not "
                         "divide evenly into --reps matmuls, so no per-matmul kernel time "
                         "from ncu (its kernels are listed one by one).")
    return found


def clock_tables(selected: ClockRows) -> list[Table]:
    """One table per GPU target that has a kernel time or the queued device time."""
    rows, kernels = selected.rows, selected.kernels
    # the clocks beyond table 1 (the kernel time, the queued device time) make a target's table
    beyond = rows[rows["method"].isin([m for m, *_ in vocabulary.clocks()
                                       if m not in vocabulary.method_keys(table1=True)])]
    # sets and groups made once: a set per target, or a mask of all rows per target, made
    # this quadratic in the targets (bench figure 6: 500 runs of distinct shapes)
    in_beyond = set(ordered(beyond, KEYS)) if not beyond.empty else set()
    targets = [t for t in ordered(rows, KEYS) if t in in_beyond]
    chosen = set(targets)
    targets += [t for t in ordered(kernels, KEYS) if t not in chosen]
    if not targets:
        return [empty("clocks", "What each clock measured",
                      "no kernel time in this data (bench_py's CUPTI block on CUDA, or a "
                      "profile run: `profile: [ncu]`)")]
    left = targets[CLOCK_TABLES:]
    targets = targets[:CLOCK_TABLES]
    found = selected.targets  # read once; a table per target of the first CLOCK_TABLES
    written = [_table(found.get(target), target) for target in targets]
    if left:
        framework, label, shape = left[0]
        written.append(empty("clocks_more", f"What each clock measured: {len(left)} more GPU "
                             "targets", f"a table is written for the first {CLOCK_TABLES} of "
                             f"{len(targets) + len(left)} GPU targets (at most {CLOCK_TABLES}); "
                             f"the {len(left)} others, the first of them "
                             f"{column_name(framework, label)} {shape}, have their figures in "
                             "the dataset (`export`)"))
    return written


# Why each device timer can read above the kernels' own time.
_EXCESS_REASONS = (
    ("device_time",
     "the start event is recorded on an idle stream, so the window also holds the host's launch "
     "of the work, not only the kernels"),
    ("device_time_queued",
     "the stream was held before the start event, so no launch gap is inside; what remains is the "
     "GPU's own step between the events and the kernels (and the events' resolution), large beside "
     "a short kernel"),
)


def device_time_excess(selected: ClockRows, excess: float = EXCESS) -> list[str]:
    """A device time more than `excess` above the kernel time measures more than the GPU's
    work: on CUDA the start event is recorded on an idle stream, so the window also holds the
    host's launch of the kernel."""
    warnings = []
    for (framework, label, shape), target in selected.targets.items():
        mine = target.values
        kernel, named = reference_kernel(mine, "min")
        for method, why in _EXCESS_REASONS:
            text = vocabulary.words(method)
            value = _value(mine, method, "", "min")
            above = ratio(value, kernel)
            if above is None or above <= 1 + excess:
                continue
            unproven = target.unproven() if method == "device_time_queued" else None
            if unproven is not None:
                # the premise (a held stream) is not shown: say what is known instead
                why = (f"{unproven}, so the launch gap may be inside; the figure is not the "
                       "launch-gap-free time")
            warnings.append(
                f"{column_name(framework, label)} {shape}: {text} min {duration(value)} is "
                f"{100 * (above - 1):.0f}% above the kernel time {duration(kernel)} "
                f"({named}): {why} (a gap of {duration(value - kernel)}).")
    return warnings


def _plain(quotient: float | None) -> str:
    return "?" if quotient is None else f"{quotient:.2f}"


def kernel_ratio_table(selected: ClockRows, candidate: str | None = None,
                       sets: dict[str, Any] | None = None) -> Table:
    """candidate / reference (burn / PyTorch, JAX / PyTorch) on kernel time (the per-matmul
    figure of each), min and median; the first candidate's table is `kernel_ratio`.

    The interval: a percentile bootstrap of the median ratio (spread.ratio_ci: both sides'
    per-launch kernel times resampled independently, 4,000 resamples, fixed seed) from the raw
    per-matmul times, CUPTI's from bench_py's `# samples` line, ncu's from the profile run's
    stored CSV (data/ncu.samples); 'no per-launch times' where a side has none."""
    found = programs.reference()
    first = programs.candidates()[0].name
    candidate = candidate or first
    reference = found[0] if found is not None else programs.get(candidate)
    mine, ref = programs.get(candidate).title, reference.title
    title = f"{mine} / {ref} on kernel time"
    name = "kernel_ratio" if candidate == first else f"kernel_ratio_{candidate}"
    rows = selected.rows
    rows = rows[rows["method"] == "kernel_time"]
    targets = selected.targets if not rows.empty else {}
    told = _arithmetics(rows)
    records = []
    for label, shape in ordered(rows, ["label", "shape"]):
        b_found, t_found = (targets.get((f, label, shape)) for f in (candidate, reference.name))
        burn = b_found.values if b_found is not None else {}
        torch = t_found.values if t_found is not None else {}
        for b_prof, t_prof in ((b, t) for b in ("ncu", "cupti") for t in ("ncu", "cupti")):
            b_vals = [_value(burn, "kernel_time", b_prof, s) for s in _STATS]
            t_vals = [_value(torch, "kernel_time", t_prof, s) for s in _STATS]
            if None in b_vals or None in t_vals:
                continue
            ci = _ratio_interval(_samples(b_found, b_prof, sets),
                                 _samples(t_found, t_prof, sets))
            records.append({"device": label, "shape": shape,
                            "arithmetic": _arithmetic(told.get((candidate, label, shape), ""),
                                                      told.get((reference.name, label, shape),
                                                               "")),
                            f"{mine} kernel time": f"{duration(b_vals[1])} ({b_prof})",
                            f"{ref} kernel time": f"{duration(t_vals[1])} ({t_prof})",
                            "ratio of min": _plain(ratio(b_vals[0], t_vals[0])),
                            "ratio of median": _plain(ratio(b_vals[1], t_vals[1])),
                            "median ratio 95% CI": ci})
    if not records:
        return empty(name, title, "no target has kernel times of both frameworks")
    notes = ["Kernel time cells: the median per matmul, with its profiler. 95% CI: "
             "percentile bootstrap of the median ratio from each side's per-launch "
             "kernel times (CUPTI's raw samples; ncu's per-matmul times from its "
             "stored CSV), fixed seed."]
    if any(" vs " in r["arithmetic"] for r in records):
        notes.append(f"A row whose arithmetic reads 'A vs B' pairs two computations ({mine} "
                     f"first), not two frameworks of one: its ratio is not like for like.")
    return Table(name, title, pd.DataFrame(records), notes=notes)


def _arithmetics(rows: pd.DataFrame) -> dict[tuple[Any, Any, Any], str]:
    """(framework, label, shape) -> the arithmetic its rows record ('' where none does)."""
    told = arithmetic.precision_column(rows)
    known = rows[told != ""]
    return {key: str(first) for key, first in zip(
        zip(known["framework"], known["label"], known["shape"], strict=True),
        told[told != ""], strict=True)}


def _arithmetic(mine: str, theirs: str) -> str:
    """'TF32' where both sides ran one arithmetic, 'unknown arithmetic vs FP32' where not
    (a burn run without an accuracy run beside PyTorch's printed FP32): one label ('cuda')
    does not prove one arithmetic, as the time ratios' `arithmetic` column says too."""
    if arithmetic.is_mixed(mine, theirs):
        return f"{arithmetic.words(mine)} vs {arithmetic.words(theirs)}"
    return arithmetic.words(mine)


def _samples(target: Target | None, profiler: str, sets: dict[str, Any] | None) -> Any:
    """The per-matmul kernel times behind a target's `min` of one profiler, or None."""
    if not sets or target is None:
        return None
    key = target.min_keys.get(("kernel_time", profiler))
    return sets.get(key) if key is not None else None


def _ratio_interval(num: Any, den: Any) -> str:
    if num is None or den is None:
        return "no per-launch times"
    ci = ratio_ci(num, den)
    return f"{_plain(ci[0])} – {_plain(ci[1])}" if ci else "too few launches"
