"""Time one f32 matmul in PyTorch the right and the wrong ways (the chapter's ``exec_gpu.py``).

Standalone: standard library, ``torch`` and ``numpy`` only (``pynvml`` optional, imported only
by ``--energy``); it does not import the orchestrator. Every line it prints on stdout follows
``docs/LINES.md``; diagnostics and errors go to stderr.

Modes
-----
``--mode mm`` (default): ``a`` is ``[M, N]``, ``b`` is ``[N, M]`` (``--shape MxN``, default
1024x1024), both ``torch.rand`` on the device (seed 0). The program prints, in this order:

* ``torch VERSION, threads N`` and ``torch BLAS_INFO=...`` (parsed from
  ``torch.__config__.show()``); ``N`` is ``torch.get_num_threads()`` after ``--threads``.
* ``torch precision fp32|tf32``: the arithmetic of an f32 matmul. On CUDA it is read back from
  torch after ``--precision`` set it (``torch.backends.cuda.matmul.allow_tf32``, the flag
  cuBLAS reads, checked against ``fp32_precision`` where torch >= 2.9 has it). The CPU and MPS
  always print ``fp32``: there is no TF32 switch for them (the CPU BLAS computes in f32; Apple
  GPUs have no TF32 format and torch's TF32 settings do not reach MPS), so ``--precision tf32``
  is refused there.
* ``LABEL: device init DUR``: wall time from just before the first operation that touches the
  device (creating ``a`` and ``b`` there with ``torch.rand``) to just after the first
  synchronize. On an accelerator this is the lazy initialisation of the device (context,
  allocator, RNG state), plus two random fills; on the CPU it is the two random fills only.
  The availability check done before it (``torch.cuda.is_available()`` and friends) is not
  counted.
* the first matmul of the process: on an accelerator ``returned DUR, after sync DUR`` (clock
  read when the call returns, then after a synchronize); on the CPU one figure (the call is
  synchronous).
* ``--reps`` runs of each method, then one summary line per method
  (``LABEL MxN matmul METHOD, R runs: min DUR median DUR``) and, with ``--samples``, after
  each summary line ``# samples LABEL MxN matmul METHOD: S1 S2 ...`` (seconds, Python float
  ``repr``). Methods: ``no sync`` and ``with sync`` (one loop, exactly the chapter's: the clock
  is read once after the call returns and once after the synchronize), ``cuda.Event time`` /
  ``mps.Event time`` (accelerators only; the chapter's ``event_time``), ``+ sum().item()``
  (call, then read one number back, which waits for the device) and ``benchmark.Timer``
  (``torch.utils.benchmark.Timer(...).timeit(1)`` taken ``--reps`` times; the Timer
  synchronizes the accelerator around its clock reads; it runs two untimed warm-up calls
  before each timed one, as ``timeit`` does).

Beyond the chapter, CUDA only (each in a loop of its own, so it perturbs none of the above):

* ``cuda.Event time (queued)``, printed right after ``cuda.Event time`` but measured after its
  loop: the same event pair around one matmul, with the launch gap kept out. A spin kernel
  (``torch.cuda._sleep``) holds the stream while start event, matmul and end event are queued,
  so the GPU reaches them back to back (nvbench's blocking kernel). The spin is calibrated once
  (events around a ``_sleep`` give cycles per µs at the clock of the moment) to last 5x the
  host's time to queue the three, at least 200 µs. Proof per run: right after the end event is
  queued, ``start.query()`` must still be False (the GPU has not reached the start event); the
  runs where it was True are counted in a ``note:`` on stderr.
* ``kernel time (cupti)``, after ``benchmark.Timer``: ``torch.profiler`` with CUDA activities
  (CUPTI) around ``--reps`` back-to-back matmuls (one warm-up matmul before it starts); each
  matmul's figure is the sum of the device kernels it launched, found by launch order (every
  matmul launches the same sequence of k kernels, k = kernels / reps). Then one ``# kernel``
  line per distinct kernel name (launches, min, median). ``--dump-kernels FILE`` writes the
  profiler's device events as JSON (``kernel_events``) so a test fixture can be captured.
* ``energy (nvml)``, with ``--energy SECONDS``, after everything else: matmuls back to back
  until SECONDS have passed and NVML's total-energy counter has moved; joules, matmuls, wall
  time between the two syncs before the two counter reads. ``pynvml`` (nvidia-ml-py) is
  imported only there.

Where one of these cannot be measured (no ``torch.cuda._sleep``, no CUPTI, no NVML, not CUDA)
the program says so in a ``note:`` on stderr, prints no line for it, and still exits 0.

``--mode accuracy``: ``a[i, j] = sin(i*N + j)`` and ``b[i, j] = cos(i*M + j)``, the index cast to
float32 and the sine/cosine evaluated in float32 on the CPU, then moved to the device;
``c = a @ b`` on the device. Writes ``a.npy``, ``b.npy`` and ``c.npy`` (float32, C order) to
``--out`` and prints ``LABEL MxN matmul accuracy: wrote DIR``. Default shape 256x256. The
comparing is done by the orchestrator, not here.

Timing details
--------------
Host clocks are ``time.perf_counter_ns()`` (the clock of the chapter's ``time.perf_counter()``,
in integer nanoseconds). Device time comes from ``torch.Event(enable_timing=True)`` where the
installed torch has it, else ``torch.cuda.Event`` / ``torch.mps.Event``; synchronization from
``torch.accelerator.synchronize()`` where available, else ``torch.cuda.synchronize()`` /
``torch.mps.synchronize()``. On CUDA, TF32 is switched off so the matmul is a real f32 matmul
(``--precision fp32``, the default), or allowed for f32 matmuls with ``--precision tf32``.

The median of an even number of samples is the mean of the two middle ones. Durations are
printed as Rust prints ``{:.3?}`` for ``std::time::Duration`` (see ``format_duration_ns``):
seconds are first rounded to the nearest integer nanosecond.

Exit status: 0 on success; an expected failure prints one line ``error: ...`` on stderr and exits
2 for bad arguments, 1 for anything else (no such device, a torch runtime error, a write error).
"""

