"""The energy block of mm mode (``--energy SECONDS``, docs/LINES.md): the GPU's idle power
first, then matmuls back to back for at least SECONDS (5 s or more: NVML's total-energy counter,
in mJ, moves every ~100 ms), every counter read aligned to one of its updates (polled until it
changes), one ``LABEL SHAPE matmul energy (nvml): J.JJJ J, N runs, DUR`` line and one ``# energy
... idle W W over DUR, net J J, busy F`` line (net = joules less idle power times the block's
time; busy = runs x the kernel-time block's median / the block's time). ``pynvml`` (nvidia-ml-py) is
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
MIN_BLOCK_S = 5.0  # shorter blocks: a 100 ms counter step is > 2% of the block
IDLE_S = 1.0  # idle power is measured over at least this long, just before the block
TICK_GIVE_UP_S = 2.0  # NVML's energy counter moves every ~100 ms: 2 s without a change is a fault
POLL_S = 0.0005  # between two counter reads while waiting for it to move


@dataclass
class EnergyReading:
    millijoules: int
    runs: int
    elapsed_ns: int
    idle_mj: int | None = None  # the idle interval's energy and length, counter-aligned
    idle_ns: int | None = None

    @property
    def idle_watts(self) -> float | None:
        if not self.idle_mj or not self.idle_ns:
            return None
        return self.idle_mj / 1000 / (self.idle_ns / 1e9)

    @property
    def net_joules(self) -> float | None:
        watts = self.idle_watts
        return None if watts is None else self.millijoules / 1000 - watts * self.elapsed_ns / 1e9

    def busy(self, kernel_s: float | None) -> float | None:
        """The share of the block the GPU ran kernels: runs x one matmul's kernel time."""
        if kernel_s is None or kernel_s <= 0 or self.elapsed_ns <= 0:
            return None
        return self.runs * kernel_s / (self.elapsed_ns / 1e9)


class CounterStuck(Exception):
    """NVML's energy counter did not move within TICK_GIVE_UP_S."""


def next_tick(read_mj: Callable[[], int], clock: Callable[[], int],
              sleep: Callable[[float], None] = time.sleep) -> tuple[int, int]:
    """(clock, counter) at the first counter value after the current one: the read lands
    just after one of NVML's updates, not somewhere in the ~100 ms between two."""
    first = read_mj()
    give_up = clock() + fmt.seconds_to_ns(TICK_GIVE_UP_S)
    while True:
        value, now = read_mj(), clock()
        if value != first:
            return now, value
        if now >= give_up:
            raise CounterStuck
        sleep(POLL_S)


def measure_energy(
    run_batch: Callable[[], int],
    sync: Callable[[], None],
    read_mj: Callable[[], int],
    seconds: float,
    clock: Callable[[], int] = time.perf_counter_ns,
    sleep: Callable[[float], None] = time.sleep,
    idle_s: float | None = None,
) -> EnergyReading | None:
    """Idle power, then batches for at least ``seconds``, every counter read aligned.

    First the GPU idles (synced, nothing queued) from one counter update to the first update
    at least ``idle_s`` later: idle power. Then the block starts at a counter update, runs
    batches until ``seconds`` have passed, syncs, and ends at the next update: its wall time
    spans whole counter steps, so the joules are the energy of exactly that time (the last
    step's idle tail, at most ~100 ms, is in both the time and the joules). None if the
    counter did not move (within TICK_GIVE_UP_S at an end, or ``seconds + ENERGY_GIVE_UP_S``).
    """
    wanted_ns = fmt.seconds_to_ns(seconds)
    idle_s = IDLE_S if idle_s is None else idle_s
    try:
        sync()
        idle_t0, idle_e0 = next_tick(read_mj, clock, sleep)
        sleep(max(idle_s - TICK_GIVE_UP_S / 20, 0.0))
        idle_t1, idle_e1 = idle_t0, idle_e0
        while idle_t1 - idle_t0 < fmt.seconds_to_ns(idle_s):
            idle_t1, idle_e1 = next_tick(read_mj, clock, sleep)
        t0, first = next_tick(read_mj, clock, sleep)
        runs = 0
        give_up_ns = fmt.seconds_to_ns(seconds + ENERGY_GIVE_UP_S)
        while clock() - t0 < wanted_ns:
            runs += run_batch()
            sync()
            if clock() - t0 >= give_up_ns:
                return None
        t1, last = next_tick(read_mj, clock, sleep)
    except CounterStuck:
        return None
    return EnergyReading(last - first, runs, t1 - t0, idle_e1 - idle_e0, idle_t1 - idle_t0)


