"""merge: stores of several hosts into one, keyed by host; idempotent; every machine fact and
row kept; an older store (format 1, 3) merged through its migration; collisions refused."""

from __future__ import annotations

import hashlib
import shutil
import sqlite3
from pathlib import Path

import pytest

from orchestrator.cli import main
from orchestrator.data import dataset, merge
from orchestrator.errors import InputError

from ..conftest import PROJECT

EXAMPLES = PROJECT / "docs" / "results"


def _rows(store: Path, table: str) -> list[tuple[object, ...]]:
    with sqlite3.connect(store) as db:
        cols = [r[1] for r in db.execute(f"PRAGMA table_info({table})") if r[1] != "host"]
        return sorted(db.execute(f"SELECT {', '.join(cols)} FROM {table}").fetchall(), key=repr)


def test_two_older_stores_merge_keeping_every_row_and_reading_by_host(tmp_path: Path) -> None:
    before = {n: hashlib.sha256((EXAMPLES / n / "results.sqlite").read_bytes()).hexdigest()
              for n in ("h200-2026-12-01", "h200-2026-11-30")}
    out = tmp_path / "merged"
    done = merge.merge(out, [merge.Source(EXAMPLES / "h200-2026-12-01", "gpu-new"),
                             merge.Source(EXAMPLES / "h200-2026-11-30", "gpu-old")])
    assert [h for d in done for h, _s, _n in d.sweeps] == ["gpu-new", "gpu-old"]
    assert merge.hosts_of(out) == ["gpu-old", "gpu-new"]  # in the order they ran
    for name, digest in before.items():  # read through a migrated copy: unchanged
        assert hashlib.sha256((EXAMPLES / name / "results.sqlite").read_bytes()).hexdigest() \
            == digest
    for table in ("runs", "figures", "samples"):
        merged = _rows(out / "results.sqlite", table)
        assert len(merged) == sum(len(_rows(EXAMPLES / n / "results.sqlite", table))
                                  for n in before) > 0
    new = dataset.load(out, "gpu-new")
    old = dataset.load(EXAMPLES / "h200-2026-12-01")
    assert new.figures.equals(old.figures.assign(host="gpu-new"))
    assert new.host == dataset.load(EXAMPLES / "h200-2026-12-01").host  # every machine fact


def test_merging_again_changes_nothing(tmp_path: Path) -> None:
    out = tmp_path / "merged"
    sources = ["a=" + str(EXAMPLES / "h200-2026-12-01"), "b=" + str(EXAMPLES / "h200-2026-11-30")]
    snapshots = []
    for _ in range(2):
        assert main(["merge", str(out), *sources]) == 0
        snapshots.append({t: _rows(out / "results.sqlite", t) for t in merge.TABLES})
    assert snapshots[0] == snapshots[1]


def test_a_host_name_defaults_to_the_machines_hostname(tmp_path: Path) -> None:
    out = tmp_path / "merged"
    merge.merge(out, [merge.Source(EXAMPLES / "h200-2026-12-01")])
    (host,) = merge.hosts_of(out)
    assert host == dataset.load(EXAMPLES / "h200-2026-12-01").host["hostname"]


def test_the_same_sweep_from_two_hosts_is_refused(tmp_path: Path) -> None:
    out = tmp_path / "merged"
    copy = tmp_path / "copy"
    copy.mkdir()
    shutil.copy(EXAMPLES / "h200-2026-12-01" / "results.sqlite", copy / "results.sqlite")
    merge.merge(out, [merge.Source(EXAMPLES / "h200-2026-12-01", "one")])
    with pytest.raises(InputError, match=r"is already in .* from host one"):
        merge.merge(out, [merge.Source(copy, "two")])
    with pytest.raises(InputError, match="both the output and a source"):
        merge.merge(out, [merge.Source(out)])
