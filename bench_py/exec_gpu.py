"""Time one f32 matmul in PyTorch the right and the wrong ways (the chapter's ``exec_gpu.py``).

Standalone: standard library, ``torch`` and ``numpy`` only; it does not import the
orchestrator. Every line it prints on stdout follows ``docs/LINES.md``; diagnostics and errors
go to stderr.

Modes
-----
``--mode mm`` (default): ``a`` is ``[M, N]``, ``b`` is ``[N, M]`` (``--shape MxN``, default
1024x1024), both ``torch.rand`` on the device (seed 0). The program prints, in this order:

* ``torch VERSION, threads N`` and ``torch BLAS_INFO=...`` (parsed from
  ``torch.__config__.show()``); ``N`` is ``torch.get_num_threads()`` after ``--threads``.
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
``torch.mps.synchronize()``. On CUDA, TF32 is switched off so the matmul is a real f32 matmul.

The median of an even number of samples is the mean of the two middle ones. Durations are
printed as Rust prints ``{:.3?}`` for ``std::time::Duration`` (see ``format_duration_ns``):
seconds are first rounded to the nearest integer nanosecond.

Exit status: 0 on success; an expected failure prints one line ``error: ...`` on stderr and exits
2 for bad arguments, 1 for anything else (no such device, a torch runtime error, a write error).
"""

from __future__ import annotations

import argparse
import re
import sys
import time
import timeit
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn

if TYPE_CHECKING:  # torch is imported lazily so that --help and bad arguments stay fast
    import torch

OP = "matmul"
DEVICES = ("cpu", "cuda", "mps", "auto")
MODES = ("mm", "warm", "accuracy")
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


def print_headers() -> None:
    import torch

    emit(f"torch {torch.__version__}, threads {torch.get_num_threads()}")
    match = re.search(r"BLAS_INFO=([^,\s]+)", torch.__config__.show())
    emit(f"torch BLAS_INFO={match.group(1) if match else 'unknown'}")


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
# Modes
# --------------------------------------------------------------------------------------------


def run_mm(dev: Device, m: int, n: int, reps: int, show_samples: bool) -> None:
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
        report(label, shape, f"{label}.Event time", events, show_samples)

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

    try:
        import numpy  # noqa: F401  (checked here so a missing numpy is one clear line)
        import torch
    except ImportError as exc:
        raise BenchError(f"cannot import {exc.name or 'a dependency'}: {exc}") from None

    if args.threads is not None:
        torch.set_num_threads(args.threads)
    dev = resolve_device(args.device)
    if dev.label == "cuda":
        disable_tf32()

    print_headers()
    if args.mode == "mm":
        run_mm(dev, m, n, args.reps, args.samples)
    else:
        run_accuracy(dev, m, n, args.out)


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