from __future__ import annotations

import argparse
import json
import math
import re
import sys
import time
import timeit
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn

if TYPE_CHECKING:  # torch is imported lazily so that --help and bad arguments stay fast
    import torch

OP = "matmul"
DEVICES = ("cpu", "cuda", "mps", "auto")
MODES = ("mm", "warm", "accuracy")
PRECISIONS = ("fp32", "tf32")
DEFAULT_SHAPE = {"mm": (1024, 1024), "accuracy": (256, 256)}

NANOS_PER_SEC = 1_000_000_000
NANOS_PER_MILLI = 1_000_000
NANOS_PER_MICRO = 1_000


# --------------------------------------------------------------------------------------------
# Rust's `{:.3?}` for std::time::Duration
# --------------------------------------------------------------------------------------------


def format_duration_ns(nanos: int, precision: int = 3) -> str:
    """Format an integer number of nanoseconds exactly as Rust's ``{:.3?}`` on a ``Duration``.

    Emulates ``core::time``'s ``Debug`` impl (``fmt_decimal``), as in the Rust standard library
    this project builds with (rustc 1.95):

    * unit: ``s`` if the whole seconds are > 0, else ``ms`` if the nanoseconds are >= 1e6, else
      ``µs`` (U+00B5) if >= 1e3, else ``ns``;
    * the integer part in that unit, then up to ``precision`` fractional digits taken from the
      remainder (digit generation stops early when the remainder becomes 0; the missing digits
      print as ``0``);
    * rounding on the remainder that was cut off: more than half rounds up, less than half rounds
      down, and an exact half rounds to even (up only if the last written digit is odd). Older
      Rust releases rounded an exact half up; the values checked against
      ``tests/data/durations.tsv`` are what the installed rustc prints;
    * a carry out of the fractional digits goes into the integer part without changing the unit:
      999_999_500 ns prints ``1000.000ms``, 999_999_500_000 ns prints ``1000.000s``.
    """
    if nanos < 0:
        raise ValueError(f"a duration cannot be negative: {nanos} ns")
    secs, sub = divmod(int(nanos), NANOS_PER_SEC)
    if secs > 0:
        integer, fractional, divisor, unit = secs, sub, NANOS_PER_SEC // 10, "s"
    elif sub >= NANOS_PER_MILLI:
        integer, fractional = divmod(sub, NANOS_PER_MILLI)
        divisor, unit = NANOS_PER_MILLI // 10, "ms"
    elif sub >= NANOS_PER_MICRO:
        integer, fractional = divmod(sub, NANOS_PER_MICRO)
        divisor, unit = NANOS_PER_MICRO // 10, "µs"
    else:
        integer, fractional, divisor, unit = sub, 0, 1, "ns"

    digits = [0] * 9
    pos = 0
    while fractional > 0 and pos < precision:
        digits[pos] = fractional // divisor
        fractional %= divisor
        divisor //= 10
        pos += 1

    if fractional > 0 and fractional >= divisor * 5:
        is_tie = fractional == divisor * 5
        last_is_odd = digits[pos - 1] % 2 == 1 if pos > 0 else integer % 2 == 1
        if not is_tie or last_is_odd:
            carry = True
            rev = pos
            while carry and rev > 0:
                rev -= 1
                if digits[rev] < 9:
                    digits[rev] += 1
                    carry = False
                else:
                    digits[rev] = 0
            if carry:
                integer += 1

    end = min(precision, 9)
    frac_text = "".join(str(d) for d in digits[:end]).ljust(precision, "0")
    return f"{integer}.{frac_text}{unit}" if precision > 0 else f"{integer}{unit}"


def seconds_to_ns(seconds: float) -> int:
    """Seconds as the nearest integer number of nanoseconds."""
    return round(seconds * NANOS_PER_SEC)


def format_duration(seconds: float) -> str:
    """Format seconds as Rust's ``{:.3?}`` (rounded to the nearest nanosecond first)."""
    return format_duration_ns(seconds_to_ns(seconds))


def median(values: Sequence[float]) -> float:
    """The median; for an even count, the mean of the two middle values."""
    if not values:
        raise ValueError("median of no values")
    ordered = sorted(values)
    mid = len(ordered) // 2
    if len(ordered) % 2:
        return ordered[mid]
    return (ordered[mid - 1] + ordered[mid]) / 2


# --------------------------------------------------------------------------------------------
# Errors and arguments
# --------------------------------------------------------------------------------------------


