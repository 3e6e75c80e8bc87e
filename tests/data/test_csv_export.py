"""csv_export writes what pandas' to_csv with the export's float format writes, byte for byte,
while formatting the float columns itself."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from orchestrator.data.csv_export import FLOAT_FORMAT, _to_csv


def test_the_bytes_are_pandas_own(tmp_path: Path) -> None:
    frame = pd.DataFrame({
        "value_s": [1 / 3, np.nan, np.inf, -0.0, 1e-300, 123456789.123],
        "load": [0.5, 1.0, 2.25, np.nan, 3.0, 4.0],
        "idx": pd.array([1, None, 3, 4, 5, 6], dtype="Int64"),
        "n": [1, 2, 3, 4, 5, 6],
        "label": ["a", None, "b,c", 'q"uote', "", "x"],
        "cell": pd.Series([0.1234567891234, None, "t", 7, np.float64(2.5), True], dtype=object),
        "ok": [True, False, True, True, False, True],
    })
    frame = pd.concat([frame, frame.replace({np.nan: None})[["load"]].add_suffix("_obj")], axis=1)
    want, got = tmp_path / "want.csv", tmp_path / "got.csv"
    frame.to_csv(want, index=False, float_format=FLOAT_FORMAT)
    _to_csv(frame, got)
    assert got.read_bytes() == want.read_bytes()
    assert b"0.333333333," in got.read_bytes()  # the format reached the floats


def test_an_empty_frame_keeps_its_header(tmp_path: Path) -> None:
    frame = pd.DataFrame({"value_s": pd.Series([], dtype=float), "label": pd.Series([], dtype=str)})
    _to_csv(frame, tmp_path / "x.csv")
    assert (tmp_path / "x.csv").read_text() == "value_s,label\n"