def uuid_key(text: str | bytes) -> str:
    """A GPU UUID as NVML (``GPU-…``, bytes in old pynvml) or torch (bare) writes it, compared."""
    value = text.decode() if isinstance(text, bytes) else str(text)
    value = value.strip().lower()
    return value[4:] if value.startswith("gpu-") else value


def nvml_handle(pynvml: Any, index: int) -> Any:
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


def energy_block(dev: Device, a: torch.Tensor, b: torch.Tensor, seconds: float,
                 kernel_s: float | None = None, sm: Any = None) -> None:
    """``LABEL SHAPE matmul energy (nvml): J J, N runs, DUR`` and its ``# energy`` line (idle
    power, net joules, busy share), or a note where NVML cannot. ``kernel_s``: one matmul's
    kernel time (the kernel-time block's median), for the busy share."""
    if dev.label != "cuda":
        fmt.note(f"--energy: NVML reads NVIDIA GPUs only; no energy line on {dev.label}")
        return
    try:
        import pynvml
    except ImportError:
        fmt.note("--energy: pynvml (the nvidia-ml-py package) is not installed; no energy line")
        return
    if seconds < MIN_BLOCK_S:
        fmt.note(f"--energy {seconds:g}: shorter than {MIN_BLOCK_S:g} s, a counter step "
                 "(~100 ms) is over 2% of the block")
    index = cuda_index(a)

    def run_batch() -> int:
        for _ in range(ENERGY_BATCH):
            _ = dev.mm(a, b)  # dropped at once: the allocator hands the same block back each time
        return ENERGY_BATCH

    try:
        pynvml.nvmlInit()
    except pynvml.NVMLError as exc:
        fmt.note(f"--energy: NVML did not start ({exc}); no energy line")
        return
    try:
        handle = nvml_handle(pynvml, index)

        def read_mj() -> int:
            return int(pynvml.nvmlDeviceGetTotalEnergyConsumption(handle))

        start_mhz = sm.read() if sm is not None else None
        reading = measure_energy(run_batch, dev.sync, read_mj, seconds)
        end_mhz = sm.read() if sm is not None else None
    except pynvml.NVMLError as exc:  # NotSupported before Volta, no permission, ...
        fmt.note(f"--energy: NVML's energy counter cannot be read ({exc}); no energy line")
        return
    finally:
        pynvml.nvmlShutdown()
    if reading is None:
        fmt.note(f"--energy: NVML's energy counter did not move (within {TICK_GIVE_UP_S:g} s "
                 f"at an end, or {seconds + ENERGY_GIVE_UP_S:g} s in all)")
        return
    print_reading(dev.label, f"{a.shape[0]}x{a.shape[1]}", reading, kernel_s)
    from .smclock import clock_line

    clock_line(dev.label, f"{a.shape[0]}x{a.shape[1]}", "energy (nvml)", start_mhz, end_mhz)


def print_reading(label: str, shape: str, reading: EnergyReading, kernel_s: float | None) -> None:
    """The energy line, then ``# energy LABEL SHAPE OP energy (nvml): idle W W over DUR, net J
    J, busy F`` (``busy`` only where the kernel time is known)."""
    fmt.emit(
        f"{label} {shape} {OP} energy (nvml): {reading.millijoules / 1000:.3f} J, "
        f"{reading.runs} runs, {fmt.format_duration_ns(reading.elapsed_ns)}"
    )
    watts, net, busy = reading.idle_watts, reading.net_joules, reading.busy(kernel_s)
    if watts is None or net is None or reading.idle_ns is None:
        return
    fmt.emit(
        f"# energy {label} {shape} {OP} energy (nvml): idle {watts:.3f} W over "
        f"{fmt.format_duration_ns(reading.idle_ns)}, net {net:.3f} J"
        + (f", busy {busy:.3f}" if busy is not None else "")
    )
