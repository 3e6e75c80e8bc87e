"""What the report finds about the runs' arithmetic (report/arithmetic.py): the runs whose
arithmetic only their kernels' names told (`kernel_name_notes`, the kernels' section), the runs
whose sources disagree (`disagreements`), and the note under a ratio table whose pairs compare
two arithmetics (`mixed_note`).
"""

from __future__ import annotations

import pandas as pd

from orchestrator.data import frame_records, kernel_names
from orchestrator.data.precision import DISPUTED, dispute
from orchestrator.report import arithmetic
from orchestrator.report.arithmetic import words
from orchestrator.report.findings import Finding, Kind
from orchestrator.report.names import column_name


def _kernels_by_run(rows: pd.DataFrame) -> dict[str, list[str]]:
    """run id -> the kernels' names of its rows (arithmetic.kernels), for many runs in one pass."""
    out: dict[str, list[str]] = {}
    for run_id, name in arithmetic.kernel_names_of(rows):
        out.setdefault(run_id, []).append(name)
    return out


def kernel_name_notes(fig: pd.DataFrame) -> list[str]:
    """One line per label and shape whose arithmetic only its kernels' names told."""
    if fig.empty or "precision_source" not in fig:
        return []
    mine = fig[arithmetic.column(fig, "precision_source") == kernel_names.SOURCE]
    out = []
    for (framework, label, shape), rows in mine.groupby(["framework", "label", "shape"],
                                                       sort=False):
        named = kernel_names.of_kernels(arithmetic.kernels(rows))
        if named is None:  # an accuracy build's own rows (its kernels are in its cell)
            continue
        out.append(f"{column_name(framework, label)} {shape}: {words(named.precision)} by the "
                   f"name of the kernel it ran (`{kernel_names.kernel_column(named.kernel)}`, "
                   f"{_runs(rows['run_id'].nunique())}); its program did not print its "
                   "arithmetic, and no accuracy run of its build tells it.")
    return out


def disagreements(fig: pd.DataFrame) -> list[Finding]:
    """Runs whose kernels' names say another arithmetic than their accuracy run or than their
    program printed (the run's arithmetic left disputed: data/precision.py), one line per
    label, shape and disagreement."""
    if fig.empty or "precision_source" not in fig:
        return []
    # only a disputed run disagrees: those runs' kernels read at once (a frame per run was
    # 24 s of a 5000-run report's 130 s profiled, growth figure 6)
    firsts = fig.drop_duplicates("run_id")
    sources = arithmetic.column(firsts, "precision_source").astype(str)
    maybe = firsts[sources.str.startswith(DISPUTED)]
    kernels = _kernels_by_run(fig[fig["run_id"].isin(maybe["run_id"])]) if len(maybe) else {}
    found: dict[tuple[str, str], set[str]] = {}
    for first in frame_records.records(maybe):
        run_id = first["run_id"]
        named = kernel_names.of_kernels(kernels.get(run_id, []))
        kernel = f" (`{kernel_names.kernel_column(named.kernel)}`)" if named else ""
        disputed = dispute(str(first.get("precision_source") or ""))
        if disputed is None:
            continue
        how, told, said = disputed
        whose = (f"its program printed {words(told)}" if how == "printed" else
                 f"its accuracy run says {words(told)} ({how})")
        why = (f"{whose}, the name of the kernel it ran says {words(said)}{kernel}; its "
               "arithmetic is left disputed: compared with neither")
        name = f"{column_name(str(first['framework']), str(first['label']))} {first['shape']}"
        found.setdefault((name, why), set()).add(str(run_id))
    return [Kind.ARITHMETIC_DISPUTED.says(f"{name} ({_runs(len(runs))}): {why}.")
            for (name, why), runs in found.items()]


def _runs(n: int) -> str:
    return f"{n} run" if n == 1 else f"{n} runs"


def mixed_note(pairs: list[tuple[str, str, str, str]], equals: set[str]) -> str:
    """The check under the ratio table: which pairs were set apart, and whether an equal one
    exists. `pairs` holds (burn name, its arithmetic, PyTorch name, its arithmetic); `equals`
    the burn names that also have a PyTorch partner of their own arithmetic."""
    shown = []
    for burn, b_prec, torch, t_prec in dict.fromkeys(pairs):
        partner = "" if burn in equals else (
            f"; no PyTorch {words(b_prec)} run to pair it with" + (
                " (a torch target with `precision: tf32`)" if b_prec == "tf32" else ""))
        shown.append(f"{burn} ({words(b_prec)}) / {torch} ({words(t_prec)}){partner}")
    return Kind.DIFFERENT_ARITHMETIC.says("; ".join(shown) + ": these ratios compare two "
            "computations, not two frameworks, and are set apart (column `arithmetic`, "
            "burn vs PyTorch); the plain ratios pair runs of one arithmetic only.")
