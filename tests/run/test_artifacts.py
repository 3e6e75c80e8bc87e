"""An accuracy run's arrays, bounded by its shape (run/artifacts)."""

from __future__ import annotations

import os
from pathlib import Path

from orchestrator.run import artifacts


def test_arrays_within_the_shape_are_read(tmp_path: Path) -> None:
    for name in ("a", "b", "c"):
        (tmp_path / f"{name}.npy").write_bytes(b"\x93NUMPY" + b"\0" * (4 * 8 * 16))
    arrays, problem = artifacts.read_arrays(tmp_path, (8, 16))
    assert problem == "" and sorted(arrays) == ["a.npy", "b.npy", "c.npy"]
    assert artifacts.array_cap((8, 16)) == 8 * 128 + 64 * 1024  # a [8, 16] is the largest


def test_an_array_over_the_cap_is_refused_unread(tmp_path: Path) -> None:
    with open(tmp_path / "a.npy", "wb") as fh:
        fh.truncate(5 * 2**30)  # sparse: nothing on disk, 5 GiB to a reader
    arrays, problem = artifacts.read_arrays(tmp_path, (8, 8))
    assert arrays == {}
    assert problem == "array a.npy is 5.0 GiB, over the 64.5 KiB a 8x8 run's arrays may take " \
                      "(not kept)"


def test_links_other_files_and_too_many_arrays_are_refused(tmp_path: Path) -> None:
    (tmp_path / "a.npy").symlink_to("/dev/zero")
    assert artifacts.read_arrays(tmp_path, (8, 8))[1].startswith("cannot read array a.npy: ")
    (tmp_path / "a.npy").unlink()
    os.mkfifo(tmp_path / "a.npy")  # opened without blocking, refused as no plain file
    assert artifacts.read_arrays(tmp_path, (8, 8))[1] == "array a.npy is not a plain file"
    (tmp_path / "a.npy").unlink()
    for i in range(artifacts.MAX_ARRAYS + 1):
        (tmp_path / f"{i}.npy").write_bytes(b"")
    assert artifacts.read_arrays(tmp_path, (8, 8)) == (
        {}, f"wrote {artifacts.MAX_ARRAYS + 1} .npy arrays, more than the 16 kept per run")
