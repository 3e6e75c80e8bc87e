"""Issue 24, item 7: the sweep's header names the project's commit (dirty flag) and ncu."""

from __future__ import annotations

from orchestrator.run import machine

from ..conftest import PROJECT

# the form of `ncu --version` (written from its known layout, not captured here: no ncu on this
# machine; scripts/h200/evidence.sh saves the real one as $OUT/ncu_version.txt)
NCU = """NVIDIA (R) Nsight Compute Command Line Profiler
Copyright (c) 2018-2025 NVIDIA Corporation
Version 2025.3.1.0 (build 36398880) (public-release)
"""


def test_ncu_version_is_the_version_line() -> None:
    assert machine.ncu_version(NCU) == "2025.3.1.0 (build 36398880) (public-release)"
    assert machine.ncu_version(None) is None


def test_the_commit_says_whether_the_tree_was_dirty() -> None:
    commit = machine.git_commit(PROJECT)
    assert commit is not None and len(commit.removesuffix("-dirty")) == 40
