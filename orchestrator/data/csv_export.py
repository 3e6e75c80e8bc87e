"""The dataset as CSV (`export`, `parse --csv`): the figures, the samples beside them and a
schema sidecar naming their format and digests, written whole or not at all, never over a
file that is not an earlier export's (data/outputs.py).
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from orchestrator import vocabulary
from orchestrator.data import outputs, schema
from orchestrator.data.sweep_rows import SAMPLE_CSV_COLUMNS
from orchestrator.errors import InputError

if TYPE_CHECKING:
    from orchestrator.data.dataset import Dataset


def csv_paths(out: Path) -> tuple[Path, Path, Path]:
    """The figures CSV, its samples CSV and its schema sidecar."""
    return out, out.with_name(out.stem + ".samples.csv"), out.with_name(out.stem + ".schema.json")


def _sidecar(path: Path) -> dict[str, Any] | None:
    try:
        meta = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    ok = isinstance(meta, dict) and "schema_version" in meta and \
        all(isinstance(meta.get(k), dict) for k in ("figures", "samples"))
    return meta if ok else None


def _exported(path: Path, meta: dict[str, Any] | None) -> bool:
    """Whether `path` is a CSV an export wrote: its sidecar names it (and, from sidecars that
    keep digests, nobody changed it since)."""
    if meta is None:
        return False
    if path.name not in (meta["figures"].get("file"), meta["samples"].get("file")):
        return False
    written, replacing = meta.get("written"), meta.get("replacing")
    if not isinstance(written, dict):
        return True
    sha = outputs.digest(path)
    return written.get(path.name) == sha or (isinstance(replacing, dict) and
                                             replacing.get(path.name) == sha)


def _write_sidecar(path: Path, meta: dict[str, Any]) -> None:
    outputs.replace_file(path, "--csv", lambda p: p.write_text(
        json.dumps(meta, indent=2) + "\n", encoding="utf-8"))


def check_export(out: Path, inputs: outputs.Inputs = outputs.NO_INPUTS) -> None:
    """Refuse, in one line, a `--csv` the export must not write (data/outputs.py)."""
    figures, samples, sidecar = csv_paths(out)
    # another user's sidecar (planted where others may write) names no export of ours
    meta = _sidecar(sidecar) if sidecar.is_file() and not sidecar.is_symlink() and \
        sidecar.lstat().st_uid == os.geteuid() else None
    what = "an export of this orchestrator"
    outputs.check_target(sidecar, "--csv", inputs, lambda p: meta is not None, what)
    written = meta.get("written") if meta else None
    for path in (figures, samples):
        if isinstance(written, dict) and inputs.holds(path) is None and not (
                path.is_file() and not path.is_symlink() and _exported(path, meta)):
            outputs.refuse_changed(path, "--csv", written, what)
        outputs.check_target(path, "--csv", inputs, lambda p: _exported(p, meta), what)



FLOAT_FORMAT = "%.9g"


def _to_csv(frame: pd.DataFrame, path: Path) -> None:
    """`frame.to_csv(path, index=False, float_format=FLOAT_FORMAT)`, the same bytes: each float
    column formatted here in one pass (NaN as the empty cell, as pandas writes it), where
    pandas' formatter checked and formatted each value through three Python calls: 1.2 of
    export's 4.2 s of CSV writing at 5000 runs (BENCHMARKS.md)."""
    texts = {name: ["" if v != v else FLOAT_FORMAT % v for v in column.tolist()]
             for name, column in frame.items()
             if isinstance(column.dtype, np.dtype) and column.dtype.kind == "f"}
    frame.assign(**texts).to_csv(path, index=False)

def _joined(data: Dataset | list[Dataset]) -> tuple[pd.DataFrame, pd.DataFrame, dict[str, Any]]:
    """The figures, samples and sweep facts of one dataset, or of several (a merged store's
    hosts: each row keeps its `host`, `sweep_id` and `variant`; the sidecar's `sweeps` lists
    each, its `gaps` say whose)."""
    if not isinstance(data, list):
        return data.figures, data.samples, data.sweep_facts()
    sweeps, gaps = [], []
    for part in data:
        facts = part.sweep_facts()
        host = str(part.figures["host"].iloc[0]) if len(part.figures) else ""
        sweeps.append({"host": host, **(facts["sweep"] or {})})
        gaps += [f"{host}@{(facts['sweep'] or {}).get('sweep_id')}: {g}" for g in facts["gaps"]]
    return (pd.concat([p.figures for p in data], ignore_index=True),
            pd.concat([p.samples for p in data], ignore_index=True),
            {"sweep": None, "sweeps": sweeps, "gaps": gaps})


def export_csv(data: Dataset | list[Dataset], out: Path,
               inputs: outputs.Inputs = outputs.NO_INPUTS) -> tuple[Path, Path]:
    """Write the figures CSV and, beside it, the samples CSV (`NAME.samples.csv`) and what
    format both are in (`NAME.schema.json`: schema_version and the columns of each file, and
    the digest of each as written, so a later export knows they are its own).

    The version goes in a sidecar, not into the CSVs: a comment line or a constant column
    would be in every pandas user's way. Existing files that are not an earlier export's, or
    that are an input (`inputs`), are refused before anything is written."""
    figures, samples, sidecar = csv_paths(out)
    outputs.prepare_folder(out.parent, "--csv")
    check_export(out, inputs)
    figure_rows, sample_rows, facts = _joined(data)
    staged = [outputs.stage_file(figures, "--csv", lambda p: _to_csv(
        figure_rows.replace({np.nan: None}), p))]
    try:  # both CSVs written whole before any name is replaced: a full disk changes nothing
        staged.append(outputs.stage_file(samples, "--csv", lambda p: _to_csv(
            sample_rows[SAMPLE_CSV_COLUMNS], p)))
        written = {p.name: outputs.digest(t) for p, t in zip((figures, samples), staged,
                                                            strict=True)}
        meta = {"schema_version": schema.VERSION,
                "figures": {"file": out.name, "columns": vocabulary.column_keys()},
                "samples": {"file": samples.name, "columns": SAMPLE_CSV_COLUMNS},
                "written": written, **facts}  # the sweep's (sweeps') status, runs, damage
        # the sidecar first, naming the new digests and the ones the files have now: cut
        # anywhere between the renames, each CSV is one it names (the next export replaces it)
        before = {p.name: outputs.digest(p) for p in (figures, samples)
                  if p.is_file() and not p.is_symlink()}
        _write_sidecar(sidecar, {**meta, "replacing": before} if before else meta)
        for path, tmp in zip((figures, samples), staged, strict=True):
            os.replace(tmp, path)
        if before:
            _write_sidecar(sidecar, meta)
    except OSError as exc:
        raise InputError(f"--csv: cannot write {out}: {exc.strerror}") from None
    finally:
        for tmp in staged:
            tmp.unlink(missing_ok=True)
    return out, samples
