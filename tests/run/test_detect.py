"""Capability detection on macOS, from recorded outputs of the commands it uses.

The Mac transcripts in tests/data/macos/ are transcribed (no Mac here), the Linux one captured
on this box; the commands' stdout is injected through detect.Host's runner and torch's probe
runner, nothing of `platform` is patched. The probe commands themselves are run for real here,
so a probe that stops being valid Python or stops printing what the transcripts say fails.
"""

from __future__ import annotations

import subprocess
import sys

import pytest

from orchestrator.cli import main
from orchestrator.errors import InputError
from orchestrator.programs.torch import MPS_PROBE, Torch
from orchestrator.run import detect
from orchestrator.run.detect import Host, assumed, machine_capabilities
from orchestrator.run.machine import capabilities, cpu_count

from ..conftest import PROJECT
from ..transcripts import PYTHON, host

MAC = ["macos", "arm64", "apple-silicon", "mps", "metal"]


def test_m2_max_has_every_capability_the_chapter_used() -> None:
    mac, asked = host("m2_max")
    caps = machine_capabilities(mac, nvidia=False, vulkan=False)
    assert {c for c, why in caps.items() if why is None} == {"macos", "arm64", "apple-silicon",
                                                             "metal"}
    assert caps["x86_64"] == "needs x86-64 (this is arm64)"
    assert caps["linux"] == "needs Linux (this is Darwin)"
    assert asked.asked == ["sw_vers -productVersion"]  # native arm64: no sysctl needed
    torch = Torch().capabilities(PYTHON, system=mac.system, run=asked)
    assert torch == {"torch": None, "mps": None}
    assert asked.asked[-1] == f"python -c '{MPS_PROBE}'"  # MPS is torch's own answer


def test_auto_threads_on_an_m2_max_are_its_8_performance_cores() -> None:
    """The chapter ran 1 and 8 threads on its 12-core M2 Max: 8 performance cores."""
    mac, asked = host("m2_max")
    assert cpu_count(mac) == 8
    assert asked.asked == ["sysctl -n hw.perflevel0.physicalcpu"]


def test_an_intel_mac_has_metal_but_not_apple_silicon() -> None:
    mac, asked = host("intel_mac")
    caps = machine_capabilities(mac, nvidia=False, vulkan=False)
    assert caps["metal"] is None and caps["macos"] is None and caps["x86_64"] is None
    assert caps["apple-silicon"] == ("needs Apple silicon (this Mac's CPU is "
                                     "Intel(R) Core(TM) i9-9980HK CPU @ 2.40GHz)")
    assert caps["arm64"] == "needs arm64 (this is x86_64)"
    assert "sysctl -n hw.optional.arm64" in asked.asked
    assert cpu_count(mac) >= 1  # no hw.perflevel0: all of os.cpu_count()


def test_a_python_under_rosetta_on_apple_silicon_is_told_to_use_an_arm64_one() -> None:
    mac, _asked = host("m2_max_rosetta")
    why = machine_capabilities(mac, nvidia=False, vulkan=False)["apple-silicon"]
    assert why == ("needs Apple silicon: this Mac is, but this Python runs as x86_64 (Rosetta); "
                   "use an arm64 Python")


@pytest.mark.parametrize(("version", "why"), [
    ("10.13.6", "needs macOS for Metal 10.14 or later (this is macOS 10.13.6)"),
    (None, "needs macOS for Metal 10.14 or later (sw_vers did not say which macOS this is)"),
    ("10.14", None), ("27.0", None)])
def test_metal_follows_the_macos_version(version: str | None, why: str | None) -> None:
    def sw_vers(argv: list[str]) -> str | None:
        assert argv == ["sw_vers", "-productVersion"]
        return version

    assert detect.metal(Host("Darwin", "arm64", sw_vers)) == why