class BenchError(Exception):
    """An expected failure: reported as one ``error: ...`` line on stderr."""

    def __init__(self, message: str, code: int = 1) -> None:
        super().__init__(message)
        self.code = code


class _Parser(argparse.ArgumentParser):
    """argparse, but a usage error is one ``error: ...`` line and exit status 2."""

    def error(self, message: str) -> NoReturn:
        raise BenchError(message, code=2)


def _positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got {text!r}")
    return value


def _shape(text: str) -> tuple[int, int]:
    match = re.fullmatch(r"\s*(\d+)\s*[xX]\s*(\d+)\s*", text)
    if not match or int(match.group(1)) < 1 or int(match.group(2)) < 1:
        raise argparse.ArgumentTypeError(
            f"expected MxN with M, N >= 1 (e.g. 1024x1024), got {text!r}"
        )
    return int(match.group(1)), int(match.group(2))


def _seconds(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected seconds >= 0, got {text!r}") from None
    if not math.isfinite(value) or value < 0:
        raise argparse.ArgumentTypeError(f"expected seconds >= 0, got {text!r}")
    return value


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog="exec_gpu.py",
        description=(
            "Time an f32 matmul in PyTorch (no sync, with sync, device events, read-back, "
            "torch.utils.benchmark.Timer), or dump a deterministic matmul for the accuracy "
            "comparison. Output lines follow docs/LINES.md."
        ),
    )
    parser.add_argument(
        "--device",
        choices=DEVICES,
        default="auto",
        help="cpu, cuda, mps, or auto: the accelerator torch finds, else cpu (default auto)",
    )
    parser.add_argument(
        "--mode",
        choices=MODES,
        default="mm",
        help="mm: timing methods; accuracy: write a.npy, b.npy, c.npy; warm is burn only",
    )
    parser.add_argument(
        "--shape",
        type=_shape,
        default=None,
        metavar="MxN",
        help="a is [M, N], b is [N, M] (default 1024x1024; accuracy: 256x256)",
    )
    parser.add_argument(
        "--reps",
        type=_positive_int,
        default=20,
        metavar="N",
        help="timed runs per method (default 20)",
    )
    parser.add_argument(
        "--samples",
        action="store_true",
        help="after each summary line print a '# samples' line with every run, in seconds",
    )
    parser.add_argument(
        "--out",
        type=Path,
        default=None,
        metavar="DIR",
        help="accuracy mode (required there): folder for a.npy, b.npy, c.npy",
    )
    parser.add_argument(
        "--threads",
        type=_positive_int,
        default=None,
        metavar="N",
        help="torch.set_num_threads(N) before anything else (default: torch's own choice)",
    )
    parser.add_argument(
        "--precision",
        choices=PRECISIONS,
        default="fp32",
        help="f32 matmul arithmetic: fp32 (TF32 off, default) or tf32 (TF32 allowed; cuda only)",
    )
    parser.add_argument(
        "--energy",
        type=_seconds,
        default=0.0,
        metavar="SECONDS",
        help="after everything, matmuls back to back for at least SECONDS, energy from NVML "
        "(cuda with pynvml; default 0: no energy block)",
    )
    parser.add_argument(
        "--profile-window",
        action="store_true",
        help="cuda, mm mode: one more block of --reps back-to-back matmuls between "
        "cudaProfilerStart and cudaProfilerStop, for a profiler started with "
        "--profile-from-start off (Nsight Compute: the orchestrator's profile runs)",
    )
    parser.add_argument(
        "--dump-kernels",
        type=Path,
        default=None,
        metavar="FILE",
        help="cuda, mm mode: write the kernel-time block's profiler device events as JSON "
        "(to capture a test fixture)",
    )
    return parser


# --------------------------------------------------------------------------------------------
# Devices
# --------------------------------------------------------------------------------------------


@dataclass
class Device:
    """The device a run uses and the one code path to wait on it and time on it."""

    label: str  # as printed: cpu, cuda, mps (xpu, ... when --device auto finds one)
    device: torch.device
    sync: Callable[[], None]
    is_accelerator: bool


def _accelerator_type() -> str | None:
    """The type of the accelerator torch can use now, or None."""
    import torch

    acc = getattr(torch, "accelerator", None)
    if acc is not None and hasattr(acc, "is_available"):
        if acc.is_available():
            current = acc.current_accelerator()
            return None if current is None else current.type
        return None
    if torch.cuda.is_available():
        return "cuda"
    mps = getattr(torch.backends, "mps", None)
    if mps is not None and mps.is_available():
        return "mps"
    return None


def _device_available(kind: str) -> tuple[bool, str]:
    import torch

    if kind == "cuda":
        if torch.version.cuda is None and getattr(torch.version, "hip", None) is None:
            return False, f"this torch ({torch.__version__}) was built without CUDA"
        if not torch.cuda.is_available():
            return False, "torch.cuda.is_available() is False (no NVIDIA GPU or driver found)"
        return True, ""
    if kind == "mps":
        mps = getattr(torch.backends, "mps", None)
        if mps is None or not mps.is_built():
            return False, f"this torch ({torch.__version__}) was built without MPS"
        if not mps.is_available():
            return False, "torch.backends.mps.is_available() is False (needs Apple silicon, macOS)"
        return True, ""
    return True, ""


