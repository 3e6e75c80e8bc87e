"""Temporary and output files are created, never opened through a planted symlink: the
bundle's archive and a build's installed binary and stamp (run/carry, programs/cargo; the
ledger's in tests/run/test_leftovers_hostile.py). Each plants a link at the name the old code
wrote and checks that the file it points to is untouched."""

from __future__ import annotations

import os
import tarfile
from pathlib import Path

from orchestrator.experiments.config import Build
from orchestrator.programs.burn.cargo import Builder
from orchestrator.run import carry


def _precious(tmp_path: Path) -> Path:
    target = tmp_path / "precious"
    target.write_text("keep")
    return target


def test_the_bundles_temporary_file_is_never_written_through(tmp_path: Path) -> None:
    project = tmp_path / "project"
    (project / "build" / "bin" / "x").mkdir(parents=True)
    (project / "build" / "bin" / "x" / "prog").write_text("binary")
    target = _precious(tmp_path)
    os.symlink(target, project / "build" / "bundle.tar.tmp")  # the old fixed name
    os.symlink(target, project / "build" / ".bundle.tmp")
    archive = carry.pack(project, [project / "build" / "bin" / "x"], [])
    assert target.read_text() == "keep"
    with tarfile.open(archive) as tar:
        assert tar.getnames() == ["build/bin/x", "build/bin/x/prog"]
    assert not archive.is_symlink() and archive.stat().st_mode & 0o777 == 0o644
    assert sorted(p.name for p in (project / "build").iterdir()) == [
        ".bundle.tmp", "bin", "bundle.tar.tmp", "bundle.tar.xz"]  # no temporary left


def test_an_install_never_writes_through_links_at_its_names(tmp_path: Path) -> None:
    builder = Builder(tmp_path / "project")
    build = Build(crate="exec-cpu")
    binary = builder.binary_path(build)
    binary.parent.mkdir(parents=True)
    target = _precious(tmp_path)
    os.symlink(target, binary.with_suffix(".tmp"))  # the old fixed temporary name
    os.symlink(target, binary)  # an installed binary replaced by a link: replaced, not followed
    os.symlink(target, binary.parent / "stamp.json")
    program = tmp_path / "program"
    program.write_text("#!/bin/sh\n")
    builder._install(build, program)
    assert target.read_text() == "keep"
    assert not binary.is_symlink() and binary.read_text() == "#!/bin/sh\n"
    assert os.access(binary, os.X_OK)
    assert not (binary.parent / "stamp.json").is_symlink() and builder.is_fresh(build)
