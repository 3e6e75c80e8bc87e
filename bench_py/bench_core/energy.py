"""The energy block of mm mode (``--energy SECONDS``, docs/LINES.md): matmuls back to back for
at least SECONDS until NVML's total-energy counter (mJ) has moved, one
``LABEL SHAPE matmul energy (nvml): J.JJJ J, N runs, DUR`` line. ``pynvml`` (nvidia-ml-py) is
imported only here; where NVML cannot answer, a ``note:`` on stderr and no line. The twin of
``bench-core/src/energy.rs``.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from . import format as fmt
from .facts import Device, cuda_index
from .format import OP

if TYPE_CHECKING:
    import torch


ENERGY_BATCH = 100  # matmuls between two looks at the clock (each look is a sync)
ENERGY_GIVE_UP_S = 10.0  # beyond SECONDS: a counter that has not moved by then never will


@dataclass
class EnergyReading:
    millijoules: int
    runs: int
    elapsed_ns: int


def measure_energy(
    run_batch: Callable[[], int],
    sync: Callable[[], None],
    read_mj: Callable[[], int],
    seconds: float,
    clock: Callable[[], int] = time.perf_counter_ns,
) -> EnergyReading | None:
    """Run batches until ``seconds`` have passed and the energy counter has moved.

    The clock is read right after a sync, before each counter read, so the wall time spans
    exactly the work between the two reads. None if the counter did not move within
    ``seconds + ENERGY_GIVE_UP_S``.
    """
    wanted_ns = fmt.seconds_to_ns(seconds)
    give_up_ns = fmt.seconds_to_ns(seconds + ENERGY_GIVE_UP_S)
    sync()
    t0 = clock()
    first = read_mj()
    runs = 0
    while True:
        runs += run_batch()
        sync()
        elapsed = clock() - t0
        if elapsed < wanted_ns:
            continue
        last = read_mj()
        if last != first:
            return EnergyReading(last - first, runs, elapsed)
        if elapsed >= give_up_ns:
            return None


def uuid_key(text: str | bytes) -> str:
    """A GPU UUID as NVML (``GPU-…``, bytes in old pynvml) or torch (bare) writes it, compared."""
    value = text.decode() if isinstance(text, bytes) else str(text)
    value = value.strip().lower()
    return value[4:] if value.startswith("gpu-") else value


def _nvml_handle(pynvml: Any, index: int) -> Any:
    """The NVML device of torch's CUDA device ``index``: by UUID, else NVML's index 0."""
    import torch

    wanted = uuid_key(str(getattr(torch.cuda.get_device_properties(index), "uuid", "")))
    for nvml_index in range(pynvml.nvmlDeviceGetCount()):
        handle = pynvml.nvmlDeviceGetHandleByIndex(nvml_index)
        if wanted and uuid_key(pynvml.nvmlDeviceGetUUID(handle)) == wanted:
            return handle
    fmt.note(
        f"energy: no NVML device has the UUID of cuda:{index} ({wanted or 'unknown'}); "
        "reading NVML device 0"
    )
    return pynvml.nvmlDeviceGetHandleByIndex(0)


def energy_block(dev: Device, a: torch.Tensor, b: torch.Tensor, seconds: float) -> None:
    """``LABEL SHAPE matmul energy (nvml): J J, N runs, DUR``, or a note where NVML cannot."""
    if dev.label != "cuda":
        fmt.note(f"--energy: NVML reads NVIDIA GPUs only; no energy line on {dev.label}")
        return
    try:
        import pynvml
    except ImportError:
        fmt.note("--energy: pynvml (the nvidia-ml-py package) is not installed; no energy line")
        return
    index = cuda_index(a)

    def run_batch() -> int:
        for _ in range(ENERGY_BATCH):
            _ = a @ b  # dropped at once: the allocator hands the same block back each time
        return ENERGY_BATCH

    try:
        pynvml.nvmlInit()
    except pynvml.NVMLError as exc:
        fmt.note(f"--energy: NVML did not start ({exc}); no energy line")
        return
    try:
        handle = _nvml_handle(pynvml, index)

        def read_mj() -> int:
            return int(pynvml.nvmlDeviceGetTotalEnergyConsumption(handle))

        reading = measure_energy(run_batch, dev.sync, read_mj, seconds)
    except pynvml.NVMLError as exc:  # NotSupported before Volta, no permission, ...
        fmt.note(f"--energy: NVML's energy counter cannot be read ({exc}); no energy line")
        return
    finally:
        pynvml.nvmlShutdown()
    if reading is None:
        waited = seconds + ENERGY_GIVE_UP_S
        fmt.note(f"--energy: NVML's energy counter did not move in {waited:g} s")
        return
    shape = f"{a.shape[0]}x{a.shape[1]}"
    fmt.emit(
        f"{dev.label} {shape} {OP} energy (nvml): {reading.millijoules / 1000:.3f} J, "
        f"{reading.runs} runs, {fmt.format_duration_ns(reading.elapsed_ns)}"
    )

