"""What a report section is made of, a leaf of the report: its tables (`Table`), the section
itself (`Section`), a table `report A B` joins across sides (`SideTable`), how `compare` shows
it (`CompareSection`), a plot's drawer (`Drawer`) and the `Thresholds` of its warnings. The
registry (report/registry.py) says how a section registers and what it reads (`Context`);
tables.py, plots.py and the sections build these.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np
import pandas as pd
from matplotlib.figure import Figure

from orchestrator.data.dataset import Dataset

SampleSets = dict[str, np.ndarray]  # sample key -> its values (report/sample_sets.py)
# the load threshold where the data does not say how many cores ran it
UNKNOWN_CORES_LOAD = 4.0
# a plot's drawer: from the section's selected rows and the sample sets, a figure, or why not
Drawer = Callable[[pd.DataFrame, SampleSets], Figure | str]


@dataclass
class Table:
    """One table of the report: its CSV name, title, cells, and remarks under it."""

    name: str
    title: str
    frame: pd.DataFrame
    notes: list[str] = field(default_factory=list)
    missing: str | None = None  # why there is no table, when frame is empty



@dataclass
class Section:
    """A heading, a sentence on what the table shows, its tables, and what to mind."""

    title: str
    intro: str
    tables: list[Table]
    warnings: list[str] = field(default_factory=list)
    plot: str | None = None  # the PNG shown under the section, when it was drawn
    # the figures the section selected: its tables, its checks and its plot read these
    rows: pd.DataFrame = field(default_factory=pd.DataFrame)
    draw: Drawer | None = None  # the plot's drawer (the registration's)
    closing: list[str] = field(default_factory=list)  # paragraphs after the findings


@dataclass(frozen=True)
class SideTable:
    """A table `report A B` joins across sides: its CSV name, its heading there, its builder
    from the section's selected rows, and the columns that say what a row stands for."""

    name: str
    title: str
    build: Callable[[pd.DataFrame, Dataset], Table]
    keys: tuple[str, ...]


@dataclass(frozen=True)
class CompareSection:
    """A section as `compare` shows it: its words there (its heading in compare.md), its place
    in compare's order (not the report's: compare's rows sort by it), which matched figures it
    takes (a figure goes to the last section, in compare's order, that takes it: the more
    specific sections come later), whether its rows get a verdict table, and the table its
    rows with a verdict make (None: compare's verdict table, report/compare/tables.py)."""

    words: str
    rank: int
    takes: Callable[[dict[str, Any]], bool]  # a matched row (report/compare/rows.py)
    verdicts: bool = True
    # (its words, its rows: compare.Row with a verdict) -> its table
    table: Callable[[str, list[Any]], Table] | None = None


@dataclass(frozen=True)
class Thresholds:
    """When a figure earns a warning."""

    # 1-minute load above which a run counts as taken under load: `load1` if given, else
    # `load_per_core` × the cores the runs could use (`cores`, from the host facts: `for_host`)
    load1: float | None = None
    load_per_core: float = 0.5
    cores: int | None = None
    spread: float = 1.5  # median / min above this is a wide spread
    call_overhead: float = 0.2  # no-sync min below this fraction of with-sync min: not the work
    cpu_sync: float = 0.05  # relative difference allowed between CPU no sync and with sync
    first_run: float = 10.0  # first run / steady run above this swallowed autotune or compile
    thread_gain: float = 1.2  # more threads giving less than this speed-up: threads don't reach
    accuracy: float = 1e-4  # max|x - f64 ref| / max |ref| above this is more than rounding

    def for_host(self, host: dict[str, Any] | None) -> Thresholds:
        """These thresholds with the core count of the machine the data came from."""
        cores = (host or {}).get("cores_usable") or (host or {}).get("cores_logical")
        return replace(self, cores=int(cores)) if cores and self.cores is None else self

    @property
    def load_limit(self) -> float:
        if self.load1 is not None:
            return self.load1
        return self.load_per_core * self.cores if self.cores else UNKNOWN_CORES_LOAD

    def load_words(self) -> str:
        """'1 (0.5 × 2 cores)': the load threshold and where it comes from."""
        if self.load1 is None and self.cores:
            return f"{self.load_limit:g} ({self.load_per_core:g} × {self.cores} cores)"
        return f"{self.load_limit:g}" + ("" if self.load1 is not None else " (cores unknown)")
