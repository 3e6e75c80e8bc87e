"""What each device can do at most: peak FLOP/s and memory bandwidth, with the source of each.

The one table of hardware limits the report holds figures against ("How cost grows", % of
peak). Every number names where it comes from: a vendor datasheet (GPUs), a derivation from
published unit counts and clocks (said so), or, for a CPU, cores × SIMD lanes × 2 flop per FMA ×
FMA units × clock, computed from what the sweep detected (host facts: flags, frequency) and
said so. A device this table does not know gets `Peak.unknown(...)`: "peak unknown", never a
guess. Dense figures only: NVIDIA's tensor-core numbers "with sparsity" are twice the dense ones.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from orchestrator import programs

TERA = 1e12

H200_SXM_SOURCE = ("NVIDIA H200 Tensor Core GPU datasheet (nvidia.com/en-us/data-center/h200), "
                   "H200 SXM column: FP32 67 TFLOPS, TF32 Tensor Core 989 TFLOPS *with sparsity* "
                   "(dense = half, 494.5), GPU memory bandwidth 4.8 TB/s HBM3e")
H200_NVL_SOURCE = ("NVIDIA H200 Tensor Core GPU datasheet, H200 NVL column: FP32 60 TFLOPS, "
                   "TF32 Tensor Core 835 TFLOPS with sparsity (dense 417.5), 4.8 TB/s")
H100_SXM_SOURCE = ("NVIDIA H100 Tensor Core GPU datasheet (nvidia.com/en-us/data-center/h100), "
                   "H100 SXM column: FP32 67 TFLOPS, TF32 Tensor Core 989 TFLOPS *with sparsity* "
                   "(dense = half, 494.5), GPU memory bandwidth 3.35 TB/s HBM3; NVML names the "
                   "SXM5 board 'NVIDIA H100 80GB HBM3' (the PCIe card 'NVIDIA H100 PCIe')")
M2_MAX_SOURCE = ("Apple newsroom 'Apple unveils M2 Pro and M2 Max' (2023-01-17): 400GB/s unified "
                 "memory bandwidth, 30- or 38-core GPU; FP32 derived, not published by Apple: "
                 "GPU cores × 128 FP32 ALUs × 2 flop per FMA × 1.398 GHz (the clock as a "
                 "third-party table gives it, hmc-tech.com/gpu/apple-9-core-m3-fl-vs-apple-38-"
                 "core-m2-max: 38-core M2 Max 4864 shaders, 1398 MHz, FP32 13.6 TFLOPS; its "
                 "30-core page 3840 shaders, 10.74 TFLOPS)")


@dataclass(frozen=True)
class Peak:
    """One device's limits (FLOP/s, bytes/s; None where not known) and where they come from."""

    device: str
    fp32: float | None
    tf32: float | None
    bandwidth: float | None
    source: str

    @classmethod
    def unknown(cls, device: str, why: str) -> Peak:
        return cls(device, None, None, None, f"peak unknown: {why}")

    def flops(self, precision: str) -> float | None:
        """The peak for a matmul of this arithmetic; None when unknown (or the arithmetic is)."""
        return {"fp32": self.fp32, "tf32": self.tf32}.get(precision)


# Published (or derived from published unit counts) peaks; key: the device's name.
PUBLISHED: dict[str, Peak] = {
    "NVIDIA H200 SXM": Peak("NVIDIA H200 SXM", 67 * TERA, 494.5 * TERA, 4.8 * TERA,
                            H200_SXM_SOURCE),
    "NVIDIA H200 NVL": Peak("NVIDIA H200 NVL", 60 * TERA, 417.5 * TERA, 4.8 * TERA,
                            H200_NVL_SOURCE),
    "NVIDIA H100 SXM": Peak("NVIDIA H100 SXM", 67 * TERA, 494.5 * TERA, 3.35 * TERA,
                            H100_SXM_SOURCE),
    # Apple GPUs have no TF32 format: an f32 matmul is f32 (README, precision)
    "Apple M2 Max 38-core GPU": Peak("Apple M2 Max 38-core GPU", 38 * 128 * 2 * 1.398e9, None,
                                     400e9, M2_MAX_SOURCE),
    "Apple M2 Max 30-core GPU": Peak("Apple M2 Max 30-core GPU", 30 * 128 * 2 * 1.398e9, None,
                                     400e9, M2_MAX_SOURCE),
}
# the H200's two boards differ by their power limit: 700 W SXM, 600 W NVL (datasheet, max TDP)
_H200_BOARDS = {700.0: "NVIDIA H200 SXM", 600.0: "NVIDIA H200 NVL"}
# x86-64 cores since Haswell issue two FMAs per cycle; flags cannot tell a one-unit part
X86_FMA_UNITS = 2


