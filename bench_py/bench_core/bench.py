"""The modes: ``mm`` (the chapter's timing methods, then the CUDA blocks beyond the chapter:
queued device time, kernel time, the profile window, energy) and ``accuracy`` (a deterministic
matmul written as ``.npy`` for the orchestrator to compare). The twin of
``bench-core/src/bench.rs`` (whose ``warm`` mode is burn only).
"""

from __future__ import annotations

import time
import timeit
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from . import compiled, energy, facts, kernels, megacache, queued, smclock, window
from . import format as fmt
from .facts import Device, cuda_index
from .format import OP

if TYPE_CHECKING:
    import torch


@dataclass
class Extras:
    """What the blocks beyond the chapter were asked for (``--dump-kernels``, ``--energy``)."""

    dump_kernels: Path | None = None
    energy_s: float = 0.0
    precision: str = "fp32"
    profile_window: bool = False
    exec_mode: str = compiled.EAGER
    artifacts: megacache.Artifacts | None = None  # torch.compile's mega-cache blob


def run_mm(
    dev: Device, m: int, n: int, reps: int, show_samples: bool, extras: Extras | None = None
) -> None:
    import torch
    import torch.utils.benchmark as benchmark

    shape = f"{m}x{n}"
    label = dev.label
    sync = dev.sync
    clock = time.perf_counter_ns

    # Device init: the first operations that touch the device, up to the first synchronize.
    # Inputs uniform in [-1, 1), as burn's (bench-core's pseudo_random): the same
    # distribution in both programs, so the energy (which depends on the bits) compares.
    torch.manual_seed(0)
    t0 = clock()
    a = torch.empty(m, n, device=dev.device).uniform_(-1.0, 1.0)
    b = torch.empty(n, m, device=dev.device).uniform_(-1.0, 1.0)
    sync()
    fmt.emit(f"{label}: device init {fmt.format_duration_ns(clock() - t0)}")

    # First call of the process: on an accelerator the call may return before the work is done.
    # A compiled mode's first call traces and compiles (taken apart on the lines after it);
    # CUDA graphs' warms up, captures and replays once. Every later block times `dev.mm`.
    extras = extras or Extras()
    first = compiled.prepare(dev, extras.exec_mode, a, b, shape, extras.artifacts)
    mm = dev.mm = first.mm
    returned, after_sync = first.returned_ns, first.after_ns
    if dev.is_accelerator:
        fmt.emit(
            f"{label} {shape} {OP} first call: returned {fmt.format_duration_ns(returned)}, "
            f"after sync {fmt.format_duration_ns(after_sync)}"
        )
    else:
        fmt.emit(f"{label} {shape} {OP} first call: {fmt.format_duration_ns(returned)}")
    first.emit()  # a mode's breakdown, autotune and cache lines (eager: none)

    # The SM clock at each timed block's start and end (NVML, CUDA; outside the timing)
    sm = smclock.open_clock(label, cuda_index(a) if label == "cuda" else 0)

    # No sync / with sync: the chapter's loop exactly (c is dropped only after the sync).
    nosync: list[int] = []
    synced: list[int] = []
    start_mhz = sm.read()
    for _ in range(reps):
        t = clock()
        c = mm(a, b)
        nosync.append(clock() - t)
        sync()
        synced.append(clock() - t)
        del c
    end_mhz = sm.read()
    fmt.report(label, shape, "no sync", fmt.ns_to_s(nosync), show_samples)
    fmt.report(label, shape, "with sync", fmt.ns_to_s(synced), show_samples)
    for method in ("no sync", "with sync"):  # one loop: the same clocks for both
        smclock.clock_line(label, shape, method, start_mhz, end_mhz)

    # Device time: the chapter's event_time, on accelerators only.
    if dev.is_accelerator:
        make_event = facts.event_factory(dev)

        def event_time(f: Callable[[], torch.Tensor]) -> float:
            start = make_event()
            end = make_event()
            start.record()
            out = f()
            end.record()
            end.synchronize()
            del out
            return start.elapsed_time(end) / 1e3

        start_mhz = sm.read()
        events = [event_time(lambda: mm(a, b)) for _ in range(reps)]
        event_clocks = (start_mhz, sm.read())
        # Measured in a loop of its own after the chapter's, printed right after it.
        start_mhz = sm.read()
        held = queued.queued_event_times(dev, a, b, reps, make_event) if label == "cuda" else None
        queued_clocks = (start_mhz, sm.read())
        fmt.report(label, shape, f"{label}.Event time", events, show_samples)
        smclock.clock_line(label, shape, f"{label}.Event time", *event_clocks)
        if held is not None:
            fmt.report(label, shape, f"{label}.{queued.QUEUED_METHOD}", held[0], show_samples)
            fmt.emit(queued.queued_proof_line(label, shape, held[1]))
            smclock.clock_line(label, shape, f"{label}.{queued.QUEUED_METHOD}", *queued_clocks)

    # Read one number back: .item() waits for the device.
    readback: list[int] = []
    start_mhz = sm.read()
    for _ in range(reps):
        t = clock()
        c = mm(a, b)
        c.sum().item()
        readback.append(clock() - t)
        del c
    end_mhz = sm.read()
    fmt.report(label, shape, "+ sum().item()", fmt.ns_to_s(readback), show_samples)
    smclock.clock_line(label, shape, "+ sum().item()", start_mhz, end_mhz)

    # torch.utils.benchmark.Timer: synchronizes the accelerator around its clock reads.
    # num_threads must be given: the Timer runs with 1 thread unless told otherwise.
    timer_kwargs: dict[str, Any] = {}
    default_timer = getattr(benchmark.utils.timer, "timer", timeit.default_timer)
    if dev.is_accelerator and default_timer is timeit.default_timer:
        # Older torch: the Timer's clock does not wait for this device; give it one that does.
        fmt.note(f"this torch's benchmark.Timer does not sync {label}; passing a syncing timer")

        def synced_timer() -> float:
            sync()
            return timeit.default_timer()

        timer_kwargs["timer"] = synced_timer
    # eager times the chapter's statement itself; another mode its callable
    stmt, names = ("a @ b", {}) if extras.exec_mode == compiled.EAGER else ("mm(a, b)", {"mm": mm})
    timer = benchmark.Timer(stmt=stmt, globals={"a": a, "b": b, **names},
                            num_threads=torch.get_num_threads(), **timer_kwargs)
    start_mhz = sm.read()
    timed = [timer.timeit(1).times[0] for _ in range(reps)]
    end_mhz = sm.read()
    fmt.report(label, shape, "benchmark.Timer", timed, show_samples)
    smclock.clock_line(label, shape, "benchmark.Timer", start_mhz, end_mhz)

    try:
        _beyond_the_chapter(dev, a, b, reps, show_samples, extras, sm)
    finally:
        sm.close()


