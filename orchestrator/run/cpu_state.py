"""The CPU's frequency policy: governor, frequency, boost, SMT; read per sweep and per run.

A CPU table is only defensible next to the policy that clocked it (pyperf's `system show`
checks the same): a `powersave` or `schedutil` governor, turbo on or off, SMT siblings sharing
a core. Linux: sysfs (`/sys/devices/system/cpu`: cpufreq's scaling_governor and
scaling_cur/min/max_freq of the cores this process may use, intel_pstate/no_turbo or
cpufreq/boost, smt/active), the frequency from /proc/cpuinfo where cpufreq is absent (a VM).
macOS, without sudo: `sysctl -n hw.cpufrequency[_min|_max]` (Intel Macs; Apple silicon has no
such keys) and `pmset -g therm` (CPU_Speed_Limit, the percentage the OS allows: below 100 is
thermal or power throttling). Whatever is not there is None, with the reason in `missing`.
"""

from __future__ import annotations

import os
import platform
import re
import shutil
from pathlib import Path
from typing import Any

from orchestrator.programs import probe

SYSFS = Path("/sys/devices/system/cpu")
_PMSET_LINE = re.compile(r"^\s*(CPU_\w+)\s*=\s*([0-9]+)\s*$", re.M)


def _text(path: Path) -> str | None:
    try:
        return path.read_text().strip()
    except OSError:
        return None


def _cpus() -> list[int]:
    """The cores this process may use (the ones a run's threads land on)."""
    try:
        return sorted(os.sched_getaffinity(0))
    except AttributeError:  # macOS
        return list(range(os.cpu_count() or 1))


def _mhz(values: list[str]) -> float | None:
    """Mean of sysfs kHz readings, in MHz."""
    numbers = [int(v) for v in values if v.isdigit()]
    return round(sum(numbers) / len(numbers) / 1000, 1) if numbers else None


def _cpuinfo_mhz(cpuinfo: Path) -> float | None:
    found = re.findall(r"^cpu MHz\s*:\s*([0-9.]+)", _text(cpuinfo) or "", re.M)
    return round(sum(map(float, found)) / len(found), 1) if found else None


def _boost(root: Path) -> tuple[str | None, str | None]:
    """('on'|'off', None) or (None, why not known)."""
    no_turbo = _text(root / "intel_pstate" / "no_turbo")
    if no_turbo in ("0", "1"):
        return ("off" if no_turbo == "1" else "on"), None
    boost = _text(root / "cpufreq" / "boost")
    if boost in ("0", "1"):
        return ("on" if boost == "1" else "off"), None
    return None, "neither intel_pstate/no_turbo nor cpufreq/boost in sysfs"


def _smt(root: Path) -> str | None:
    """'on', 'off', or the kernel's word when SMT cannot be changed ('notsupported')."""
    control = _text(root / "smt" / "control")
    if control in ("notsupported", "notimplemented", "forceoff"):
        return control
    active = _text(root / "smt" / "active")
    return {"1": "on", "0": "off"}.get(active or "")


def read_linux(root: Path = SYSFS, cpus: list[int] | None = None,
               cpuinfo: Path = Path("/proc/cpuinfo")) -> dict[str, Any]:
    """The policy of the cores `cpus` (default: this process's) from sysfs."""
    cpus = _cpus() if cpus is None else cpus
    missing: dict[str, str] = {}
    freq_dirs = [root / f"cpu{n}" / "cpufreq" for n in cpus]
    freq_dirs = [d for d in freq_dirs if d.is_dir()]

    def each(name: str) -> list[str]:
        return [t for d in freq_dirs if (t := _text(d / name)) is not None]

    governors = sorted(set(each("scaling_governor")))
    state: dict[str, Any] = {
        "source": "sysfs",
        "governor": ",".join(governors) or None,
        "freq_mhz": _mhz(each("scaling_cur_freq")),
        "min_mhz": _mhz(each("scaling_min_freq")),
        "max_mhz": _mhz(each("scaling_max_freq")),
        "hw_max_mhz": _mhz(each("cpuinfo_max_freq")),
    }
    if not freq_dirs:
        missing["governor"] = "no cpufreq in sysfs (a VM, or a kernel without cpufreq)"
    if state["freq_mhz"] is None:
        state["freq_mhz"] = _cpuinfo_mhz(cpuinfo)
        if state["freq_mhz"] is not None:
            state["source"] = "sysfs, frequency from /proc/cpuinfo"
    state["boost"], why = _boost(root)
    if why:
        missing["boost"] = why
    state["smt"] = _smt(root)
    state["missing"] = missing
    return state


def _command(argv: list[str], timeout: float = 5) -> str | None:
    if shutil.which(argv[0]) is None:
        return None
    return probe.stdout_of(argv, timeout)


def parse_sysctl_hz(text: str | None) -> float | None:
    """`sysctl -n hw.cpufrequency` prints Hz ('2600000000'); in MHz."""
    value = (text or "").strip()
    return round(int(value) / 1e6, 1) if value.isdigit() else None


def parse_pmset_therm(text: str | None) -> dict[str, int]:
    """`pmset -g therm`'s CPU_* limits ({'CPU_Speed_Limit': 35, ...}); {} where it has
    recorded none (Apple silicon: 'Note: No CPU power status has been recorded')."""
    return {name: int(value) for name, value in _PMSET_LINE.findall(text or "")}


def read_macos(run: Any = _command) -> dict[str, Any]:
    """What macOS tells without sudo; `run(argv) -> stdout | None` is the command runner."""
    missing: dict[str, str] = {"governor": "macOS has no cpufreq governor"}
    freq = {key: parse_sysctl_hz(run(["sysctl", "-n", f"hw.{key}"]))
            for key in ("cpufrequency", "cpufrequency_min", "cpufrequency_max")}
    if freq["cpufrequency"] is None:
        missing["freq_mhz"] = "no hw.cpufrequency sysctl (Apple silicon)"
    limits = parse_pmset_therm(run(["pmset", "-g", "therm"]))
    speed_limit = limits.get("CPU_Speed_Limit")
    if speed_limit is None:
        missing["speed_limit_pct"] = "pmset -g therm recorded no CPU power status"
    return {"source": "sysctl, pmset -g therm", "governor": None,
            "freq_mhz": freq["cpufrequency"], "min_mhz": freq["cpufrequency_min"],
            "max_mhz": freq["cpufrequency_max"], "hw_max_mhz": freq["cpufrequency_max"],
            "boost": None, "smt": None, "speed_limit_pct": speed_limit, "pmset": limits,
            "missing": missing}


def read() -> dict[str, Any]:
    """This machine's CPU policy now (Linux sysfs, macOS sysctl/pmset, else nothing)."""
    system = platform.system()
    if system == "Linux":
        return read_linux()
    if system == "Darwin":
        return read_macos()
    return {"source": None, "missing": {"all": f"no CPU policy reader for {system}"}}
