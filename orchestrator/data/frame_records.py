"""A frame's rows as plain dicts: `DataFrame.to_dict("records")`'s values, column by column.

pandas builds records row by row (`itertuples`), iterating each pyarrow-backed string column
one element at a time and boxing every cell of an object column through `maybe_box_native`:
5.3 of compare's 42 profiled seconds at 5000 runs went there. Reading each column once as a
list (`Series.tolist`, pyarrow's own `to_pylist` for strings) gives the same values: numbers as
Python numbers, missing strings as NaN, timestamps as `pd.Timestamp`; only an object column that
holds numpy scalars is boxed, as `to_dict` boxes it.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import numpy as np
import pandas as pd
from pandas.core.dtypes.cast import maybe_box_native  # to_dict's own boxing, for the rare case

# rows read at a time: the columns of a block as lists are held beside its dicts, not the
# whole frame's (100,000 figures' columns were ~100 MiB of a compare at the figure limit)
BLOCK = 8192


def records(frame: pd.DataFrame) -> list[dict[str, Any]]:
    """`frame.to_dict("records")`, faster: one dict per row, the same keys and values."""
    return list(iter_records(frame))


def iter_records(frame: pd.DataFrame) -> Iterator[dict[str, Any]]:
    """`records(frame)` one at a time, a block of rows read at once: a caller that keeps
    something smaller than each record holds one block of them, not all."""
    # a repeated name keeps its last column's value, in its first place: to_dict's dict(zip())
    # as below, without the UserWarning pandas adds ("columns are not unique")
    names = frame.columns.tolist()
    if not names:
        yield from ({} for _ in range(len(frame)))
        return
    for start in range(0, len(frame), BLOCK):
        block = frame.iloc[start:start + BLOCK]
        columns = [_column(block.iloc[:, i]) for i in range(len(names))]
        yield from (dict(zip(names, row, strict=True)) for row in zip(*columns, strict=True))


def _column(series: pd.Series) -> list[Any]:
    if not isinstance(series.dtype, np.dtype | pd.StringDtype):  # Int64, category, ...: rare,
        return [row[0] for row in series.to_frame().to_dict("split")["data"]]  # pandas' way
    values = series.tolist()
    if series.dtype == object and any(isinstance(v, np.generic) for v in values):
        return [maybe_box_native(v) for v in values]
    return values