def _synchronizer(kind: str) -> Callable[[], None]:
    """``torch.accelerator.synchronize`` when it serves this device, else ``torch.<kind>``'s."""
    import torch

    acc = getattr(torch, "accelerator", None)
    if acc is not None and hasattr(acc, "synchronize") and acc.is_available():
        current = acc.current_accelerator()
        if current is not None and current.type == kind:
            return acc.synchronize
    module = getattr(torch, kind, None)
    if module is None or not hasattr(module, "synchronize"):
        raise BenchError(f"--device {kind}: torch {torch.__version__} has no way to synchronize it")
    return module.synchronize


def _no_sync() -> None:
    """CPU work is done when the call returns: nothing to wait for."""


def resolve_device(requested: str) -> Device:
    import torch

    kind = requested
    if requested == "auto":
        kind = _accelerator_type() or "cpu"
    else:
        ok, why = _device_available(kind)
        if not ok:
            raise BenchError(f"--device {requested}: {why}")
    if kind == "cpu":
        return Device("cpu", torch.device("cpu"), _no_sync, is_accelerator=False)
    return Device(kind, torch.device(kind), _synchronizer(kind), is_accelerator=True)


def disable_tf32() -> None:
    """Make an f32 matmul on CUDA a real f32 matmul.

    By default cuBLAS may use TF32 tensor cores for f32 matmuls (10-bit mantissa): faster, but
    not the f32 product the chapter compares across builds. Switch it off, with the setting
    names of the installed torch, and ask for the "highest" f32 matmul precision as well.
    """
    import torch

    matmul = torch.backends.cuda.matmul
    try:
        if hasattr(torch.backends, "fp32_precision"):  # torch >= 2.9: the new settings
            matmul.fp32_precision = "ieee"
        else:
            matmul.allow_tf32 = False
        torch.set_float32_matmul_precision("highest")
    except (AttributeError, RuntimeError, ValueError):
        matmul.allow_tf32 = False
        torch.set_float32_matmul_precision("highest")


def enable_tf32() -> None:
    """Allow TF32 tensor cores for f32 matmuls on CUDA (``--precision tf32``).

    Both of torch's switches are set, and set to agree: torch >= 2.9 refuses (RuntimeError,
    "mix of the legacy and new APIs") to read a state where its per-backend
    ``fp32_precision`` and the legacy matmul precision disagree, and cuBLAS reads that state.
    """
    import torch

    matmul = torch.backends.cuda.matmul
    if hasattr(torch.backends, "fp32_precision"):  # torch >= 2.9: the new settings
        matmul.fp32_precision = "tf32"
    else:
        matmul.allow_tf32 = True
    torch.set_float32_matmul_precision("high")


def set_precision(precision: str) -> None:
    """Apply ``--precision`` to CUDA f32 matmuls."""
    if precision == "tf32":
        enable_tf32()
    else:
        disable_tf32()


def cuda_matmul_precision() -> str:
    """``fp32`` or ``tf32``: what torch reports now for CUDA f32 matmuls (read back, not assumed).

    ``allow_tf32`` is the flag torch's cuBLAS calls consult (in torch >= 2.9 it raises when the
    two APIs disagree); where the new ``fp32_precision`` exists it must say the same.
    """
    import torch

    matmul = torch.backends.cuda.matmul
    allowed = bool(matmul.allow_tf32)
    if hasattr(torch.backends, "fp32_precision"):
        new = str(matmul.fp32_precision)
        if (new == "tf32") != allowed:
            raise BenchError(
                f"torch {torch.__version__} reports allow_tf32={allowed} but "
                f"torch.backends.cuda.matmul.fp32_precision={new!r}"
            )
    return "tf32" if allowed else "fp32"


def _event_factory(dev: Device) -> Callable[[], Any]:
    """A maker of timing events: ``torch.Event`` where usable, else ``torch.<kind>.Event``."""
    import torch

    candidates: list[Callable[[], Any]] = []
    if hasattr(torch, "Event"):
        candidates.append(lambda: torch.Event(device=dev.label, enable_timing=True))
    module = getattr(torch, dev.label, None)
    if module is not None and hasattr(module, "Event"):
        candidates.append(lambda: module.Event(enable_timing=True))
    problems: list[str] = []
    for make in candidates:
        try:  # one full record / synchronize / elapsed_time cycle proves it works here
            start, end = make(), make()
            start.record()
            end.record()
            end.synchronize()
            start.elapsed_time(end)
        except (RuntimeError, TypeError, ValueError, NotImplementedError) as exc:
            problems.append(str(exc).splitlines()[0] if str(exc) else type(exc).__name__)
            continue
        return make
    raise BenchError(f"{dev.label}: no usable timing event ({'; '.join(problems) or 'none found'})")


# --------------------------------------------------------------------------------------------
# Printing
# --------------------------------------------------------------------------------------------


def emit(line: str) -> None:
    print(line, flush=True)


def print_headers(precision: str = "fp32") -> None:
    """The header lines; ``precision`` is what ``cuda_matmul_precision`` read (fp32 elsewhere)."""
    import torch

    emit(f"torch {torch.__version__}, threads {torch.get_num_threads()}")
    match = re.search(r"BLAS_INFO=([^,\s]+)", torch.__config__.show())
    emit(f"torch BLAS_INFO={match.group(1) if match else 'unknown'}")
    emit(f"torch precision {precision}")


