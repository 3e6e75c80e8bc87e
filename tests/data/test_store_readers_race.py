"""Concurrent readers of a WAL store (the `_tidied` race): a reader removed only the
`-wal`/`-shm` it made itself, so one that found another reader's files left them for good once
that reader had gone. However readers overlap, the folder ends as it was found."""

from __future__ import annotations

import multiprocessing
import os
import sys
from contextlib import ExitStack
from pathlib import Path

import numpy as np
import pytest

from orchestrator.data import store_guard
from orchestrator.data.store import Store

from ..report.fake_stores import store

READERS, READS = 4, 25


def _context() -> multiprocessing.context.BaseContext:
    """Readers forked from a forkserver (started once, with this module imported), not from
    this process: an xdist worker that ran a JAX test has JAX's threads, and a fork of it may
    deadlock (JAX warns at every fork). macOS has no forkserver worth it: spawn there."""
    if sys.platform != "linux":
        return multiprocessing.get_context("spawn")
    ctx = multiprocessing.get_context("forkserver")
    ctx.set_forkserver_preload([__name__])
    return ctx


def _read_many(folder: str) -> None:
    for _ in range(READS):
        with Store(Path(folder)).reading() as s:
            s.query("SELECT count(*) FROM runs")


def test_overlapping_readers_leave_no_wal_or_shm(tmp_path: Path) -> None:
    folder = store(tmp_path / "r", [{"with sync": np.full(20, 1e-3)}])
    found = sorted(p.name for p in folder.iterdir())
    assert "results.sqlite-wal" not in found  # the writer's last close removed them
    ctx = _context()
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


def test_a_pair_removed_as_a_reader_looks_is_gone_not_a_hard_link(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The last reader out unlinks the pair while another reader checks what lies beside the
    store: lstat may then see the `-shm` with no name left (st_nlink 0). That is a file gone,
    not a hard link to refuse (the quick loop saw 'results.sqlite-shm is a hard link' once)."""
    folder = store(tmp_path / "r", [{"with sync": np.full(20, 1e-3)}])
    shm = folder / "results.sqlite-shm"
    shm.write_bytes(b"")
    real = os.lstat

    def unlinked_meanwhile(path: object, *args: object, **kwargs: object) -> os.stat_result:
        found = real(path, *args, **kwargs)  # type: ignore[arg-type]
        if str(path) == str(shm):
            return os.stat_result((found.st_mode, found.st_ino, found.st_dev, 0,
                                   *tuple(found)[4:]))
        return found

    monkeypatch.setattr(store_guard.os, "lstat", unlinked_meanwhile)
    with Store(folder).reading() as s:
        assert s.query("SELECT count(*) AS n FROM runs")[0]["n"] == 1


def _hold_turn(folder: str, held: object, seconds: float) -> None:
    import fcntl
    import time
    fd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY)
    fcntl.flock(fd, fcntl.LOCK_EX)
    held.set()  # type: ignore[attr-defined]
    time.sleep(seconds)
    os.close(fd)


def test_readers_enter_and_leave_one_at_a_time(tmp_path: Path) -> None:
    """A flock's conversion drops the old lock first: a reader leaving as another came could
    lose its shared lock to the newcomer's exclusive one, which then counted itself alone and
    kept the leaver's pair as found (left behind, 1 of 40 stress trials with six readers at load
    2; 0 of 40 with the turns). Entering and leaving take the folder's turn: a reader waits
    while another process holds it."""
    import time
    folder = store(tmp_path / "r", [{"with sync": np.full(20, 1e-3)}])
    ctx = _context()
    held = ctx.Event()
    holder = ctx.Process(target=_hold_turn, args=(str(folder), held, 1.0))
    holder.start()
    assert held.wait(30)
    start = time.monotonic()
    with Store(folder).reading() as s:
        waited = time.monotonic() - start
        s.query("SELECT count(*) FROM runs")
    holder.join(30)
    assert waited > 0.5  # entered only once the turn was free
