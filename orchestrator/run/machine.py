"""The machine's state: what it can run, its facts, and its load.

Timing numbers only mean something next to the machine that produced them: the chapter quotes a
1-minute load of 24, 7 and 19 beside its figures. This module detects capabilities (for the plan's
skip reasons), gathers host facts once per sweep, and reads the load average around every run.
"""

from __future__ import annotations

import os
import platform
import re
import shutil
import sys
import time
from collections.abc import Collection
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import psutil

from orchestrator import programs
from orchestrator.programs.base import UNPROBED
from orchestrator.run import cpu_state, detect, fact_commands
from orchestrator.run.detect import Host


@dataclass(frozen=True)
class Load:
    load1: float
    load5: float
    load15: float
    at: float

    @classmethod
    def now(cls) -> Load:
        one, five, fifteen = psutil.getloadavg()
        return cls(round(one, 2), round(five, 2), round(fifteen, 2), time.time())


def cpu_count(host: Host | None = None) -> int:
    """Cores this process may use (affinity-aware): the chapter's N for 'auto' threads. On
    Apple silicon the performance cores (8 on the chapter's M2 Max, not its 12 in all)."""
    host = host or Host.this()
    if host.macos:
        return detect.performance_cores(host) or os.cpu_count() or 1
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # another Unix without affinity
        return os.cpu_count() or 1


def has_nvidia_gpu() -> bool:
    return Path("/dev/nvidia0").exists() or bool(detect.quiet(["nvidia-smi", "-L"]))


def capabilities(python: str = sys.executable) -> dict[str, str | None]:
    """Every capability the experiments file may require: None if present, else why not.
    The machine's own (run/detect.py); what only a program can probe (is torch importable,
    does its MPS backend work?) it says."""
    vulkan = any(Path(p).exists() for p in ("/usr/share/vulkan/icd.d", "/etc/vulkan/icd.d"))
    return {
        **detect.machine_capabilities(Host.this(), has_nvidia_gpu(), vulkan),
        # profile runs (experiments' `profile: [ncu]`) start the program under Nsight Compute
        "ncu": None if shutil.which("ncu") else "Nsight Compute (ncu) is not on PATH",
    } | {cap: why for program in programs.active().programs
         for cap, why in program.capabilities(python).items()}


def cpu_model() -> str:
    """The CPU's model name (/proc/cpuinfo, sysctl on macOS)."""
    cpuinfo = Path("/proc/cpuinfo")
    if cpuinfo.exists():
        match = re.search(r"^model name\s*:\s*(.+)$", cpuinfo.read_text(), re.M)
        if match:
            return match.group(1).strip()
    return detect.quiet(["sysctl", "-n", "machdep.cpu.brand_string"]) or platform.processor()


def _cpu_flags() -> list[str]:
    cpuinfo = Path("/proc/cpuinfo")
    if not cpuinfo.exists():
        return []
    match = re.search(r"^flags\s*:\s*(.+)$", cpuinfo.read_text(), re.M)
    wanted = ("avx2", "fma", "avx512f", "avx512vl", "amx_tile")
    return [f for f in (match.group(1).split() if match else []) if f in wanted]


def _gpus() -> list[dict[str, str]]:
    """Each NVIDIA GPU: name, driver, memory and its UUID (which card it was: two sweeps on
    machines of one kind may have run on two cards, and compare says so)."""
    out = detect.quiet(["nvidia-smi", "--query-gpu=name,driver_version,memory.total,uuid",
                        "--format=csv,noheader"])
    gpus = []
    for line in (out or "").splitlines():
        parts = [p.strip() for p in line.split(",")]
        if len(parts) in (3, 4):
            gpu = {"name": parts[0], "driver": parts[1], "memory": parts[2]}
            gpus.append({**gpu, "uuid": parts[3]} if len(parts) == 4 else gpu)
    return gpus


FACT_TIMEOUT_S = 20.0  # for all of a sweep start's fact commands together (fact_commands)
HUNG = "facts_hung"  # host facts' key: the fact commands that did not answer (said at start)
HUNG_AT = "facts_hung_at"  # those an earlier sweep start found hung (not asked): when


def _asked(project: Path) -> dict[str, list[str]]:
    return {"rustc": ["rustc", "--version"], "cargo": ["cargo", "--version"],
            "git_head": ["git", "-C", str(project), "rev-parse", "HEAD"],
            "git_dirty": ["git", "-C", str(project), "status", "--porcelain",
                          "--untracked-files=no"],
            "ncu": ["ncu", "--version"]}


def hung_note(facts: dict[str, Any]) -> str | None:
    """The line a sweep says when fact commands hung as it began, or were found hung by an
    earlier sweep start (then not asked: they cost their timeout once)."""
    hung = facts.get(HUNG) or []
    if not hung:
        return None
    at = facts.get(HUNG_AT) or {}
    before = [c for c in hung if isinstance(at.get(c), (int, float))]
    now = [c for c in hung if c not in before]
    said = []
    if now:
        said.append(f"{', '.join(now)} did not answer in {FACT_TIMEOUT_S:g} s (killed; recorded "
                    "as unknown)")
    if before:
        when = time.strftime("%Y-%m-%d %H:%M", time.localtime(min(at[c] for c in before)))
        said.append(f"{', '.join(before)} did not answer at a sweep start ({when}; recorded as "
                    "unknown)")
    return "; ".join(said) + ": not asked again until it changes or for a day; mend it or " \
        "take it off PATH"