def note(text: str) -> None:
    """A diagnostic on stderr: never a contract line, never a failure."""
    print(f"note: {text}", file=sys.stderr, flush=True)


def report(
    label: str, shape: str, method: str, samples_s: Sequence[float], show_samples: bool
) -> None:
    """One summary line, and with ``--samples`` its ``# samples`` line (seconds)."""
    emit(
        f"{label} {shape} {OP} {method}, {len(samples_s)} runs: "
        f"min {format_duration(min(samples_s))} median {format_duration(median(samples_s))}"
    )
    if show_samples:
        emit(
            f"# samples {label} {shape} {OP} {method}: "
            + " ".join(repr(float(s)) for s in samples_s)
        )


def _ns_to_s(values: Sequence[int]) -> list[float]:
    return [v / NANOS_PER_SEC for v in values]


# --------------------------------------------------------------------------------------------
# CUDA beyond the chapter (1): the device timer with the launch gap kept out
# --------------------------------------------------------------------------------------------

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
    a: torch.Tensor, b: torch.Tensor, make_event: Callable[[], Any], sync: Callable[[], None]
) -> list[int]:
    """Host time to queue start event, matmul and end event, a few times."""
    clock = time.perf_counter_ns
    samples: list[int] = []
    for _ in range(HOST_SAMPLES):
        start, end = make_event(), make_event()
        t0 = clock()
        start.record()
        out = a @ b
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
        note(f"torch {torch.__version__} has no torch.cuda._sleep: no {dev.label}.{QUEUED_METHOD}")
        return None
    host_ns = _host_enqueue_ns(a, b, make_event, dev.sync)
    rate = _cycles_per_us(make_event, sleep)
    if rate <= 0:
        note(f"torch.cuda._sleep took no time between two events: no {dev.label}.{QUEUED_METHOD}")
        return None
    cycles = spin_cycles(host_ns, rate)
    times: list[float] = []
    reached: list[bool] = []
    for _ in range(reps):
        start, end = make_event(), make_event()
        sleep(cycles)
        start.record()
        out = a @ b
        end.record()
        reached.append(bool(start.query()))
        end.synchronize()
        times.append(start.elapsed_time(end) / 1e3)
        del out
    warning = queued_note(dev.label, reached)
    if warning is not None:
        note(warning)
    return times, reached


# --------------------------------------------------------------------------------------------
# CUDA beyond the chapter (2): kernel time from the profiler (CUPTI)
# --------------------------------------------------------------------------------------------

KERNEL_METHOD = "kernel time (cupti)"
# Kineto's activity types of GPU work a matmul launches; device events of another known type
# (a GPU-side annotation range, a sync record) are not work and are left out of the grouping.
DEVICE_WORK_KINDS = frozenset({"kernel", "gpu_memcpy", "gpu_memset"})


@dataclass
class KernelStat:
    """One distinct kernel name of the profiled block and the duration of each launch (µs)."""

    name: str
    durations_us: list[float]


@dataclass
class KernelGroups:
    """The profiled block read as matmuls: per-matmul sums (µs) where the grouping holds."""

    per_matmul_us: list[float] | None
    kernels: list[KernelStat]
    note: str | None


def group_kernels(events: Sequence[Mapping[str, Any]], reps: int) -> KernelGroups:
    """Group device events (``kernel_events`` dicts) into ``reps`` matmuls by launch order.

    Every matmul of the block launches the same sequence of k kernels, so the events sorted by
    start are k-long runs: k = len / reps must be whole and each run must carry the same names;
    otherwise only the per-kernel statistics are given, with a note saying why. An event whose
    ``kind`` is known and not in ``DEVICE_WORK_KINDS`` is left out.
    """
    if reps < 1:
        raise ValueError(f"reps must be >= 1, got {reps}")
    work = [event for event in events if event.get("kind") in (None, *DEVICE_WORK_KINDS)]
    ordered = sorted(work, key=lambda event: float(event["start_us"]))
    by_name: dict[str, list[float]] = {}
    for event in ordered:
        by_name.setdefault(str(event["name"]), []).append(float(event["duration_us"]))
    kernels = [KernelStat(name, durations) for name, durations in by_name.items()]
    if not ordered:
        return KernelGroups(None, [], "the profiler recorded no device kernel")
    if len(ordered) % reps:
        why = f"{len(ordered)} kernels for {reps} matmuls is not a whole number per matmul"
        return KernelGroups(None, kernels, f"{why}: per-kernel lines only")
    k = len(ordered) // reps
    runs = [ordered[i * k : (i + 1) * k] for i in range(reps)]
    names = [[str(event["name"]) for event in run] for run in runs]
    if any(sequence != names[0] for sequence in names[1:]):
        why = f"the {reps} matmuls did not all launch the same {k} kernels in the same order"
        return KernelGroups(None, kernels, f"{why}: per-kernel lines only")
    per_matmul = [sum(float(event["duration_us"]) for event in run) for run in runs]
    return KernelGroups(per_matmul, kernels, None)