def _beyond_the_chapter(
    dev: Device, a: torch.Tensor, b: torch.Tensor, reps: int, show_samples: bool, extras: Extras,
    sm: smclock.SmClock | None = None,
) -> None:
    """The CUDA blocks after every chapter method: kernel time, then energy (if asked)."""
    sm = sm or smclock.SmClock(None)
    kernel_s: float | None = None  # one matmul's kernel time (median): the energy's busy share
    if dev.label == "cuda":
        start_mhz = sm.read()
        kernel_s = kernels.kernel_time_block(
            dev, a, b, reps, show_samples, extras.dump_kernels, extras.precision)
        smclock.clock_line(dev.label, f"{a.shape[0]}x{a.shape[1]}", kernels.KERNEL_METHOD,
                           start_mhz, sm.read())
        if extras.profile_window:
            window.profile_window_block(a, b, reps, dev.sync, dev.mm)
    else:
        if extras.dump_kernels is not None:
            where = f"no kernel-time block on {dev.label}"
            fmt.note(f"--dump-kernels: {where}; {extras.dump_kernels} not written")
        if extras.profile_window:
            fmt.note(f"--profile-window: no CUDA profiler API on {dev.label}; no window marked")
    if extras.energy_s > 0:
        energy.energy_block(dev, a, b, extras.energy_s, kernel_s, sm)


def run_accuracy(dev: Device, m: int, n: int, out: Path,
                 exec_mode: str = compiled.EAGER) -> None:
    import numpy as np
    import torch

    # The index k is cast to float32 (like Rust's `k as f32`; for k < 2**24 this is exactly
    # torch.arange(..., dtype=torch.float32)) and sin/cos are evaluated in float32 on the CPU.
    ka = torch.arange(m * n, dtype=torch.int64).to(torch.float32).reshape(m, n)
    kb = torch.arange(n * m, dtype=torch.int64).to(torch.float32).reshape(n, m)
    a = torch.sin(ka)
    b = torch.cos(kb)
    a_dev, b_dev = a.to(dev.device), b.to(dev.device)
    # a compiled mode compiles (or a graph is captured) first, outside the profiler; eager
    # computes c with its one product, as it always did (no first call before it)
    if exec_mode != compiled.EAGER:
        first = compiled.prepare(dev, exec_mode, a_dev, b_dev, f"{m}x{n}")
        dev.mm = first.mm
        first.emit(breakdown=False)  # its autotune choice names the kernel that computed c
    # on CUDA under torch.profiler: the `# kernel` line names the kernel that computed c
    c = kernels.accuracy_product(dev, a_dev, b_dev).cpu()  # waits
    out.mkdir(parents=True, exist_ok=True)
    for name, tensor in (("a", a), ("b", b), ("c", c)):
        array = np.ascontiguousarray(tensor.numpy(), dtype=np.float32)
        np.save(out / f"{name}.npy", array)
    fmt.emit(f"{dev.label} {m}x{n} {OP} accuracy: wrote {out.resolve()}")

