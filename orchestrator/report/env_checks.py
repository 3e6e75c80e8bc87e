"""What the environment and the programs' own proofs say about a figure: warnings and labels.

Two things a figure's label is true only under: no measurement-changing environment variable
(data/measure_env.py, the one list) and, for the queued device time, the program's printed
proof (`start event waited in W of N runs`, stat `queued_waited`). A run that had one of the
variables gets a warning naming it, what it changes and where that is documented; a queued
figure whose proof failed (W < N) is labelled so in the clocks table and warned here, with the
variables known to break it, never explained by the method's premise.
"""

from __future__ import annotations

from typing import Any, NamedTuple

import numpy as np
import pandas as pd

from orchestrator.data import frame_records, measure_env
from orchestrator.report.findings import Kind
from orchestrator.report.tables import column_name, group_positions

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
    """The queued window's printed proof for one target, over all of its runs."""

    waited: int  # runs whose start event the spin still held, summed over the target's runs
    runs: int
    breakers: str  # the proof-breaking variables of the runs whose proof failed, `A=1, ...`
    printed: int = 1  # the target's runs (processes) that printed a proof
    short: int = 0  # of those, the runs whose proof failed

    @property
    def failed(self) -> bool:
        return self.waited < self.runs

    def words(self) -> str:
        why = f"; {self.breakers} was set" if self.breakers else ""
        where = (f" (short in {self.short} of the {self.printed} runs that printed it)"
                 if self.printed > 1 and self.short else "")
        return f"start event waited in {self.waited} of {self.runs} runs{where}{why}"


def proof(rows: pd.DataFrame) -> Proof | None:
    """The queued proof among one target's rows (the clock selection), None if not printed.
    Every run's proof counts: a later process (or a priming run) whose start event did not
    wait fails the target's proof even where the first run's held (the first row alone was
    read before, so a failing third process passed unsaid)."""
    hit = rows[_proof_rows(rows)]
    return proof_of(frame_records.records(hit.assign(measure_env=_env_cells(hit))[PROOF_FIELDS]))


PROOF_FIELDS = ["value_s", "runs", "measure_env"]  # what `proof_of` reads of a proof row


def _proof_rows(rows: pd.DataFrame) -> pd.Series:
    return (rows["method"] == "device_time_queued") & (rows["stat"] == PROOF_STAT)


def proof_of(hits: list[dict[str, Any]]) -> Proof | None:
    """`proof` of one target's proof rows as records (PROOF_FIELDS, `measure_env` as text)."""
    if not hits:
        return None
    waited = [int(0 if pd.isna(r["value_s"]) else r["value_s"]) for r in hits]
    runs = [int(0 if pd.isna(r["runs"]) else r["runs"]) for r in hits]
    failing = [w < n for w, n in zip(waited, runs, strict=True)]
    breakers = dict.fromkeys(name for r, failed in zip(hits, failing, strict=True) if failed
                             for name in measure_env.breaks_proof(r["measure_env"]))
    return Proof(sum(waited), sum(runs), ", ".join(breakers), printed=len(hits),
                 short=sum(failing))


def proofs(rows: pd.DataFrame, keys: list[str]) -> dict[tuple[Any, ...], Proof]:
    """Each group's proof (groups by `keys`, in order of first appearance), the groups that
    printed one: the proof rows read once, not a frame per group (bench figure 6)."""
    mask = _proof_rows(rows)
    if not mask.any():
        return {}
    hit = rows[mask]
    proofs = frame_records.records(hit.assign(measure_env=_env_cells(hit))[PROOF_FIELDS])
    at = dict(zip(np.flatnonzero(mask.to_numpy(dtype=bool)).tolist(), proofs, strict=True))
    out = {}
    for key, positions in group_positions(rows, keys).items():
        found = proof_of([at[i] for i in positions if i in at])
        if found is not None:
            out[key] = found
    return out


def queued_proof(rows: pd.DataFrame) -> list[str]:
    """A queued device time whose proof failed: the figure is not the launch-gap-free time.
    Every run's proof, whatever section shows its figures (the clocks section shows one
    experiment per target; a failed proof in another one must not pass unsaid)."""
    out = []
    keys = [k for k in ("experiment", "framework", "label", "shape") if k in rows.columns]
    # the proof rows grouped in one pass: a mask of all rows per target was quadratic, a
    # frame per target linear but seconds (bench figure 6)
    for values, found in proofs(rows, keys).items():
        where = dict(zip(keys, values, strict=True))
        if not found.failed:
            continue
        experiment = f" in {where['experiment']}" if where.get("experiment") else ""
        out.append(Kind.QUEUED_PROOF_FAILED.says(
                   f"{column_name(where['framework'], where['label'])} {where['shape']}: device "
                   f"time queued: {found.words()}; the stream was not held before the start "
                   "event in the other runs, so that figure may hold the launch gap and is not "
                   "the launch-gap-free device time.", where=experiment))
    return out