def event_record(event: Any) -> dict[str, Any]:
    """One profiler ``FunctionEvent`` as a plain dict (times in µs from the trace start).

    ``kind`` is Kineto's activity type (``kernel``, ``gpu_memset``, ...) where this torch's
    events carry it (``activity_type``), else None. The duration is ``time_range.end -
    time_range.start``, read directly: for a device event torch's own ``device_time_total``
    (and ``self_device_time_total``) is that same difference but 0 whenever the event's
    ``use_device`` is unset, and ``cuda_time`` is deprecated (torch 2.x source,
    ``torch/autograd/profiler_util.py``).
    """
    start, end = float(event.time_range.start), float(event.time_range.end)
    kind = getattr(event.device_type, "name", str(event.device_type)).lower()
    return {
        "name": str(event.name),
        "start_us": start,
        "duration_us": end - start,
        "device": f"{kind}:{event.device_index}",
        "kind": getattr(event, "activity_type", None),
    }


def kernel_events(prof: Any, device_index: int | None = None) -> list[dict[str, Any]]:
    """The CUDA device events of a finished ``torch.profiler.profile`` as plain dicts.

    Every device event of the window is kept (kernels, and memsets or copies if a matmul ran
    any: they are GPU work it launched); ``device_index`` keeps one GPU's.
    """
    from torch.autograd import DeviceType

    return [
        event_record(event)
        for event in prof.events()
        if event.device_type == DeviceType.CUDA
        and (device_index is None or event.device_index == device_index)
    ]


def _cuda_index(tensor: torch.Tensor) -> int:
    """The CUDA device index a tensor lives on (``cuda`` alone means the current device)."""
    import torch

    index = tensor.device.index
    return torch.cuda.current_device() if index is None else int(index)


def _profile_matmuls(a: torch.Tensor, b: torch.Tensor, reps: int, sync: Callable[[], None]) -> Any:
    """``reps`` back-to-back matmuls under torch.profiler with CUDA activities (CUPTI)."""
    from torch.profiler import ProfilerActivity, profile

    warm = a @ b  # CUPTI and the kernel selection are not what is measured
    sync()
    del warm
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        outs = [a @ b for _ in range(reps)]  # each kept until the sync: no allocator reuse
        sync()
    del outs
    return prof


def profile_window_block(
    a: torch.Tensor, b: torch.Tensor, reps: int, sync: Callable[[], None]
) -> None:
    """``reps`` matmuls, each synced, between cudaProfilerStart and cudaProfilerStop.

    An external profiler started with ``--profile-from-start off`` (``ncu``) then sees these
    kernels only, so its kernel durations belong to one known block of ``reps`` matmuls of the
    measured shape, not to device init, the inputs' random fill or the read-back's ``sum``.
    Prints nothing: the profiler's own output is the measurement.
    """
    import torch

    sync()
    torch.cuda.profiler.start()
    try:
        for _ in range(reps):
            c = a @ b
            sync()
            del c
    finally:
        torch.cuda.profiler.stop()


def _dump_kernels(path: Path, events: list[dict[str, Any]], meta: dict[str, Any]) -> None:
    """Write the profiler's device events and what produced them, for a test fixture."""
    path.write_text(json.dumps({**meta, "events": events}, indent=1) + "\n", encoding="utf-8")
    note(f"--dump-kernels: wrote {len(events)} device events to {path}")


def kernel_time_block(
    dev: Device,
    a: torch.Tensor,
    b: torch.Tensor,
    reps: int,
    show_samples: bool,
    dump: Path | None,
    precision: str,
) -> None:
    """The kernel-time summary, its samples, and one ``# kernel`` line per kernel name."""
    import torch

    label, shape = dev.label, f"{a.shape[0]}x{a.shape[1]}"
    try:
        index = _cuda_index(a)
        events = kernel_events(_profile_matmuls(a, b, reps, dev.sync), index)
    except Exception as exc:  # no CUPTI, a profiler bug: the figure is optional, never fatal
        text = " ".join(str(exc).split()) or type(exc).__name__
        note(f"torch.profiler failed ({type(exc).__name__}: {text}): no {KERNEL_METHOD} line")
        return
    if dump is not None:
        meta = {
            "torch": torch.__version__,
            "gpu": torch.cuda.get_device_name(index),
            "shape": shape,
            "reps": reps,
            "precision": precision,
        }
        _dump_kernels(dump, events, meta)
    groups = group_kernels(events, reps)
    if groups.note is not None:
        note(f"{label} {shape} {OP} {KERNEL_METHOD}: {groups.note}")
    if groups.per_matmul_us is not None:
        per_matmul = [us / 1e6 for us in groups.per_matmul_us]
        report(label, shape, KERNEL_METHOD, per_matmul, show_samples)
    for kernel in groups.kernels:
        seconds = [us / 1e6 for us in kernel.durations_us]
        emit(
            f"# kernel {label} {shape} {OP} {KERNEL_METHOD}: {len(seconds)} launches, "
            f"min {format_duration(min(seconds))} median {format_duration(median(seconds))}: "
            f"{kernel.name}"
        )


# --------------------------------------------------------------------------------------------
# CUDA beyond the chapter (3): energy from NVML
# --------------------------------------------------------------------------------------------

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
    wanted_ns = seconds_to_ns(seconds)
    give_up_ns = seconds_to_ns(seconds + ENERGY_GIVE_UP_S)
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
    note(
        f"energy: no NVML device has the UUID of cuda:{index} ({wanted or 'unknown'}); "
        "reading NVML device 0"
    )
    return pynvml.nvmlDeviceGetHandleByIndex(0)


