"""The report's section 4. Same numbers from every build: the accuracy table."""

from __future__ import annotations

import numpy as np
import pandas as pd

from orchestrator.report import tables
from orchestrator.report.checks import Thresholds
from orchestrator.report.findings import Kind
from orchestrator.report.registry import (
    CompareSection,
    Context,
    Section,
    SideTable,
    method_section,
    section,
)


@section("accuracy", number="4", select=lambda ctx: tables.accuracy_rows(ctx.fig),
         side_by_side=(SideTable("accuracy", "Same numbers from every build",
                                 lambda rows, d: tables.accuracy_table(rows), ("build", "shape")),),
         compare=CompareSection("accuracy", 5, method_section("accuracy"), verdicts=False))
def _accuracy(ctx: Context, rows: pd.DataFrame) -> Section:
    th = ctx.th
    notes = bitwise_summary(rows) + accuracy(rows, th)
    max_ref = tables.global_max_ref(rows)
    if max_ref:
        notes.insert(0, f"max |ref| = {max_ref} (one value for all builds, as printed).")
    return Section(
        "Same numbers from every build",
        "c = a @ b with a = sin(k), b = cos(k) in every build, against a float64 reference "
        "computed from the build's own f32 inputs, and against torch cpu.",
        [tables.accuracy_table(rows)], notes, rows=rows)


# ---- its checks -----------------------------------------------------------------------------


def accuracy(rows: pd.DataFrame, th: Thresholds) -> list[str]:
    """Builds whose inputs differ, and errors beyond what f32 rounding explains."""
    out = []
    builds = rows[rows["build"] != ""]
    differ = builds[(builds["stat"] == "inputs_match_torch_cpu") & (builds["value_s"] == 0)]
    if not differ.empty:
        names = ", ".join(dict.fromkeys(differ["build"]))
        out.append(Kind.INPUTS_DIFFER.says(f"{names}: sin/cos inputs not bit-equal to torch cpu's, "
                   "so max|x - torch cpu| mixes input and sum differences (max|x - f64 ref| "
                   "uses each build's own inputs and stays comparable)."))
    refs = pd.to_numeric(rows.loc[rows["stat"] == "max_abs_ref", "value_s"], errors="coerce")
    refs = refs[(refs > 0) & (refs < np.inf)]  # a nan, inf or zero |ref| scales nothing
    scale = float(refs.max()) if not refs.empty else 1.0
    errs = builds[builds["stat"] == "max_err_f64_ref"]
    finite = pd.to_numeric(errs["value_s"], errors="coerce").abs() < np.inf
    for _, row in errs[~finite].iterrows():
        out.append(Kind.NOT_A_NUMBER.says(f"{row['build']} is {row['value_s']} from the float64 "
                   "reference: its c holds nan or inf, a wrong result whatever the arithmetic."))
    for _, row in errs[finite & (errs["value_s"] > th.accuracy * scale)].iterrows():
        out.append(Kind.INACCURATE.says(f"{row['build']} is {row['value_s']:.3e} from the float64 "
                   f"reference, more than {th.accuracy:g} × max |ref| ({scale:.4g}); a "
                   "correctly rounded f32 product is about 2e-6 away" + _tf32_cause(row) + "."))
    return out


def _tf32_cause(row: pd.Series) -> str:
    """Where the arithmetic is known to be TF32, that is the cause (not a wrong result)."""
    if row.get("precision") != "tf32":
        return ""
    how = row.get("precision_source") or "recorded"
    return (f"; this build computes in TF32 ({how}: see the arithmetic column), whose 10-bit "
            "rounding of the inputs gives this error")


def bitwise_summary(rows: pd.DataFrame) -> list[str]:
    """Which builds computed bit-for-bit the same c (from the dumped arrays)."""
    groups = rows[(rows["stat"] == "bitwise_group") & (rows["build"] != "")]
    if groups.empty:
        if not rows.empty:
            return ["Bit-for-bit equality is not recorded in this data (it needs the dumped "
                    "arrays; a printed table gives only the maxima)."]
        return []
    sets = [list(dict.fromkeys(part["build"]))
            for _, part in groups.groupby("value_s", sort=False)]
    same = ["; ".join(" = ".join(s) for s in sets if len(s) > 1)]
    lines = [f"Bit-for-bit identical: {same[0]}." if same[0] else
             "No two builds computed bit-for-bit the same c."]
    alone = [s[0] for s in sets if len(s) == 1]
    if alone:
        lines.append("Unlike any other build: " + ", ".join(alone) + ".")
    return lines
