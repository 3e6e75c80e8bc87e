"""The x86-v4 build needs avx512f at run time to be a different code path: the capability is
read from a CPU's flags (captured /proc/cpuinfo, an Intel Mac's sysctl), and `plan` skips the
build's runs with the reason, or labels them when `--assume avx512f` plans them anyway."""

from __future__ import annotations

from pathlib import Path

import pytest

from orchestrator.cli import main
from orchestrator.run import detect
from orchestrator.run.detect import Host, avx512f, cpu_flags

from ..conftest import PROJECT

DATA = Path(__file__).resolve().parent.parent / "data" / "cpuinfo"
XEON = DATA / "xeon_avx512.txt"  # captured on this box
AVX2_ONLY = DATA / "no_avx512.txt"  # the same, avx512* flags removed


def test_captured_cpuinfo_flags_are_read() -> None:
    flags = cpu_flags(Host("Linux", "x86_64", cpuinfo=XEON))
    assert flags is not None and {"avx2", "fma", "avx512f", "avx512vl"} <= flags
    assert avx512f(Host("Linux", "x86_64", cpuinfo=XEON)) is None


def test_a_cpu_without_avx512f_is_told_why() -> None:
    why = avx512f(Host("Linux", "x86_64", cpuinfo=AVX2_ONLY))
    assert why == ("needs a CPU with AVX-512 (avx512f), else gemm runs the default build's "
                   "AVX2 kernels (this CPU's flags have no avx512f)")


def test_unreadable_flags_are_absent_not_assumed(tmp_path: Path) -> None:
    why = avx512f(Host("Linux", "x86_64", cpuinfo=tmp_path / "missing"))
    assert why is not None and "no CPU flags readable" in why
    (tmp_path / "cpuinfo").write_text("processor\t: 0\n")  # no flags line
    assert cpu_flags(Host("Linux", "x86_64", cpuinfo=tmp_path / "cpuinfo")) is None


def test_an_intel_mac_reads_leaf7_features() -> None:
    answers = {"machdep.cpu.features": "FPU VME SSE SSE2 AVX1.0 FMA",
               "machdep.cpu.leaf7_features": "BMI1 AVX2 AVX512F AVX512DQ"}
    mac = Host("Darwin", "x86_64", lambda argv: answers.get(argv[-1]))
    assert avx512f(mac) is None
    answers["machdep.cpu.leaf7_features"] = "BMI1 AVX2 SMEP"
    assert "no avx512f" in (avx512f(mac) or "")


def _plan(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], cpuinfo: Path,
          *extra: str) -> list[str]:
    monkeypatch.setattr(Host, "this", classmethod(
        lambda cls: cls("Linux", "x86_64", cpuinfo=cpuinfo)))
    monkeypatch.setenv("COLUMNS", "400")  # one table row per line
    code = main(["plan", str(PROJECT / "experiments.yaml"), "--only", "cpu",
                 "--results", str(PROJECT / "no-such-results"), *extra])
    assert code == 0
    return [line for line in capsys.readouterr().err.splitlines() if "x86-v4" in line]


def test_plan_skips_x86_v4_without_avx512f(monkeypatch: pytest.MonkeyPatch,
                                           capsys: pytest.CaptureFixture[str]) -> None:
    rows = _plan(monkeypatch, capsys, AVX2_ONLY)
    assert len(rows) == 2  # threads 1 and auto
    assert all("skip" in r and "this CPU's flags have no avx512f" in r for r in rows)


def test_plan_runs_x86_v4_with_avx512f(monkeypatch: pytest.MonkeyPatch,
                                       capsys: pytest.CaptureFixture[str]) -> None:
    rows = _plan(monkeypatch, capsys, XEON)
    assert len(rows) == 2 and all("│ run  │" in r and "avx512f" not in r for r in rows)


def test_assume_avx512f_plans_it_labelled(monkeypatch: pytest.MonkeyPatch,
                                          capsys: pytest.CaptureFixture[str]) -> None:
    rows = _plan(monkeypatch, capsys, AVX2_ONLY, "--assume", "avx512f")
    assert len(rows) == 2
    assert all("│ run  │" in r and "assumed avx512f: needs a CPU with AVX-512" in r for r in rows)


def test_another_machine_described_is_not_labelled() -> None:
    """--assume naming an OS describes another machine: its runs carry no 'assumed' label
    (tests/data/plan_macos.txt stays as it is)."""
    assert "avx512f" in detect.NEEDS
    caps = detect.assumed({"avx512f": "no"}, ["linux", "x86_64", "avx512f"])
    assert caps["avx512f"] is None and caps["macos"] is not None