def gpu_peak(name: str, power_limit_w: float | None = None,
             gpu_cores: int | None = None) -> Peak:
    """The table's entry for a GPU as NVML (or the Mac's facts) named it."""
    if "H200" in name:
        board = _H200_BOARDS.get(round(power_limit_w or 0.0))
        if board is None:
            return Peak.unknown(name, "H200 board (SXM 700 W, NVL 600 W) not told by its power "
                                f"limit {power_limit_w} W")
        return PUBLISHED[board]
    if "H100 80GB HBM3" in name:  # the SXM5 board's NVML name; PCIe and NVL differ
        return PUBLISHED["NVIDIA H100 SXM"]
    if "M2 Max" in name:
        key = f"Apple M2 Max {gpu_cores}-core GPU"
        if key not in PUBLISHED:
            return Peak.unknown(name, "its GPU core count (30 or 38) was not recorded")
        return PUBLISHED[key]
    return Peak.unknown(name or "this GPU", "not in the peaks table (orchestrator/report/peaks.py)")


def simd_lanes(flags: list[str]) -> int | None:
    """f32 lanes of the widest FMA the CPU's flags show (AVX-512: 16, AVX2 + FMA: 8)."""
    if "avx512f" in flags:
        return 16
    if "avx2" in flags and "fma" in flags:
        return 8
    return None


def cpu_peak(host: dict[str, Any], threads: int, freq_mhz: float | None = None) -> Peak:
    """threads × SIMD lanes × 2 flop per FMA × FMA units × clock, from the detected facts.

    The clock is the one recorded around the runs (`freq_mhz`), else the sweep's; boost above it
    would raise the peak. Memory bandwidth is not measured here: unknown.
    """
    name = str(host.get("cpu_model") or "this CPU")
    if host.get("arch") != "x86_64":
        return Peak.unknown(name, "SIMD and FMA units are only derived for x86-64 CPUs")
    lanes = simd_lanes(list(host.get("cpu_flags") or []))
    clock = freq_mhz or _host_freq(host)
    if lanes is None or not clock or threads < 1:
        return Peak.unknown(name, "no FMA SIMD flags or no clock recorded")
    peak = threads * lanes * 2 * X86_FMA_UNITS * clock * 1e6
    cores = "1 core" if threads == 1 else f"{threads} cores"
    source = (f"computed from the detected facts: {cores} × {lanes} f32 lanes "
              f"({'AVX-512' if lanes == 16 else 'AVX2'}) × 2 flop per FMA × {X86_FMA_UNITS} FMA "
              f"units (assumed: not in the flags; a one-unit part has half) × {clock:.0f} MHz "
              "(as recorded); bandwidth not measured")
    return Peak(f"{name}, {cores}", peak, None, None, source)


def _host_freq(host: dict[str, Any]) -> float | None:
    state = host.get("cpu_state")
    if isinstance(state, dict):
        value = state.get("max_mhz") or state.get("freq_mhz")
        return float(value) if value else None
    return None


def device_peak(device: str, host: dict[str, Any], threads: int | None = None,
                power_limit_w: float | None = None, freq_mhz: float | None = None) -> Peak:
    """The peak a figure of `device` is held against, from the sweep's host facts."""
    if device in programs.cpu_devices():
        if threads is None:
            return Peak.unknown("CPU", "the thread count is not known")
        return cpu_peak(host, threads, freq_mhz)
    gpus = host.get("gpus") or []
    if device == "cuda":
        name = str(gpus[0].get("name", "")) if gpus else ""
        return gpu_peak(name, power_limit_w) if name else \
            Peak.unknown("cuda GPU", "no GPU in the host facts")
    if device in ("mps", "metal"):
        model = str(host.get("cpu_model") or "")
        cores = host.get("gpu_cores")
        return gpu_peak(model, None, int(cores) if cores else None) if model else \
            Peak.unknown(f"{device} GPU", "no host facts (a captured log)")
    return Peak.unknown(device, "not in the peaks table (orchestrator/report/peaks.py)")
