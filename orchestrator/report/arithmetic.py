"""The arithmetic of each run (FP32 or TF32) in the report: its tag, its words, the accuracy cell.

A TF32 run is a different computation from an FP32 one of the same program and device, so its
label carries a tag (`cuda [tf32]`, `tag_labels`) and every table keeps the two apart. The
accuracy table says how each build's arithmetic is known (`accuracy_cell`: printed by the
program, inferred from its arrays with the figures that show it, or said by its kernel's name).
A burn / PyTorch ratio is plain only between runs of one arithmetic (`is_mixed`). A leaf of the
report: what is found about a run's arithmetic (a disagreement, a note) is arithmetic_checks.py.
"""

from __future__ import annotations

import pandas as pd

from orchestrator.data import kernel_names
from orchestrator.data.accuracy import evidence
from orchestrator.data.precision import DISPUTED, KERNEL_STATS

TAGGED = ("tf32",)  # fp32 is every program's default: untagged, as the chapter names runs


def column(fig: pd.DataFrame, name: str) -> pd.Series:
    """A text column of the rows, '' where it has no value or the rows do not have it."""
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
    precision = column(fig, "precision")
    disputed = column(fig, "precision_source").astype(str).str.startswith(DISPUTED)
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
    return column(fig, "precision")


def precision_of(rows: pd.DataFrame) -> tuple[str, str]:
    """(precision, source) of one run's rows: ('tf32', 'inferred'); ('', 'disputed: ...') where
    its sources disagreed; ('', '') when unknown."""
    if rows.empty:
        return "", ""
    found = rows[precision_column(rows) != ""]
    if found.empty:
        sources = column(rows, "precision_source")
        disputed = sources[sources.astype(str).str.startswith(DISPUTED)]
        return ("", str(disputed.iloc[0])) if not disputed.empty else ("", "")
    first = found.iloc[0]
    return str(first["precision"]), str(first.get("precision_source", "") or "")


def kernel_names_of(rows: pd.DataFrame) -> list[tuple[str, str]]:
    """(run id, kernel name) of the rows' kernel_min / kernel_median figures, in order."""
    if "kernel" not in rows or rows.empty:
        return []
    mine = rows[rows["stat"].isin(KERNEL_STATS)]
    return [(run_id, str(k)) for run_id, k in zip(mine["run_id"], column(mine, "kernel"),
                                                  strict=True) if str(k)]


def kernels(rows: pd.DataFrame) -> list[str]:
    """The names of the kernels of the rows, in order."""
    return [name for _run, name in kernel_names_of(rows)]


def accuracy_cell(rows: pd.DataFrame) -> str:
    """'tf32 (inferred: max err 7.72e-3 = TF32 rounding of the inputs 7.72e-3)', 'fp32
    (printed)', 'tf32 (kernel name: sm90_xmma_gemm_f32f32_tf32f32_…)', 'unknown (disputed:
    ...)', 'unknown': one build's arithmetic, from its accuracy rows."""
    precision, source = precision_of(rows)
    if not precision:
        return f"unknown ({source})" if source else "unknown"
    if source == kernel_names.SOURCE:
        named = kernel_names.of_kernels(kernels(rows))
        return f"{precision} ({source}: {named.kernel})" if named else f"{precision} ({source})"
    if source != "inferred":
        return f"{precision} ({source or 'recorded'})"
    stats = dict(zip(rows["stat"], rows["value_s"], strict=True))
    needed = ("max_err_f64_ref", "max_err_tf32_inputs", "max_err_f32_numpy")
    if not all(stat in stats for stat in needed):
        return f"{precision} (inferred)"
    return f"{precision} (inferred: {evidence(precision, *(stats[s] for s in needed))})"


def words(precision: str) -> str:
    """'TF32', 'FP32', or 'unknown arithmetic'."""
    return precision.upper() if precision else "unknown arithmetic"


def is_mixed(burn: str, torch: str) -> bool:
    """A pair of different arithmetic; two unknowns (the chapter's logs) are taken as equal."""
    return burn != torch
