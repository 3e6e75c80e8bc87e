"""What the environment and the programs' own proofs say about a figure: warnings and labels.

Two things a figure's label is true only under: no measurement-changing environment variable
(data/measure_env.py, the one list) and, for the queued device time, the program's printed
proof (`start event waited in W of N runs`, stat `queued_waited`). A run that had one of the
variables gets a warning naming it, what it changes and where that is documented; a queued
figure whose proof failed (W < N) is labelled so in the clocks table and warned here, with the
variables known to break it, never explained by the method's premise.
"""

from __future__ import annotations

from typing import NamedTuple

import pandas as pd

from orchestrator.data import measure_env
from orchestrator.report.findings import Kind
from orchestrator.report.tables import column_name, split

PROOF_STAT = "queued_waited"


def _env_cells(rows: pd.DataFrame) -> pd.Series:
    if "measure_env" not in rows:
        return pd.Series("", index=rows.index, dtype=object)
    return rows["measure_env"].astype(object).where(rows["measure_env"].notna(), "")


def environment(fig: pd.DataFrame) -> list[str]:
    """One warning per listed variable and value, naming the experiments that had it."""
    cells = _env_cells(fig)
    seen: dict[tuple[str, str], list[str]] = {}
    for cell, experiment in zip(cells, fig["experiment"], strict=True):
        for pair in measure_env.parse_column(cell):
            names = seen.setdefault(pair, [])
            if experiment not in names:
                names.append(str(experiment))
    out = []
    for (name, value), experiments in seen.items():
        entry = measure_env.variable(name)
        if entry is None:  # a cell edited by hand: nothing to say about it
            continue
        out.append(Kind.ENVIRONMENT.says(f"{name}={value} was set in "
                   f"{', '.join(experiments)}: {entry.changes} (source: {entry.source})."))
    return out


class Proof(NamedTuple):
    """The queued window's printed proof for one target."""

    waited: int  # runs whose start event the spin still held
    runs: int
    breakers: str  # the proof-breaking variables of that run, `A=1, ...`

    @property
    def failed(self) -> bool:
        return self.waited < self.runs

    def words(self) -> str:
        why = f"; {self.breakers} was set" if self.breakers else ""
        return f"start event waited in {self.waited} of {self.runs} runs{why}"


def proof(rows: pd.DataFrame) -> Proof | None:
    """The queued proof among one target's rows (the clock selection), None if not printed."""
    hit = rows[(rows["method"] == "device_time_queued") & (rows["stat"] == PROOF_STAT)]
    if hit.empty:
        return None
    row = hit.iloc[0]
    runs = int(row["runs"]) if pd.notna(row["runs"]) else 0
    breakers = ", ".join(measure_env.breaks_proof(_env_cells(hit).iloc[0]))
    return Proof(int(row["value_s"]), runs, breakers)


def queued_proof(rows: pd.DataFrame) -> list[str]:
    """A queued device time whose proof failed: the figure is not the launch-gap-free time.
    Every run's proof, whatever section shows its figures (the clocks section shows one
    experiment per target; a failed proof in another one must not pass unsaid)."""
    out = []
    keys = [k for k in ("experiment", "framework", "label", "shape") if k in rows.columns]
    # grouped in one pass: a mask of all rows per target was quadratic (bench figure 6)
    for values, mine in split(rows, keys).items():
        where = dict(zip(keys, values, strict=True))
        found = proof(mine)
        if found is None or not found.failed:
            continue
        experiment = f" in {where['experiment']}" if where.get("experiment") else ""
        out.append(Kind.QUEUED_PROOF_FAILED.says(
                   f"{column_name(where['framework'], where['label'])} {where['shape']}: device "
                   f"time queued: {found.words()}; the stream was not held before the start "
                   "event in the other runs, so that figure may hold the launch gap and is not "
                   "the launch-gap-free device time.", where=experiment))
    return out