def git_commit(head: str | None, dirty: str | None) -> str | None:
    """The project's commit, '-dirty' when `git status --porcelain` listed changes."""
    if head and dirty:
        return head + "-dirty"
    return head


def ncu_version(text: str | None) -> str | None:
    """`Version 2025.3.1.0 (build ...)` from `ncu --version`'s output: the profile runs' tool."""
    lines = [line.strip() for line in (text or "").splitlines() if line.strip()]
    found = [line for line in lines if line.startswith("Version ")]
    return found[-1].removeprefix("Version ") if found else (lines[-1] if lines else None)


def host_facts(project: Path, python: str = sys.executable,
               used: Collection[str] | None = None) -> dict[str, Any]:
    """Facts recorded once per sweep: the machine's, and those of the programs in `used` (the
    ones its plan runs; None: every registered program)."""
    mem = psutil.virtual_memory()
    told, hung = fact_commands.ask(_asked(project), FACT_TIMEOUT_S)
    earlier = {line: at for line, at in hung.items() if at is not None}
    return {
        "hostname": platform.node(),
        "os": f"{platform.system()} {platform.release()}",
        "platform": platform.platform(),
        "arch": platform.machine(),
        "cpu_model": cpu_model(),
        "cpu_flags": _cpu_flags(),
        "cores_physical": psutil.cpu_count(logical=False),
        "cores_logical": psutil.cpu_count(logical=True),
        "cores_usable": cpu_count(),
        "memory_bytes": mem.total,
        "gpus": _gpus(),
        "python": platform.python_version(),
        "python_executable": python,
        "rustc": told["rustc"],
        "cargo": told["cargo"],
        # the project's commit, '-dirty' if edited
        "git_commit": git_commit(told["git_head"], told["git_dirty"]),
        "ncu": ncu_version(told["ncu"]),
        "load": asdict(Load.now()),
        "cpu_state": cpu_state.read(),  # governor, frequency, boost, SMT (and per run)
        **program_facts(project, python, used),
        **({HUNG: list(hung)} if hung else {}),
        **({HUNG_AT: earlier} if earlier else {}),
    }


def program_facts(project: Path, python: str,
                  used: Collection[str] | None = None) -> dict[str, Any]:
    """Each program's own facts (torch: version, CUDA, BLAS; burn: the version it pins), of the
    programs in `used` only: torch's and JAX's each import the framework in a Python of their
    own (~2 s of CPU), which a sweep of other programs has no use for. The others are named
    under UNPROBED."""
    every = programs.active().programs
    asked = [p for p in every if used is None or p.name in used]
    left = [p.name for p in every if p not in asked]
    return {**{p.name: p.facts(project, python) for p in asked},
            **({UNPROBED: left} if left else {})}


def to_probe(used: Collection[str], recorded: dict[str, Any] | None) -> set[str]:
    """The programs whose facts a sweep start asks: those its plan runs, less those the sweep
    it resumes (`recorded`: its host facts; None for a new sweep) already recorded."""
    return {name for name in used if recorded is None or name not in recorded}


def widened(recorded: dict[str, Any], facts: dict[str, Any]) -> dict[str, Any] | None:
    """A resumed sweep's host facts with the programs' facts this start probed that they lack
    (a resume with a wider `--only`), else None: the machine's facts stay the first start's."""
    names = {p.name for p in programs.active().programs}
    added = {k: v for k, v in facts.items() if k in names and k not in recorded}
    if not added:
        return None
    left = [n for n in recorded.get(UNPROBED) or [] if n not in added]
    grown = {k: v for k, v in recorded.items() if k != UNPROBED} | added
    return grown | ({UNPROBED: left} if left else {})


def others_busy_share(seconds: float = 0.5) -> float:
    """Fraction of all cores busy over `seconds` while this process sleeps (others' load).

    Sharper than the load average (a 1-minute mean) for deciding that a machine is quiet right
    now; 0.0 where /proc/stat does not exist."""
    if not Path("/proc/stat").exists():
        return 0.0
    busy0, total0 = cpu_jiffies()
    time.sleep(seconds)
    busy1, total1 = cpu_jiffies()
    return (busy1 - busy0) / max(total1 - total0, 1)


def cpu_jiffies() -> tuple[int, int]:
    """(busy, total) jiffies of all cores since boot (Linux)."""
    values = [int(x) for x in Path("/proc/stat").read_text().split("\n")[0].split()[1:]]
    idle = values[3] + values[4]
    return sum(values) - idle, sum(values)


def wait_idle(max_wait_s: float, busy_below: float = 0.25, poll_s: float = 2) -> float:
    """Wait (bounded) until others use less than `busy_below` of the machine; the last share."""
    deadline = time.monotonic() + max_wait_s
    busy = others_busy_share()
    while busy > busy_below and time.monotonic() < deadline:
        time.sleep(poll_s)
        busy = others_busy_share()
    return busy
