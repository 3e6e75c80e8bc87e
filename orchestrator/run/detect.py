"""What kind of machine this is: OS, architecture, Apple silicon, Metal, the cores 'auto' means;
and `--assume`'s picture of another machine.

Every answer comes from `platform` and from the commands that tell (`sysctl`, `sw_vers`),
asked through a `Host`, so that tests give a Host whose commands answer from recorded outputs
(tests/data/macos/). MPS is not decided here: only torch knows whether its MPS backend works
(programs/torch/ asks it).
"""

from __future__ import annotations

import platform
import re
import shutil
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path

from orchestrator.errors import InputError
from orchestrator.programs import probe

Runner = Callable[[list[str]], "str | None"]  # a command's stdout, None if missing or failing

# Mojave (10.14) is the first macOS that only runs on Macs with a Metal GPU, and wgpu's Metal
# backend (burn's `metal`) needs 10.13: from 10.14 on, the version alone says Metal is there.
METAL_MACOS = (10, 14)
# What each machine capability needs, in a skip reason's words.
NEEDS = {
    "cuda": "needs an NVIDIA GPU",
    "mps": "needs Apple silicon with MPS",
    "metal": "needs macOS for Metal",
    "vulkan": "needs a Vulkan driver",
    "macos": "needs macOS",
    "linux": "needs Linux",
    "x86_64": "needs x86-64",
    "arm64": "needs arm64",
    "apple-silicon": "needs Apple silicon",
    # gemm picks its AVX-512 kernels at run time: without avx512f the x86-v4 build runs the
    # default build's AVX2 kernels, a row that measures nothing new
    "avx512f": "needs a CPU with AVX-512 (avx512f), else gemm runs the default build's AVX2 "
               "kernels",
}
OPERATING_SYSTEMS = ("macos", "linux")
ARCHITECTURES = ("x86_64", "arm64")


def quiet(argv: list[str], timeout: float = 20) -> str | None:
    """stdout of a fact-finding command, or None when it is missing or fails."""
    if shutil.which(argv[0]) is None:
        return None
    out = probe.stdout_of(argv, timeout)  # a hung command's whole process group is killed
    return out.strip() if out is not None else None


@dataclass(frozen=True)
class Host:
    """A machine as detection sees it: `platform.system()`, `platform.machine()`, and a way
    to run the commands that tell the rest."""

    system: str
    machine: str
    run: Runner = field(default=quiet, compare=False)
    # Linux's CPU flags ('flags' line); tests give a captured one
    cpuinfo: Path = field(default=Path("/proc/cpuinfo"), compare=False)

    @classmethod
    def this(cls) -> Host:
        return cls(platform.system(), platform.machine())

    @property
    def macos(self) -> bool:
        return self.system == "Darwin"

    @property
    def arch(self) -> str:
        return self.machine.lower()

    @property
    def arm(self) -> bool:
        return self.arch in ("arm64", "aarch64")


def apple_silicon(host: Host) -> str | None:
    """None on Apple silicon running this Python natively, else why not.

    `platform.machine()` says what this Python runs as; under Rosetta it says x86_64 on an
    Apple silicon Mac, which `sysctl hw.optional.arm64` (1 there, unknown on Intel Macs) tells
    apart: the builds would then be x86-64 ones, so the capability is absent, with the fix."""
    if not host.macos:
        return f"{NEEDS['apple-silicon']} (this is {host.system} {host.machine})"
    if host.arm:
        return None
    if host.run(["sysctl", "-n", "hw.optional.arm64"]) == "1":
        return (f"{NEEDS['apple-silicon']}: this Mac is, but this Python runs as {host.machine} "
                "(Rosetta); use an arm64 Python")
    cpu = host.run(["sysctl", "-n", "machdep.cpu.brand_string"]) or host.machine
    return f"{NEEDS['apple-silicon']} (this Mac's CPU is {cpu})"


def metal(host: Host) -> str | None:
    """None on a macOS recent enough that its GPU supports Metal, else why not.

    `sw_vers -productVersion` (milliseconds) rather than `system_profiler SPDisplaysDataType`
    (seconds, and its 'Metal Support' line changed wording across releases): since 10.14 every
    Mac that runs macOS has a Metal GPU, so the version is enough."""
    if not host.macos:
        return f"{NEEDS['metal']} (this is {host.system})"
    version = host.run(["sw_vers", "-productVersion"])
    numbers = tuple(int(n) for n in re.findall(r"\d+", version or "")[:2])
    if not numbers:
        return f"{NEEDS['metal']} 10.14 or later (sw_vers did not say which macOS this is)"
    if numbers < METAL_MACOS:
        return f"{NEEDS['metal']} 10.14 or later (this is macOS {version})"
    return None


