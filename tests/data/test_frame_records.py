"""frame_records.records gives what DataFrame.to_dict("records") gives, value for value."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pandas as pd
import pytest

from orchestrator.data import frame_records
from orchestrator.data.frame_records import records


def _same(a: object, b: object) -> bool:
    if isinstance(a, float) and isinstance(b, float) and math.isnan(a) and math.isnan(b):
        return True
    return type(a) is type(b) and (a == b or (a is pd.NA and b is pd.NA) or (a is pd.NaT))


FRAMES = {
    "numbers": pd.DataFrame({"i": [1, 2, 3], "f": [0.5, np.nan, 2.0], "b": [True, False, True]}),
    "strings with gaps": pd.DataFrame({"s": ["a", None, "c"], "t": ["x", "y", None]}),
    "object of numpy scalars": pd.DataFrame({"o": pd.Series([np.float64(1.5), "x", np.int64(3)],
                                                            dtype=object)}),
    "object of arrays": pd.DataFrame({"o": pd.Series([np.arange(3), None, [1, 2]], dtype=object)}),
    "nullable and times": pd.DataFrame({
        "n": pd.array([1, None, 3], dtype="Int64"),
        "t": pd.to_datetime(["2026-12-04", None, "2026-12-05"]),
        "c": pd.Categorical(["a", "b", "a"])}),
    "no rows": pd.DataFrame({"a": pd.Series([], dtype=float), "s": pd.Series([], dtype=str)}),
    "no columns": pd.DataFrame(index=range(2)),
    "a repeated name": pd.DataFrame([[1, 2]], columns=["a", "a"]),
    "repeated names apart": pd.DataFrame([[1, "x", 2.5, "y"]], columns=["a", "b", "a", "c"]),
}


@pytest.mark.parametrize("name", FRAMES)
def test_records_are_to_dicts_records(name: str) -> None:
    frame = FRAMES[name]
    with warnings.catch_warnings():  # pandas warns of a repeated name; records() need not
        warnings.filterwarnings("ignore", "DataFrame columns are not unique", UserWarning)
        want = frame.to_dict("records")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        got = records(frame)
    assert len(got) == len(want)
    for w, g in zip(want, got, strict=True):
        assert list(g) == list(w)
        for key in w:
            if isinstance(w[key], np.ndarray):
                assert g[key] is w[key]
            else:
                assert _same(g[key], w[key]), (name, key, g[key], w[key])


@pytest.mark.parametrize("block", [1, 2, 3, 1000])
def test_blocks_of_rows_join_up_in_order(monkeypatch: pytest.MonkeyPatch, block: int) -> None:
    """Rows read a block at a time (frame_records.BLOCK) come out as one frame's records: none
    lost or repeated at a block's edge, a sliced frame's columns as the whole frame's."""
    monkeypatch.setattr(frame_records, "BLOCK", block)
    frame = pd.DataFrame({"i": range(7), "s": list("abcdefg"), "f": [0.5 * k for k in range(7)],
                          "o": pd.Series([np.float64(k) for k in range(7)], dtype=object)})
    got = list(frame_records.iter_records(frame.iloc[1:]))
    assert got == frame.iloc[1:].to_dict("records")
    assert [type(r["o"]) for r in got] == [float] * 6  # boxed as to_dict boxes, every block
    assert records(frame) == frame.to_dict("records")
