"""Issue 24, item 7: the sweep's header names the project's commit (dirty flag) and ncu."""

from __future__ import annotations

import pytest

from orchestrator.run import machine

from ..conftest import PROJECT, facts_probed_once

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


def test_each_gpu_is_recorded_with_its_uuid(monkeypatch: pytest.MonkeyPatch) -> None:
    """Two sweeps on machines of one kind may run on two cards (the H200 A/A of 2026-12-03:
    GPU-7aba5ac9-... then GPU-ac739775-...): the host facts keep each card's UUID, and an
    nvidia-smi that answers without it still gives the rest."""
    from orchestrator.run import detect, machine
    asked = []

    def smi(argv: list[str]) -> str:
        asked.append(argv)
        return ("NVIDIA H200, 580.159.04, 143771 MiB, GPU-7aba5ac9-2401-2b88-636d-b31b67fba35e\n"
                "NVIDIA H200, 580.159.04, 143771 MiB\n")
    monkeypatch.setattr(detect, "quiet", smi)
    gpus = machine._gpus()
    assert "uuid" in asked[0][1]
    assert gpus == [{"name": "NVIDIA H200", "driver": "580.159.04", "memory": "143771 MiB",
                     "uuid": "GPU-7aba5ac9-2401-2b88-636d-b31b67fba35e"},
                    {"name": "NVIDIA H200", "driver": "580.159.04", "memory": "143771 MiB"}]


def test_a_hanging_fact_command_is_said_not_waited_on_unsaid(
        tmp_path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A `cargo --version` that hangs stalled every sweep start ~20 s without a word. It is
    killed (its process group) at the timeout, recorded as unknown, and named in the line a
    sweep says as it begins; the other facts are still read."""
    import os
    from pathlib import Path
    tools = Path(tmp_path) / "tools"
    tools.mkdir()
    child = Path(tmp_path) / "child.pid"
    (tools / "cargo").write_text(f"#!/bin/sh\nsleep 300 &\necho $! > {child}\nwait\n")
    (tools / "cargo").chmod(0o755)
    monkeypatch.setenv("PATH", f"{tools}:{os.environ['PATH']}")
    monkeypatch.setattr(machine, "FACT_TIMEOUT_S", 1.0)
    facts_probed_once(monkeypatch)  # torch's and JAX's own facts: not what is tested here
    facts = machine.host_facts(PROJECT)
    pid = int(child.read_text())
    status = Path(f"/proc/{pid}/status")  # killed with its group (a zombie until reaped)
    assert not status.exists() or "\nState:\tZ" in status.read_text()
    assert facts["cargo"] is None and facts[machine.HUNG] == ["cargo --version"]
    assert facts["rustc"] is None or facts["rustc"].startswith("rustc ")
    assert machine.hung_note(facts) == (
        "cargo --version did not answer in 1 s (killed; recorded as unknown): every sweep "
        "start waits that long for it; mend it or take it off PATH")
    assert machine.hung_note({"cargo": "cargo 1.95.0"}) is None