def cpu_flags(host: Host) -> frozenset[str] | None:
    """The CPU's feature flags in lower case: Linux's /proc/cpuinfo 'flags' line, an Intel
    Mac's `sysctl machdep.cpu.features` and `leaf7_features` (AVX512F is a leaf-7 flag);
    None where neither tells (Apple silicon has no such sysctl: no x86 flags at all)."""
    if host.macos:
        words = [host.run(["sysctl", "-n", f"machdep.cpu.{key}"]) or ""
                 for key in ("features", "leaf7_features")]
        flags = frozenset(" ".join(words).lower().split())
        return flags or None
    try:
        text = host.cpuinfo.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return None
    match = re.search(r"^flags\s*:\s*(.*)$", text, re.M)
    return frozenset(match.group(1).lower().split()) if match else None


def avx512f(host: Host) -> str | None:
    """None when the CPU has AVX-512 Foundation (what gemm's x86-v4 kernels check at run
    time), else why not. Only an x86-64 CPU is asked (AVX-512 is an x86 extension)."""
    if host.arch not in ("x86_64", "amd64"):
        return f"{NEEDS['avx512f']} (this is {host.arch})"
    flags = cpu_flags(host)
    if flags is None:
        return f"{NEEDS['avx512f']} (no CPU flags readable here: {host.system} {host.machine})"
    if "avx512f" in flags:
        return None
    return f"{NEEDS['avx512f']} (this CPU's flags have no avx512f)"


def performance_cores(host: Host) -> int | None:
    """The performance cores of an Apple silicon Mac (`sysctl hw.perflevel0.physicalcpu`: 8 on
    the chapter's M2 Max, which has 4 efficiency cores besides), None elsewhere. The chapter's
    'all cores' is 8 there: torch's own default thread count, and the count it ran."""
    if not host.macos:
        return None
    out = host.run(["sysctl", "-n", "hw.perflevel0.physicalcpu"])
    return int(out) if out and out.isdigit() and int(out) > 0 else None


def machine_capabilities(host: Host, nvidia: bool, vulkan: bool) -> dict[str, str | None]:
    """The machine's own capabilities (not the programs'): None if present, else why not."""
    system, arch = host.system, host.arch
    return {
        "cuda": None if nvidia else
        f"{NEEDS['cuda']} (no /dev/nvidia0, no working nvidia-smi)",
        "metal": metal(host),
        "vulkan": None if vulkan else f"{NEEDS['vulkan']} (no ICD files found)",
        "macos": None if host.macos else f"{NEEDS['macos']} (this is {system})",
        "linux": None if system == "Linux" else f"{NEEDS['linux']} (this is {system})",
        "x86_64": None if arch in ("x86_64", "amd64") else f"{NEEDS['x86_64']} (this is {arch})",
        "arm64": None if host.arm else f"{NEEDS['arm64']} (this is {arch})",
        "apple-silicon": apple_silicon(host),
        "avx512f": avx512f(host),
    }


def assumed(caps: dict[str, str | None], assume: Iterable[str]) -> dict[str, str | None]:
    """The capabilities with `--assume` applied.

    Capabilities alone (`--assume cuda`: build here for a GPU machine of the same kind) are
    added to this machine's. An OS or an architecture among them describes another machine:
    then every machine capability (NEEDS) is what the list says, nothing of this host's
    (x86_64, linux, cuda are absent unless named); what programs probe (torch) stays."""
    names = list(dict.fromkeys(assume))
    for kind in (OPERATING_SYSTEMS, ARCHITECTURES):
        both = [n for n in names if n in kind]
        if len(both) > 1:
            raise InputError(f"--assume: {' and '.join(both)} together; one machine has one "
                             f"of {', '.join(kind)}")
    if not set(names) & {*OPERATING_SYSTEMS, *ARCHITECTURES}:
        return caps | dict.fromkeys(names)
    other = " ".join(names)
    machine = {cap: f"{why} (not in --assume {other})" for cap, why in NEEDS.items()}
    return caps | machine | dict.fromkeys(names)