def energy_block(dev: Device, a: torch.Tensor, b: torch.Tensor, seconds: float) -> None:
    """``LABEL SHAPE matmul energy (nvml): J J, N runs, DUR``, or a note where NVML cannot."""
    if dev.label != "cuda":
        note(f"--energy: NVML reads NVIDIA GPUs only; no energy line on {dev.label}")
        return
    try:
        import pynvml
    except ImportError:
        note("--energy: pynvml (the nvidia-ml-py package) is not installed; no energy line")
        return
    index = _cuda_index(a)

    def run_batch() -> int:
        for _ in range(ENERGY_BATCH):
            _ = a @ b  # dropped at once: the allocator hands the same block back each time
        return ENERGY_BATCH

    try:
        pynvml.nvmlInit()
    except pynvml.NVMLError as exc:
        note(f"--energy: NVML did not start ({exc}); no energy line")
        return
    try:
        handle = _nvml_handle(pynvml, index)

        def read_mj() -> int:
            return int(pynvml.nvmlDeviceGetTotalEnergyConsumption(handle))

        reading = measure_energy(run_batch, dev.sync, read_mj, seconds)
    except pynvml.NVMLError as exc:  # NotSupported before Volta, no permission, ...
        note(f"--energy: NVML's energy counter cannot be read ({exc}); no energy line")
        return
    finally:
        pynvml.nvmlShutdown()
    if reading is None:
        note(f"--energy: NVML's energy counter did not move in {seconds + ENERGY_GIVE_UP_S:g} s")
        return
    shape = f"{a.shape[0]}x{a.shape[1]}"
    emit(
        f"{dev.label} {shape} {OP} energy (nvml): {reading.millijoules / 1000:.3f} J, "
        f"{reading.runs} runs, {format_duration_ns(reading.elapsed_ns)}"
    )


# --------------------------------------------------------------------------------------------
# Modes
# --------------------------------------------------------------------------------------------


@dataclass
class Extras:
    """What the blocks beyond the chapter were asked for (``--dump-kernels``, ``--energy``)."""

    dump_kernels: Path | None = None
    energy_s: float = 0.0
    precision: str = "fp32"
    profile_window: bool = False


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
    torch.manual_seed(0)
    t0 = clock()
    a = torch.rand(m, n, device=dev.device)
    b = torch.rand(n, m, device=dev.device)
    sync()
    emit(f"{label}: device init {format_duration_ns(clock() - t0)}")

    # First call of the process: on an accelerator the call may return before the work is done.
    t0 = clock()
    c = a @ b
    returned = clock() - t0
    sync()
    after_sync = clock() - t0
    del c
    if dev.is_accelerator:
        emit(
            f"{label} {shape} {OP} first call: returned {format_duration_ns(returned)}, "
            f"after sync {format_duration_ns(after_sync)}"
        )
    else:
        emit(f"{label} {shape} {OP} first call: {format_duration_ns(returned)}")

    # No sync / with sync: the chapter's loop exactly (c is dropped only after the sync).
    nosync: list[int] = []
    synced: list[int] = []
    for _ in range(reps):
        t = clock()
        c = a @ b
        nosync.append(clock() - t)
        sync()
        synced.append(clock() - t)
        del c
    report(label, shape, "no sync", _ns_to_s(nosync), show_samples)
    report(label, shape, "with sync", _ns_to_s(synced), show_samples)

    # Device time: the chapter's event_time, on accelerators only.
    if dev.is_accelerator:
        make_event = _event_factory(dev)

        def event_time(f: Callable[[], torch.Tensor]) -> float:
            start = make_event()
            end = make_event()
            start.record()
            out = f()
            end.record()
            end.synchronize()
            del out
            return start.elapsed_time(end) / 1e3

        events = [event_time(lambda: a @ b) for _ in range(reps)]
        # Measured in a loop of its own after the chapter's, printed right after it.
        queued = queued_event_times(dev, a, b, reps, make_event) if label == "cuda" else None
        report(label, shape, f"{label}.Event time", events, show_samples)
        if queued is not None:
            report(label, shape, f"{label}.{QUEUED_METHOD}", queued[0], show_samples)
            emit(queued_proof_line(label, shape, queued[1]))

    # Read one number back: .item() waits for the device.
    readback: list[int] = []
    for _ in range(reps):
        t = clock()
        c = a @ b
        c.sum().item()
        readback.append(clock() - t)
        del c
    report(label, shape, "+ sum().item()", _ns_to_s(readback), show_samples)

    # torch.utils.benchmark.Timer: synchronizes the accelerator around its clock reads.
    # num_threads must be given: the Timer runs with 1 thread unless told otherwise.
    timer_kwargs: dict[str, Any] = {}
    default_timer = getattr(benchmark.utils.timer, "timer", timeit.default_timer)
    if dev.is_accelerator and default_timer is timeit.default_timer:
        # Older torch: the Timer's clock does not wait for this device; give it one that does.
        print(
            f"note: this torch's benchmark.Timer does not sync {label}; passing a syncing timer",
            file=sys.stderr,
        )

        def synced_timer() -> float:
            sync()
            return timeit.default_timer()

        timer_kwargs["timer"] = synced_timer
    timer = benchmark.Timer(
        stmt="a @ b", globals={"a": a, "b": b}, num_threads=torch.get_num_threads(), **timer_kwargs
    )
    timed = [timer.timeit(1).times[0] for _ in range(reps)]
    report(label, shape, "benchmark.Timer", timed, show_samples)

    _beyond_the_chapter(dev, a, b, reps, show_samples, extras or Extras())


