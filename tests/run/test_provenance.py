"""The sweep's header names the project's commit (dirty flag) and ncu."""

from __future__ import annotations

import pytest

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
    commit = machine.host_facts(PROJECT, used=())["git_commit"]  # no program's own facts
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


HANGS = """#!/bin/sh
echo "$0" >> "{log}"
echo $$ > "{dir}/$(basename "$0").pid"
if [ "$(basename "$0")" = ncu ]; then
  for i in 1 2 3 4 5 6 7 8 9 10; do [ -s "{dir}/cargo.pid" ] && break; sleep 0.1; done
  kill -0 "$(cat "{dir}/cargo.pid")" 2>/dev/null && echo "cargo alive" > "{dir}/seen"
fi
sleep 300 &
echo $! >> "{dir}/children"
wait
"""


def test_hanging_fact_commands_cost_their_timeout_once(
        tmp_path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A `cargo --version` that hangs stalled every sweep start 20 s, each hung command once
    more. They are asked side by side (ncu's stand-in sees cargo's still running), killed with
    their groups at the one timeout, recorded as unknown and said; the next sweep start does
    not ask them again (their calls are counted) until the executable changes."""
    import os
    from pathlib import Path
    tools = Path(tmp_path) / "tools"
    tools.mkdir()
    log = Path(tmp_path) / "calls"
    for name in ("cargo", "rustc", "ncu"):
        (tools / name).write_text(HANGS.format(log=log, dir=tmp_path))
        (tools / name).chmod(0o755)
    monkeypatch.setenv("PATH", f"{tools}:{os.environ['PATH']}")
    monkeypatch.setattr(machine, "FACT_TIMEOUT_S", 2.0)
    facts = machine.host_facts(PROJECT, used=())  # no program's own facts: not tested here
    assert (Path(tmp_path) / "seen").read_text() == "cargo alive\n"  # asked at once
    for pid in (Path(tmp_path) / "children").read_text().split():
        status = Path(f"/proc/{pid}/status")  # killed with its group (a zombie until reaped)
        assert not status.exists() or "\nState:\tZ" in status.read_text()
    assert facts["cargo"] is None and facts["rustc"] is None and facts["ncu"] is None
    assert sorted(facts[machine.HUNG]) == ["cargo --version", "ncu --version", "rustc --version"]
    assert len(facts["git_commit"].removesuffix("-dirty")) == 40  # the others still read
    assert machine.hung_note(facts) == (
        "rustc --version, cargo --version, ncu --version did not answer in 2 s (killed; "
        "recorded as unknown): not asked again until it changes or for a day; mend it or take "
        "it off PATH")
    assert len(log.read_text().splitlines()) == 3

    again = machine.host_facts(PROJECT, used=())  # the next sweep start: not asked
    assert len(log.read_text().splitlines()) == 3
    assert sorted(again[machine.HUNG]) == sorted(facts[machine.HUNG])
    assert machine.hung_note(again).startswith(
        "rustc --version, cargo --version, ncu --version did not answer at a sweep start (")
    assert machine.hung_note(again).endswith("; recorded as unknown): not asked again until it "
                                             "changes or for a day; mend it or take it off PATH")

    (tools / "cargo").write_text("#!/bin/sh\necho 'cargo 1.95.0 (mended)'\n")  # it changed
    mended = machine.host_facts(PROJECT, used=())
    assert mended["cargo"] == "cargo 1.95.0 (mended)"
    assert sorted(mended[machine.HUNG]) == ["ncu --version", "rustc --version"]
    assert len(log.read_text().splitlines()) == 3
    assert machine.hung_note({"cargo": "cargo 1.95.0"}) is None
