"""The arithmetic of each run (FP32 or TF32) in the report: names, the accuracy cell, the pairs.

A TF32 run is a different computation from an FP32 one of the same program and device, so its
label carries a tag (`cuda [tf32]`) and every table keeps the two apart. The accuracy table says
how each build's arithmetic is known (printed by the program, inferred from its arrays with the
figures that show it, or said by its kernel's name); the kernels' section says which runs' is
known from their kernels' names only (`kernel_name_notes`), and where two sources disagree
(`disagreements`). A burn / PyTorch ratio is plain only between runs of one arithmetic;
`is_mixed` and `mixed_note` say when it is not.
"""

from __future__ import annotations

import pandas as pd

from orchestrator.data import frame_records, kernel_names
from orchestrator.data.accuracy import evidence
from orchestrator.data.precision import DISPUTED, KERNEL_STATS, dispute
from orchestrator.report.findings import Finding, Kind
from orchestrator.report.names import column_name

TAGGED = ("tf32",)  # fp32 is every program's default: untagged, as the chapter names runs


def _column(fig: pd.DataFrame, name: str) -> pd.Series:
    if name not in fig:
        return pd.Series("", index=fig.index, dtype=object)
    return fig[name].astype(object).where(fig[name].notna(), "")


UNKNOWN_TAG = "arithmetic unknown"
DISPUTED_TAG = "arithmetic disputed"


def tag_labels(fig: pd.DataFrame) -> pd.Series:
    """'cuda [tf32]' for the rows of a TF32 run, every other label as it is; where one
    program's label still holds runs of different arithmetic (JAX's `precision: highest`,
    printed FP32, beside its default, unknown on a GPU without an accuracy run), each says its
    own: 'cuda [fp32]' and 'cuda [arithmetic unknown]', never one label over both."""
    precision = _column(fig, "precision")
    disputed = _column(fig, "precision_source").astype(str).str.startswith(DISPUTED)
    tagged = precision.isin(TAGGED)
    label = fig["label"].mask(tagged, fig["label"] + " [" + precision + "]")
    # a run whose sources disagree is a run of its own, never pooled with a known one
    label = label.mask(disputed, fig["label"] + " [" + DISPUTED_TAG + "]")
    tagged |= disputed
    keys = [c for c in ("framework", "device") if c in fig]
    if fig.empty:
        return label
    kinds = precision.groupby([*(fig[c] for c in keys), label], dropna=False).transform("nunique")
    clash = (kinds > 1) & ~tagged
    words = precision.where(precision != "", UNKNOWN_TAG)
    return label.mask(clash, label + " [" + words + "]")


def precision_column(fig: pd.DataFrame) -> pd.Series:
    """The rows' recorded arithmetic, '' where none ('tf32', 'fp32', '')."""
    return _column(fig, "precision")


def precision_of(rows: pd.DataFrame) -> tuple[str, str]:
    """(precision, source) of one run's rows: ('tf32', 'inferred'); ('', 'disputed: ...') where
    its sources disagreed; ('', '') when unknown."""
    if rows.empty:
        return "", ""
    found = rows[precision_column(rows) != ""]
    if found.empty:
        sources = _column(rows, "precision_source")
        disputed = sources[sources.astype(str).str.startswith(DISPUTED)]
        return ("", str(disputed.iloc[0])) if not disputed.empty else ("", "")
    first = found.iloc[0]
    return str(first["precision"]), str(first.get("precision_source", "") or "")


def _kernel_names(rows: pd.DataFrame) -> list[tuple[str, str]]:
    """(run id, kernel name) of the rows' kernel_min / kernel_median figures, in order."""
    if "kernel" not in rows or rows.empty:
        return []
    mine = rows[rows["stat"].isin(KERNEL_STATS)]
    return [(run_id, str(k)) for run_id, k in zip(mine["run_id"], _column(mine, "kernel"),
                                                  strict=True) if str(k)]


def _kernels(rows: pd.DataFrame) -> list[str]:
    """The names of the kernels of the rows, in order."""
    return [name for _run, name in _kernel_names(rows)]


def _kernels_by_run(rows: pd.DataFrame) -> dict[str, list[str]]:
    """run id -> `_kernels` of its rows, for many runs in one pass."""
    out: dict[str, list[str]] = {}
    for run_id, name in _kernel_names(rows):
        out.setdefault(run_id, []).append(name)
    return out


def accuracy_cell(rows: pd.DataFrame) -> str:
    """'tf32 (inferred: max err 7.72e-3 = TF32 rounding of the inputs 7.72e-3)', 'fp32
    (printed)', 'tf32 (kernel name: sm90_xmma_gemm_f32f32_tf32f32_…)', 'unknown (disputed:
    ...)', 'unknown': one build's arithmetic, from its accuracy rows."""
    precision, source = precision_of(rows)
    if not precision:
        return f"unknown ({source})" if source else "unknown"
    if source == kernel_names.SOURCE:
        named = kernel_names.of_kernels(_kernels(rows))
        return f"{precision} ({source}: {named.kernel})" if named else f"{precision} ({source})"
    if source != "inferred":
        return f"{precision} ({source or 'recorded'})"
    stats = dict(zip(rows["stat"], rows["value_s"], strict=True))
    needed = ("max_err_f64_ref", "max_err_tf32_inputs", "max_err_f32_numpy")
    if not all(stat in stats for stat in needed):
        return f"{precision} (inferred)"
    return f"{precision} (inferred: {evidence(precision, *(stats[s] for s in needed))})"


def kernel_name_notes(fig: pd.DataFrame) -> list[str]:
    """One line per label and shape whose arithmetic only its kernels' names told."""
    if fig.empty or "precision_source" not in fig:
        return []
    mine = fig[_column(fig, "precision_source") == kernel_names.SOURCE]
    out = []
    for (framework, label, shape), rows in mine.groupby(["framework", "label", "shape"],
                                                       sort=False):
        named = kernel_names.of_kernels(_kernels(rows))
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
    sources = _column(firsts, "precision_source").astype(str)
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


def words(precision: str) -> str:
    """'TF32', 'FP32', or 'unknown arithmetic'."""
    return precision.upper() if precision else "unknown arithmetic"


def is_mixed(burn: str, torch: str) -> bool:
    """A pair of different arithmetic; two unknowns (the chapter's logs) are taken as equal."""
    return burn != torch


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
