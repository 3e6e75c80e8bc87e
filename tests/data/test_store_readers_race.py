"""Concurrent readers of a WAL store (issue 29, the `_tidied` race): a reader removed only the
`-wal`/`-shm` it made itself, so one that found another reader's files left them for good once
that reader had gone. However readers overlap, the folder ends as it was found."""

from __future__ import annotations

import multiprocessing
import sys
from contextlib import ExitStack
from pathlib import Path

import numpy as np

from orchestrator.data.store import Store

from ..report.fake_stores import store

READERS, READS = 4, 25


def _read_many(folder: str) -> None:
    for _ in range(READS):
        with Store(Path(folder)).reading() as s:
            s.query("SELECT count(*) FROM runs")


def test_overlapping_readers_leave_no_wal_or_shm(tmp_path: Path) -> None:
    folder = store(tmp_path / "r", [{"with sync": np.full(20, 1e-3)}])
    found = sorted(p.name for p in folder.iterdir())
    assert "results.sqlite-wal" not in found  # the writer's last close removed them
    ctx = multiprocessing.get_context("fork" if sys.platform == "linux" else "spawn")
    procs = [ctx.Process(target=_read_many, args=(str(folder),)) for _ in range(READERS)]
    for proc in procs:
        proc.start()
    for proc in procs:
        proc.join(120)
        assert proc.exitcode == 0
    assert sorted(p.name for p in folder.iterdir()) == found


def test_a_reader_that_found_another_readers_pair_removes_it_when_last(tmp_path: Path) -> None:
    """The race made step by step: B opens (its pair appears), A comes while B reads, B leaves
    first; A's reads go on over the pair; when A leaves, nothing is left."""
    folder = store(tmp_path / "r", [{"with sync": np.full(20, 1e-3)}])
    found = sorted(p.name for p in folder.iterdir())
    with ExitStack() as b_stack:
        b = b_stack.enter_context(Store(folder).reading())
        b.query("SELECT count(*) FROM runs")
        assert (folder / "results.sqlite-wal").exists()  # the reader's pair
        with Store(folder).reading() as a:
            b_stack.close()  # B leaves first: A is still on the pair, so B leaves it
            assert (folder / "results.sqlite-wal").exists()
            a.query("SELECT count(*) FROM figures")
    assert sorted(p.name for p in folder.iterdir()) == found


def test_a_pair_found_lying_is_left_as_found(tmp_path: Path) -> None:
    folder = store(tmp_path / "r", [{"with sync": np.full(20, 1e-3)}])
    for side in ("results.sqlite-wal", "results.sqlite-shm"):
        (folder / side).write_bytes(b"")
    found = sorted(p.name for p in folder.iterdir())
    with Store(folder).reading() as s:
        s.query("SELECT count(*) FROM runs")
    assert sorted(p.name for p in folder.iterdir()) == found
