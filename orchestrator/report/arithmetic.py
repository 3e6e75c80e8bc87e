"""The arithmetic of each run (FP32 or TF32) in the report: names, the accuracy cell, the pairs.

A TF32 run is a different computation from an FP32 one of the same program and device, so its
label carries a tag (`cuda [tf32]`) and every table keeps the two apart. The accuracy table says
how each build's arithmetic is known (printed by the program, or inferred from its arrays, with
the figures that show it). A burn / PyTorch ratio is plain only between runs of one arithmetic;
`is_mixed` and `mixed_note` say when it is not.
"""

from __future__ import annotations

import pandas as pd

from orchestrator.data.accuracy import evidence
from orchestrator.report.findings import Kind

TAGGED = ("tf32",)  # fp32 is every program's default: untagged, as the chapter names runs


def _column(fig: pd.DataFrame, name: str) -> pd.Series:
    if name not in fig:
        return pd.Series("", index=fig.index, dtype=object)
    return fig[name].astype(object).where(fig[name].notna(), "")


UNKNOWN_TAG = "arithmetic unknown"


def tag_labels(fig: pd.DataFrame) -> pd.Series:
    """'cuda [tf32]' for the rows of a TF32 run, every other label as it is; where one
    program's label still holds runs of different arithmetic (JAX's `precision: highest`,
    printed FP32, beside its default, unknown on a GPU without an accuracy run), each says its
    own: 'cuda [fp32]' and 'cuda [arithmetic unknown]', never one label over both."""
    precision = _column(fig, "precision")
    tagged = precision.isin(TAGGED)
    label = fig["label"].mask(tagged, fig["label"] + " [" + precision + "]")
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
    """(precision, source) of one run's rows: ('tf32', 'inferred'), ('', '') when unknown."""
    found = rows[precision_column(rows) != ""] if not rows.empty else rows
    if found.empty:
        return "", ""
    first = found.iloc[0]
    return str(first["precision"]), str(first.get("precision_source", "") or "")


def accuracy_cell(rows: pd.DataFrame) -> str:
    """'tf32 (inferred: max err 7.72e-3 = TF32 rounding of the inputs 7.72e-3)', 'fp32
    (printed)', 'unknown': one build's arithmetic, from its accuracy rows."""
    precision, source = precision_of(rows)
    if not precision:
        return "unknown"
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
