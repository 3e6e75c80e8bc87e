"""The CPU's frequency policy: this machine's real sysfs, a cpufreq tree, macOS's outputs."""

from __future__ import annotations

import os
import platform
import re
from pathlib import Path

import pytest

from orchestrator.run import cpu_state

MACOS = Path(__file__).parent.parent / "data" / "macos"


@pytest.mark.skipif(platform.system() != "Linux", reason="reads Linux sysfs")
def test_this_machines_sysfs() -> None:
    """What the kernel here says, read the way the code reads it, compared with the files."""
    state = cpu_state.read()
    root = Path("/sys/devices/system/cpu")
    cpu0 = root / f"cpu{min(os.sched_getaffinity(0))}" / "cpufreq"
    if cpu0.is_dir():
        assert state["governor"] is not None
        assert (cpu0 / "scaling_governor").read_text().strip() in state["governor"].split(",")
        assert state["max_mhz"] > 0
    else:
        assert state["governor"] is None and "no cpufreq" in state["missing"]["governor"]
    mhz = re.findall(r"^cpu MHz\s*:\s*([0-9.]+)", Path("/proc/cpuinfo").read_text(), re.M)
    if cpu0.is_dir() or mhz:
        assert state["freq_mhz"] > 0
    smt = root / "smt" / "control"
    if smt.exists() and smt.read_text().strip() == "notsupported":
        assert state["smt"] == "notsupported"
    elif (root / "smt" / "active").exists():
        active = (root / "smt" / "active").read_text().strip()
        assert state["smt"] == {"1": "on", "0": "off"}[active]
    no_turbo = root / "intel_pstate" / "no_turbo"
    if no_turbo.exists():
        assert state["boost"] == ("off" if no_turbo.read_text().strip() == "1" else "on")


def _tree(root: Path, governors: list[str], no_turbo: str | None, boost: str | None) -> None:
    for n, governor in enumerate(governors):
        freq = root / f"cpu{n}" / "cpufreq"
        freq.mkdir(parents=True)
        for name, value in (("scaling_governor", governor), ("scaling_cur_freq", "2400000"),
                            ("scaling_min_freq", "800000"), ("scaling_max_freq", "3500000"),
                            ("cpuinfo_max_freq", "3500000")):
            (freq / name).write_text(value + "\n")
    if no_turbo is not None:
        (root / "intel_pstate").mkdir()
        (root / "intel_pstate" / "no_turbo").write_text(no_turbo + "\n")
    if boost is not None:
        (root / "cpufreq").mkdir()
        (root / "cpufreq" / "boost").write_text(boost + "\n")
    (root / "smt").mkdir()
    (root / "smt" / "control").write_text("on\n")
    (root / "smt" / "active").write_text("1\n")


def test_a_cpufreq_tree(tmp_path: Path) -> None:
    """The files of a bare-metal Linux (cpufreq, intel_pstate, smt), as the kernel lays them."""
    _tree(tmp_path, ["powersave", "powersave"], no_turbo="0", boost=None)
    state = cpu_state.read_linux(tmp_path, [0, 1], tmp_path / "no-cpuinfo")
    assert state["governor"] == "powersave"
    assert (state["freq_mhz"], state["min_mhz"], state["max_mhz"]) == (2400, 800, 3500)
    assert state["boost"] == "on" and state["smt"] == "on" and state["missing"] == {}


def test_mixed_governors_and_amd_boost(tmp_path: Path) -> None:
    _tree(tmp_path, ["performance", "schedutil"], no_turbo=None, boost="0")
    state = cpu_state.read_linux(tmp_path, [0, 1], tmp_path / "no-cpuinfo")
    assert state["governor"] == "performance,schedutil" and state["boost"] == "off"
    # only the cores this process may use count
    assert cpu_state.read_linux(tmp_path, [1], tmp_path / "x")["governor"] == "schedutil"


def test_macos_recorded_pmset_and_sysctl() -> None:
    """`pmset -g therm` as an Intel Mac printed it; sysctl's Hz; Apple silicon's missing keys."""
    recorded = (MACOS / "pmset_therm_intel_2011.txt").read_text()
    outputs = {("pmset", "-g", "therm"): recorded,
               ("sysctl", "-n", "hw.cpufrequency"): "2200000000\n",
               ("sysctl", "-n", "hw.cpufrequency_max"): "2200000000\n"}
    state = cpu_state.read_macos(lambda argv: outputs.get(tuple(argv)))
    assert state["speed_limit_pct"] == 35
    assert state["pmset"] == {"CPU_Scheduler_Limit": 100, "CPU_Available_CPUs": 8,
                              "CPU_Speed_Limit": 35}
    assert state["freq_mhz"] == 2200 and state["max_mhz"] == 2200 and state["min_mhz"] is None
    # nothing recorded (the recorded file's own note lines) and no hw.cpufrequency key
    notes = "".join(recorded.splitlines(keepends=True)[:2])
    bare = cpu_state.read_macos(lambda argv: notes if argv[0] == "pmset" else None)
    assert bare["speed_limit_pct"] is None and bare["freq_mhz"] is None
    assert "Apple silicon" in bare["missing"]["freq_mhz"]
    assert bare["governor"] is None and "governor" in bare["missing"]
