"""The PyTorch benchmark program (the chapter's ``exec_gpu.py``) as a package: one f32 matmul
timed the right and the wrong ways.

Standalone: standard library, ``torch`` and ``numpy`` only (``pynvml`` optional, imported only
by ``--energy``); it does not import the orchestrator and is not installed: ``bench_py/exec_gpu.py``
(a script path) and ``python -m bench_core`` / ``python -m exec_gpu`` from ``bench_py/`` run it.
torch is imported inside functions only, so ``--help`` and bad arguments stay fast and
``exec_jax.py`` can share the pieces below without torch.

The modules mirror the Rust twin ``bench_rust/bench-core/src/*.rs``:

=============  ==========================  ==================================================
module         Rust twin                   role
=============  ==========================  ==================================================
``__init__``   ``lib.rs`` (``Failure``)    this contract, ``BenchError``
``format``     ``format.rs``               durations as Rust's ``{:.3?}``, summary/samples
                                           lines, ``emit``/``note`` (shared with JAX)
``args``       ``args.rs``                 the command line (types shared with JAX)
``facts``      ``lib.rs`` (headers)        devices, the precision switches, timing events,
                                           the header lines
``bench``      ``bench.rs``                the modes: ``mm`` (timing methods), ``accuracy``
``queued``     ``bench.rs`` (queued)       the device timer with the launch gap kept out
``kernels``    (none: burn has no CUPTI)   kernel time from torch.profiler (grouping shared
                                           with JAX)
``window``     ``window.rs``               the profile window for Nsight Compute
``energy``     ``energy.rs``               energy from NVML (aligned, idle subtracted)
``smclock``    ``smclock.rs``              the SM clock at each timed block's ends (shared
                                           with JAX)
``hlo``        (none: JAX only)            what computed a JAX product, from its compiled
                                           module (``exec_jax.py``'s accuracy mode)
``jax_profile`` (none: JAX only)           JAX's profiler: kernel time, the accuracy
                                           product's kernels, the profile window
``compiled``   (none: torch only)          ``--exec``: torch.compile's modes and CUDA graph
                                           replay, their first call taken apart, Inductor's
                                           autotune choice and cache counters
``megacache``  (none: torch only)          torch.compile's caches as one blob: saved after a
                                           first call, loaded before one
``main``       ``lib.rs`` (``main_with_``  arguments to mode, errors to exit status
               ``args``)
=============  ==========================  ==================================================

Every line it prints on stdout follows ``docs/LINES.md``; diagnostics and errors go to stderr.

Modes
-----
``--mode mm`` (default): ``a`` is ``[M, N]``, ``b`` is ``[N, M]`` (``--shape MxN``, default
1024x1024), both uniform in [-1, 1) on the device (``uniform_(-1, 1)``, seed 0: the distribution
of burn's inputs). The program prints, in this order:

* ``torch VERSION, threads N`` and ``torch BLAS_INFO=...`` (parsed from
  ``torch.__config__.show()``); ``N`` is ``torch.get_num_threads()`` after ``--threads``.
* ``torch precision fp32|tf32``: the arithmetic of an f32 matmul. On CUDA it is read back from
  torch after ``--precision`` set it (``torch.backends.cuda.matmul.allow_tf32``, the flag
  cuBLAS reads, checked against ``fp32_precision`` where torch >= 2.9 has it). The CPU and MPS
  always print ``fp32``: there is no TF32 switch for them (the CPU BLAS computes in f32; Apple
  GPUs have no TF32 format and torch's TF32 settings do not reach MPS), so ``--precision tf32``
  is refused there.
* ``LABEL: device init DUR``: wall time from just before the first operation that touches the
  device (filling ``a`` and ``b`` there) to just after the first
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
* ``energy (nvml)``, with ``--energy SECONDS``, after everything else: the idle power, then
  matmuls back to back until SECONDS have passed, every NVML counter read aligned to one of its
  updates; joules, matmuls, wall time, then a ``# energy`` line (idle power, net joules, busy
  share). ``pynvml`` (nvidia-ml-py) is imported only there and for the ``# sm clock`` lines
  (the SM clock at each timed block's start and end, ``smclock``).

Where one of these cannot be measured (no ``torch.cuda._sleep``, no CUPTI, no NVML, not CUDA)
the program says so in a ``note:`` on stderr, prints no line for it, and still exits 0.

``--mode accuracy``: ``a[i, j] = sin(i*N + j)`` and ``b[i, j] = cos(i*M + j)``, the index cast to
float32 and the sine/cosine evaluated in float32 on the CPU, then moved to the device;
``c = a @ b`` on the device (on CUDA under torch.profiler: one ``# kernel ... accuracy kernel
time (cupti)`` line per kernel that computed it). Writes ``a.npy``, ``b.npy`` and ``c.npy``
(float32, C order) to ``--out`` and prints ``LABEL MxN matmul accuracy: wrote DIR``. Default
shape 256x256. The comparing is done by the orchestrator, not here.

Timing details
--------------
Host clocks are ``time.perf_counter_ns()`` (the clock of the chapter's ``time.perf_counter()``,
in integer nanoseconds). Device time comes from ``torch.Event(enable_timing=True)`` where the
installed torch has it, else ``torch.cuda.Event`` / ``torch.mps.Event``; synchronization from
``torch.accelerator.synchronize()`` where available, else ``torch.cuda.synchronize()`` /
``torch.mps.synchronize()``. On CUDA, TF32 is switched off so the matmul is a real f32 matmul
(``--precision fp32``, the default), or allowed for f32 matmuls with ``--precision tf32``.

The median of an even number of samples is the mean of the two middle ones. Durations are
printed as Rust prints ``{:.3?}`` for ``std::time::Duration`` (see ``format.format_duration_ns``):
seconds are first rounded to the nearest integer nanosecond.

Exit status: 0 on success; an expected failure prints one line ``error: ...`` on stderr and exits
2 for bad arguments, 1 for anything else (no such device, a torch runtime error, a write error).
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Sequence


class BenchError(Exception):
    """An expected failure: reported as one ``error: ...`` line on stderr."""

    def __init__(self, message: str, code: int = 1) -> None:
        super().__init__(message)
        self.code = code


def guarded(run: Callable[[Sequence[str] | None], None], argv: Sequence[str] | None,
            runtime: tuple[type[Exception], ...] = ()) -> int:
    """`run(argv)` with its failures as one ``error:`` line and an exit status; `runtime`:
    the further exceptions a program turns into exit 1 with their type named (the JAX
    program names none)."""
    try:
        run(argv)
    except BenchError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return exc.code
    except runtime as exc:
        text = " ".join(str(exc).split()) or type(exc).__name__
        print(f"error: {type(exc).__name__}: {text}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("error: interrupted", file=sys.stderr)
        return 130
    return 0
