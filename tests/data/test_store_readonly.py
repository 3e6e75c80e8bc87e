"""Readers never write the store (data/store): export, report and compare read a store on a
read-only file system (a read-only bind mount in a private mount namespace: a mounted backup,
a read-only checkout), and leave a rollback-journal store's bytes as they were (they switched
it to WAL). The committed docs/results are read through such a mount (of a private copy, as other
tests may read the committed folder at the same time), never changed."""

from __future__ import annotations

import contextlib
import hashlib
import io
import shutil
import sqlite3
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

from orchestrator.cli import main
from orchestrator.data import dataset
from orchestrator.data.store import Store

from ..conftest import PROJECT

# not the store's own files; and a reader's `-wal`/`-shm`, which come and go in the committed
# folder while another test (another xdist worker) reads it: a copy taken then would hold them
KEEP_OUT = ("report", "shared-gpu", "README.md", "*-wal", "*-shm")
DOCS = PROJECT / "docs" / "results"


def _read_only(folder: Path, command: list[str]) -> subprocess.CompletedProcess[str]:
    """`command` with `folder` mounted read-only over itself, in a namespace of its own (the
    mount vanishes with the process; nothing else on the machine sees it)."""
    script = ('mount --bind "$1" "$1" && mount -o remount,bind,ro "$1" && shift && '
              'touch "$0/.probe" 2>/dev/null && exit 9; exec "$@"')
    return subprocess.run(["unshare", "-m", "sh", "-c", script, str(folder), str(folder),
                           *command], cwd=PROJECT, capture_output=True, text=True, timeout=300)


def _digests(folder: Path) -> dict[str, str]:
    return {p.name: hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(folder.iterdir()) if p.is_file()}


@pytest.mark.parametrize("name", ["h200-2026-12-01", "h200-2026-11-30"])  # format 3 and format 1
def test_the_committed_stores_export_from_a_read_only_mount(name: str, tmp_path: Path) -> None:
    # a private copy of the committed folder, byte for byte, mounted read-only: the committed
    # one may be read by another test (another xdist worker) meanwhile, whose reader's
    # `-wal`/`-shm` come and go there (not copied: no reader leaves them behind)
    mounted = tmp_path / "docs" / name
    shutil.copytree(DOCS / name, mounted, ignore=shutil.ignore_patterns("*-wal", "*-shm"))
    before = _digests(mounted)
    out = tmp_path / "dataset.csv"
    done = _read_only(mounted.parent, [sys.executable, "-m", "orchestrator", "export",
                                       str(mounted), "--csv", str(out)])
    assert done.returncode == 0, done.stderr
    assert "unable to open" not in done.stderr
    # the same bytes as an export of a writable copy: reading through a read-only mount
    # changes nothing of what is read
    copy = tmp_path / "copy"
    shutil.copytree(DOCS / name, copy, ignore=shutil.ignore_patterns(*KEEP_OUT))
    writable = tmp_path / "writable.csv"
    # (in this process: the same `export`, less an interpreter's start-up and imports)
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
        assert main(["export", str(copy), "--csv", str(writable)]) == 0
    assert out.read_bytes() == writable.read_bytes()
    if name == "h200-2026-12-01":  # its committed CSV: this store's export, less newer columns
        committed = pd.read_csv(DOCS / name / "dataset.csv", dtype=str, keep_default_na=False)
        exported = pd.read_csv(out, dtype=str, keep_default_na=False)
        assert list(exported.columns[:len(committed.columns)]) == list(committed.columns)
        # since then an inferred precision names the accuracy run's shape it came from
        source = exported["precision_source"].str.replace(r"^inferred at \S+$", "inferred",
                                                          regex=True)
        assert (source == committed["precision_source"]).all()
        others = [c for c in committed.columns if c != "precision_source"]
        assert exported[others].equals(committed[others])
    assert len(out.read_text().splitlines()) > 100
    assert _digests(mounted) == before


@pytest.mark.slow  # report and compare through the command line (12 s), as the CLI suites
def test_report_and_compare_read_a_read_only_store(tmp_path: Path) -> None:
    folder = tmp_path / "backup"
    shutil.copytree(DOCS / "h200-2026-12-01", folder, ignore=shutil.ignore_patterns(*KEEP_OUT))
    done = _read_only(folder, [sys.executable, "-m", "orchestrator", "report", str(folder),
                               "--out", str(tmp_path / "report")])
    assert done.returncode == 0, done.stderr
    assert (tmp_path / "report" / "report.md").stat().st_size > 1000
    done = _read_only(folder, [sys.executable, "-m", "orchestrator", "compare", str(folder),
                               str(folder), "--out", str(tmp_path / "compare")])
    assert done.returncode == 0, done.stderr
    assert sorted(p.name for p in folder.iterdir()) == [
        "dataset.csv", "dataset.samples.csv", "dataset.schema.json", "results.sqlite"]


def test_a_reader_keeps_a_rollback_journal_store_as_it_is(tmp_path: Path) -> None:
    folder = tmp_path / "results"
    shutil.copytree(DOCS / "h200-2026-12-01", folder,
                    ignore=shutil.ignore_patterns(*KEEP_OUT, "dataset*"))
    with sqlite3.connect(folder / "results.sqlite") as db:
        assert db.execute("PRAGMA journal_mode=DELETE").fetchone() == ("delete",)
    before = _digests(folder)
    frame = dataset.load(folder).figures
    assert len(frame) > 100
    with Store(folder).reading() as store:
        assert store.latest_sweep() is not None
    assert _digests(folder) == before  # no WAL switch: header bytes 18-19 still 1, 1
    assert (folder / "results.sqlite").read_bytes()[18:20] == b"\x01\x01"


def test_a_reader_leaves_no_wal_files_beside_a_wal_store(tmp_path: Path) -> None:
    folder = tmp_path / "results"
    shutil.copytree(DOCS / "h200-2026-12-01", folder,
                    ignore=shutil.ignore_patterns(*KEEP_OUT, "dataset*"))
    before = _digests(folder)
    assert len(dataset.load(folder).figures) > 100
    assert _digests(folder) == before and sorted(_digests(folder)) == ["results.sqlite"]
