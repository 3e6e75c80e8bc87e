"""The raw samples of a dataset as sample sets: one array per `# samples` line, keyed by its
run and summary line, and the key of each figure's set.

The statistics of a set (its median's interval, a ratio's bootstrap) are stats/spread.py's;
this module only says which samples make a set and which figure it belongs to.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

# One raw-sample set: its run_id and summary line number joined in one string (a string
# compares cleanly inside a DataFrame column, a tuple would not).
SampleKey = str
_SEP = "\x1f"


def sample_sets(samples: pd.DataFrame) -> dict[SampleKey, np.ndarray]:
    """The raw samples, one array per `# samples` line, keyed like `summary_keys` keys figures.

    Each sample carries the line number of its summary line (`summary_line`, linked by the
    parser, or for a version-1 store by its migration); a set that belongs to no summary line
    is left out, and so are values that cannot be a time (negative, nan, inf: a store parsed
    before the parser refused them), a set left with none among them.
    """
    if samples is None or samples.empty:
        return {}
    linked = samples.dropna(subset=["summary_line"])
    values = pd.to_numeric(linked["value_s"], errors="coerce")
    linked = linked[np.isfinite(values) & (values >= 0)]
    if linked.empty:
        return {}
    # groupby(["run_id", "summary_line"], sort=False) without a frame per group (28,000 at
    # 5000 runs): each pair's code in order of first appearance, a stable sort by it, then
    # the values cut at the groups' ends; each set its values in their order, as before
    runs, lines = (pd.factorize(linked[c])[0] for c in ("run_id", "summary_line"))
    codes, _ = pd.factorize(runs.astype(np.int64) * (int(lines.max()) + 1) + lines)
    order = np.argsort(codes, kind="stable")
    ends = np.cumsum(np.bincount(codes))
    firsts = order[np.concatenate(([0], ends[:-1]))]
    numbers = linked["value_s"].to_numpy(dtype=float)[order]
    run_ids = linked["run_id"].to_numpy()[firsts]
    line_nos = linked["summary_line"].to_numpy()[firsts]
    return {_key(run_id, line): part for run_id, line, part in
            zip(run_ids, line_nos, np.split(numbers, ends[:-1]), strict=True)}


def summary_keys(figures: pd.DataFrame) -> pd.Series:
    """For each figure row, the key of the sample set behind its summary line (or None):
    its run and line number, for the `min` and `median` of a summary line."""
    keys = [_key(run_id, line) if stat in ("min", "median") and pd.notna(line) else None
            for run_id, stat, line in zip(figures["run_id"], figures["stat"], figures["line_no"],
                                          strict=True)]
    return pd.Series(keys, index=figures.index, dtype=object)


def _key(run_id: object, line: object) -> str:
    return f"{run_id}{_SEP}{int(line)}"  # type: ignore[call-overload]
