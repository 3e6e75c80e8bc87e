"""``cuda.Event time (queued)``: the device timer with the launch gap kept out (CUDA only).

A spin kernel (``torch.cuda._sleep``) holds the stream while start event, matmul and end event
are queued, so the GPU reaches them back to back (nvbench's blocking kernel). The spin is
calibrated once to outlast the host's queueing; per run ``start.query()`` right after the end
event is queued proves the start event waited, and the ``start event waited in W of R runs``
line (docs/LINES.md) carries that proof to the orchestrator.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from . import format as fmt
from .facts import Device
from .format import NANOS_PER_MICRO, OP

if TYPE_CHECKING:
    import torch

QUEUED_METHOD = "Event time (queued)"  # printed as `cuda.Event time (queued)`
SPIN_FACTOR = 5.0  # the spin lasts this many times the host's time to queue start+matmul+end
MIN_SPIN_US = 200.0
CALIBRATION_CYCLES = 1_000_000  # ~0.5 ms at 2 GHz: long against the event resolution (~0.5 µs)
HOST_SAMPLES = 5
CALIBRATION_ROUNDS = 3


def spin_cycles(host_enqueue_ns: Sequence[int], cycles_per_us: float) -> int:
    """Cycles for ``torch.cuda._sleep`` so the spin outlasts the host's queueing of one run.

    ``SPIN_FACTOR`` times the slowest measured queueing, at least ``MIN_SPIN_US``; the rate is
    the fastest one measured, so a clock that rises only makes the spin longer than asked.
    """
    if not host_enqueue_ns or cycles_per_us <= 0:
        raise ValueError("spin_cycles needs host timings and a positive clock rate")
    spin_us = max(MIN_SPIN_US, SPIN_FACTOR * max(host_enqueue_ns) / NANOS_PER_MICRO)
    return math.ceil(spin_us * cycles_per_us)


def queued_note(label: str, reached: Sequence[bool]) -> str | None:
    """The stderr note for the runs whose start event the GPU had reached too early, if any.

    ``reached[i]`` is ``start.query()`` of run i, read right after its end event was queued:
    True means the spin had already ended, so part of the launch gap may be in that window.
    """
    early = sum(1 for flag in reached if flag)
    if early == 0:
        return None
    return (
        f"{label}.{QUEUED_METHOD}: in {early} of {len(reached)} runs the GPU had reached the "
        "start event before the end event was queued (the spin ended too soon); those runs "
        "may hold part of the launch gap"
    )


def queued_proof_line(label: str, shape: str, reached: Sequence[bool]) -> str:
    """The stdout proof of the queued window: in how many runs the start event waited.

    A run's start event waited when ``start.query()`` was still False after its end event was
    queued (the spin still held the stream). The orchestrator parses this line
    (docs/LINES.md): a figure whose proof failed is labelled so in the report, not explained
    by the method's premise.
    """
    waited = sum(1 for flag in reached if not flag)
    return (f"{label} {shape} {OP} {label}.{QUEUED_METHOD}: start event waited in {waited} of "
            f"{len(reached)} runs")


def _host_enqueue_ns(
    a: torch.Tensor, b: torch.Tensor, make_event: Callable[[], Any], sync: Callable[[], None],
    mm: Callable[[Any, Any], Any],
) -> list[int]:
    """Host time to queue start event, matmul and end event, a few times."""
    clock = time.perf_counter_ns
    samples: list[int] = []
    for _ in range(HOST_SAMPLES):
        start, end = make_event(), make_event()
        t0 = clock()
        start.record()
        out = mm(a, b)
        end.record()
        samples.append(clock() - t0)
        sync()
        del out
    return samples


def _cycles_per_us(make_event: Callable[[], Any], sleep: Callable[[int], None]) -> float:
    """The spin kernel's cycles per µs now (the SM clock moves: measured after the warm-up).

    0.0 if the spin took no measurable time (a ``_sleep`` that does not spin).
    """
    rates: list[float] = []
    for _ in range(CALIBRATION_ROUNDS):
        start, end = make_event(), make_event()
        sleep(CALIBRATION_CYCLES)  # holds the stream: the timed spin starts right at `start`
        start.record()
        sleep(CALIBRATION_CYCLES)
        end.record()
        end.synchronize()
        elapsed_ms = start.elapsed_time(end)
        if elapsed_ms > 0:
            rates.append(CALIBRATION_CYCLES / (elapsed_ms * 1e3))
    return max(rates, default=0.0)


def queued_event_times(
    dev: Device, a: torch.Tensor, b: torch.Tensor, reps: int, make_event: Callable[[], Any]
) -> tuple[list[float], list[bool]] | None:
    """``reps`` device times (s) of one matmul queued behind a spin kernel, and per run whether
    the GPU had already reached the start event (``start.query()``); None if impossible."""
    import torch

    sleep = getattr(torch.cuda, "_sleep", None)
    if sleep is None:
        fmt.note(f"torch {torch.__version__} has no torch.cuda._sleep: "
                 f"no {dev.label}.{QUEUED_METHOD}")
        return None
    host_ns = _host_enqueue_ns(a, b, make_event, dev.sync, dev.mm)
    rate = _cycles_per_us(make_event, sleep)
    if rate <= 0:
        fmt.note("torch.cuda._sleep took no time between two events: "
                 f"no {dev.label}.{QUEUED_METHOD}")
        return None
    cycles = spin_cycles(host_ns, rate)
    times: list[float] = []
    reached: list[bool] = []
    for _ in range(reps):
        start, end = make_event(), make_event()
        sleep(cycles)
        start.record()
        out = dev.mm(a, b)
        end.record()
        reached.append(bool(start.query()))
        end.synchronize()
        times.append(start.elapsed_time(end) / 1e3)
        del out
    warning = queued_note(dev.label, reached)
    if warning is not None:
        fmt.note(warning)
    return times, reached