def _beyond_the_chapter(
    dev: Device, a: torch.Tensor, b: torch.Tensor, reps: int, show_samples: bool, extras: Extras
) -> None:
    """The CUDA blocks after every chapter method: kernel time, then energy (if asked)."""
    if dev.label == "cuda":
        kernel_time_block(dev, a, b, reps, show_samples, extras.dump_kernels, extras.precision)
        if extras.profile_window:
            profile_window_block(a, b, reps, dev.sync)
    else:
        if extras.dump_kernels is not None:
            where = f"no kernel-time block on {dev.label}"
            note(f"--dump-kernels: {where}; {extras.dump_kernels} not written")
        if extras.profile_window:
            note(f"--profile-window: no CUDA profiler API on {dev.label}; no window marked")
    if extras.energy_s > 0:
        energy_block(dev, a, b, extras.energy_s)


def run_accuracy(dev: Device, m: int, n: int, out: Path) -> None:
    import numpy as np
    import torch

    # The index k is cast to float32 (like Rust's `k as f32`; for k < 2**24 this is exactly
    # torch.arange(..., dtype=torch.float32)) and sin/cos are evaluated in float32 on the CPU.
    ka = torch.arange(m * n, dtype=torch.int64).to(torch.float32).reshape(m, n)
    kb = torch.arange(n * m, dtype=torch.int64).to(torch.float32).reshape(n, m)
    a = torch.sin(ka)
    b = torch.cos(kb)
    c = (a.to(dev.device) @ b.to(dev.device)).cpu()  # .cpu() waits for the device
    out.mkdir(parents=True, exist_ok=True)
    for name, tensor in (("a", a), ("b", b), ("c", c)):
        array = np.ascontiguousarray(tensor.numpy(), dtype=np.float32)
        np.save(out / f"{name}.npy", array)
    emit(f"{dev.label} {m}x{n} {OP} accuracy: wrote {out.resolve()}")


# --------------------------------------------------------------------------------------------
# Main
# --------------------------------------------------------------------------------------------


def _run(argv: Sequence[str] | None) -> None:
    args = build_parser().parse_args(argv)
    if args.mode == "warm":
        raise BenchError("--mode warm is burn only (the torch program has mm and accuracy)", code=2)
    if args.mode == "accuracy" and args.out is None:
        raise BenchError("--mode accuracy needs --out DIR", code=2)
    m, n = args.shape or DEFAULT_SHAPE[args.mode]
    _check_extras(args)

    try:
        import numpy  # noqa: F401  (checked here so a missing numpy is one clear line)
        import torch
    except ImportError as exc:
        raise BenchError(f"cannot import {exc.name or 'a dependency'}: {exc}") from None

    if args.threads is not None:
        torch.set_num_threads(args.threads)
    dev = resolve_device(args.device)
    precision = "fp32"
    if dev.label == "cuda":
        set_precision(args.precision)
        precision = cuda_matmul_precision()
    elif args.precision == "tf32":  # --device auto found no CUDA device
        raise BenchError(_tf32_refusal(f"--device auto found {dev.label}"), code=2)

    print_headers(precision)
    if args.mode == "mm":
        extras = Extras(args.dump_kernels, args.energy, precision, args.profile_window)
        run_mm(dev, m, n, args.reps, args.samples, extras)
    else:
        run_accuracy(dev, m, n, args.out)


def _tf32_refusal(found: str) -> str:
    return f"--precision tf32 needs a CUDA device ({found}; TF32 is a CUDA tensor-core mode)"


def _check_extras(args: argparse.Namespace) -> None:
    """Refuse, before any device work, what the options beyond the chapter cannot do."""
    if args.precision == "tf32" and args.device in ("cpu", "mps"):
        raise BenchError(_tf32_refusal(f"got --device {args.device}"), code=2)
    dump = args.dump_kernels
    if dump is not None and not dump.resolve().parent.is_dir():
        folder = dump.resolve().parent
        raise BenchError(f"--dump-kernels {dump}: folder {folder} does not exist", code=2)
    if args.mode == "accuracy":
        for given, option in ((args.energy > 0, "--energy"), (dump is not None, "--dump-kernels"),
                              (args.profile_window, "--profile-window")):
            if given:
                note(f"{option} applies to --mode mm only; ignored in accuracy mode")


def main(argv: Sequence[str] | None = None) -> int:
    try:
        _run(argv)
    except BenchError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return exc.code
    except (RuntimeError, OSError) as exc:  # torch runtime errors (device, memory), file writes
        text = " ".join(str(exc).split()) or type(exc).__name__
        print(f"error: {type(exc).__name__}: {text}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("error: interrupted", file=sys.stderr)
        return 130
    return 0


if __name__ == "__main__":
    sys.exit(main())