@pytest.mark.parametrize(("answer", "why"), [
    ("True False", "torch has MPS but says it is not available here "
                   "(torch.backends.mps.is_available() is False: macOS 12.3+ and a Metal GPU)"),
    ("False False", "this torch was built without MPS (torch.backends.mps.is_built() is False)"),
    (None, f"could not ask torch whether MPS works (python -c '{MPS_PROBE}' failed)")])
def test_mps_is_what_torch_says_on_a_mac(answer: str | None, why: str) -> None:
    def probe(argv: list[str]) -> str | None:
        return answer if argv[-1] == MPS_PROBE else ""

    assert Torch().capabilities(PYTHON, system="Darwin", run=probe)["mps"] == why


def test_on_linux_torch_is_not_imported_to_ask_about_mps() -> None:
    linux, asked = host("this_linux_box")
    caps = Torch().capabilities(PYTHON, system=linux.system, run=asked)
    assert caps == {"torch": None, "mps": "needs Apple silicon with MPS (this is Linux)"}
    assert all(MPS_PROBE not in command for command in asked.asked)
    asked.asked.clear()
    assert detect.performance_cores(linux) is None and asked.asked == []


def test_the_probes_run_for_real_and_print_what_the_transcripts_hold() -> None:
    """This box's torch has no MPS: the probe prints 'False False', the captured answer."""
    done = subprocess.run([sys.executable, "-c", MPS_PROBE], capture_output=True, text=True,
                          timeout=300, check=True)
    linux, _ = host("this_linux_box")
    assert done.stdout.strip() == linux.run(["python", "-c", MPS_PROBE])
    platform_line = subprocess.run(
        [sys.executable, "-c", "import platform; print(platform.system(), platform.machine())"],
        capture_output=True, text=True, check=True).stdout.split()
    assert platform_line == [Host.this().system, Host.this().machine]


def test_this_machine_is_detected_through_the_same_functions() -> None:
    caps = capabilities(sys.executable)
    assert caps["torch"] is None
    if Host.this().system == "Linux":
        assert caps["mps"] == "needs Apple silicon with MPS (this is Linux)"
        assert caps["metal"] == "needs macOS for Metal (this is Linux)"
        assert caps["linux"] is None and caps["macos"] == "needs macOS (this is Linux)"


def test_assume_cuda_adds_only_cuda() -> None:
    here = machine_capabilities(host("this_linux_box")[0], nvidia=False, vulkan=False)
    caps = assumed({**here, "torch": None}, ["cuda"])
    assert caps["cuda"] is None and caps["linux"] is None and caps["x86_64"] is None
    assert caps["macos"] == here["macos"] and caps["metal"] == here["metal"]


def test_assume_an_os_describes_another_machine() -> None:
    here = machine_capabilities(host("this_linux_box")[0], nvidia=True, vulkan=True)
    caps = assumed({**here, "torch": None, "mps": "needs Apple silicon with MPS"}, MAC)
    present = {c for c, why in caps.items() if why is None}
    assert present == {*MAC, "torch"}  # what programs probe stays this machine's answer
    other = "(not in --assume macos arm64 apple-silicon mps metal)"
    assert caps["x86_64"] == f"needs x86-64 {other}"
    assert caps["linux"] == f"needs Linux {other}"
    assert caps["cuda"] == f"needs an NVIDIA GPU {other}"  # this box's GPU is not the Mac's
    assert caps["vulkan"] == f"needs a Vulkan driver {other}"


def test_assume_with_two_oses_is_a_users_mistake(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(InputError, match="--assume: macos and linux together"):
        assumed({}, ["macos", "linux"])
    with pytest.raises(InputError, match="--assume: x86_64 and arm64 together"):
        assumed({}, ["linux", "x86_64", "arm64"])
    assert main(["plan", str(PROJECT / "experiments.yaml"), "--assume", "macos", "linux"]) == 2
    assert "error: --assume: macos and linux together" in capsys.readouterr().err
