#!/usr/bin/env python3
"""The JAX benchmark program: the chapter's timing methods for `jax.jit(lambda a, b: a @ b)`.

Standalone (jax + numpy; the duration format, the argument types, the kernel grouping, JAX's
profiler blocks (``jax_profile``), the SM clock (``smclock``) and the compiled module's dot
ops (``hlo``) are the package ``bench_core``'s beside it, which imports torch only inside its
functions).
Speaks the printed-line contract (docs/LINES.md) in `mm`, `warm` and `accuracy` modes on `cpu`
and `cuda`. What JAX changes in the chapter's lessons:

- dispatch is asynchronous on the CPU too (`jax_cpu_enable_async_dispatch`), so `no sync` and
  `with sync` differ there; the sync is `block_until_ready()`;
- the first call is trace + lower + XLA compile + run, timed apart through
  `jax.jit(f).lower(a, b)` and `.compile()` (the `first call breakdown` line);
- a persistent compilation cache (`--cache-dir`), whose admission rule
  (`jax_persistent_cache_min_compile_time_secs`, default 1 s, and `..._min_entry_size_bytes`)
  decides whether a process writes anything: both are printed in the `jax cache` header;
- on NVIDIA an f32 dot at the default precision may compute in TF32; `--precision highest`
  asks for FP32. The program cannot know what XLA picked: `jax precision unknown (...)`, and
  the orchestrator infers it from the accuracy arrays.

JAX has no device timer; on cuda the kernels' own time comes from JAX's profiler (CUPTI), and
`--profile-window` marks a block for Nsight Compute through the driver's cuProfilerStart.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_core import BenchError, guarded, hlo, smclock
from bench_core.args import positive_int as _positive_int
from bench_core.args import seconds as _seconds
from bench_core.args import shape as _shape
from bench_core.format import OP, emit, format_duration_ns, note, report
from bench_core.jax_profile import (
    accuracy_product_cupti,
    kernel_time_block,
    profile_window,
)
from bench_core.kernels import KERNEL_METHOD

DEVICES = ("cpu", "cuda")
MODES = ("mm", "warm", "accuracy")
PRECISIONS = ("default", "highest")
DEFAULT_SHAPE = {"mm": (1024, 1024), "warm": (1024, 1024), "accuracy": (256, 256)}
# XLA's CPU client sizes its intra-op pool from NPROC (else the core count); its threads are
# named tf_XLAEigen, which is how the header confirms what the process really has
POOL_THREAD = "tf_XLAEigen"
# the accuracy product's op as the compiled module names it (bench_core/hlo.py)
ACCURACY_XLA_METHOD = "accuracy kernel (xla)"


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="exec_jax.py", description=__doc__.split("\n")[0])
    p.add_argument("--device", choices=DEVICES, default="cpu")
    p.add_argument("--mode", choices=MODES, default="mm")
    p.add_argument("--shape", type=_shape, default=None)
    p.add_argument("--reps", type=_positive_int, default=20)
    p.add_argument("--samples", action="store_true")
    p.add_argument("--warmup", choices=("dropped", "kept"), default="dropped")
    p.add_argument("--timed-runs", type=_positive_int, default=3)
    p.add_argument("--out", type=Path, default=None)
    p.add_argument("--threads", type=_positive_int, default=None,
                   help="XLA CPU intra-op threads (NPROC; 1 also turns Eigen threading off)")
    p.add_argument("--precision", choices=PRECISIONS, default="default")
    p.add_argument("--cache-dir", type=Path, default=None,
                   help="persistent compilation cache folder (jax_compilation_cache_dir)")
    p.add_argument("--energy", type=_seconds, default=0.0)
    p.add_argument("--profile-window", action="store_true")
    p.add_argument("--dump-kernels", type=Path, default=None)
    return p


def set_threads(threads: int | None) -> None:
    """Before jax is imported: XLA reads NPROC and XLA_FLAGS once, at backend creation."""
    if threads is None:
        return
    os.environ["NPROC"] = str(threads)
    if threads == 1:
        flags = os.environ.get("XLA_FLAGS", "")
        os.environ["XLA_FLAGS"] = f"{flags} --xla_cpu_multi_thread_eigen=false".strip()


def pool_threads() -> int:
    """The XLA CPU pool's threads of this process, counted in /proc (Linux); 0 elsewhere."""
    tasks = Path("/proc/self/task")
    if not tasks.is_dir():
        return 0
    count = 0
    for task in tasks.iterdir():
        try:
            count += (task / "comm").read_text().strip().startswith(POOL_THREAD)
        except OSError:
            continue
    return count


def precision_header(jax: Any, device: str, precision: str) -> str:
    """What the program knows of its f32 dot's arithmetic (docs/LINES.md)."""
    if precision == "highest":
        return "jax precision fp32 (precision=highest)"
    if device == "cpu":
        return "jax precision fp32 (default: XLA's CPU dot computes in f32)"
    return "jax precision unknown (default: XLA may compute f32 dots in TF32 on sm >= 80)"


def configure_cache(jax: Any, cache_dir: Path | None) -> str:
    """The persistent compilation cache as this process uses it: the `jax cache` header."""
    if cache_dir is not None:
        cache_dir.mkdir(parents=True, exist_ok=True)
        jax.config.update("jax_compilation_cache_dir", str(cache_dir))
    where = jax.config.jax_compilation_cache_dir
    min_s = jax.config.jax_persistent_cache_min_compile_time_secs
    min_b = jax.config.jax_persistent_cache_min_entry_size_bytes
    if not where:
        return "jax cache off"
    return f"jax cache {where}, min compile time {min_s:g} s, min entry size {min_b} B"


class Device:
    """The jax device, its printed label and its sync."""

    def __init__(self, jax: Any, kind: str) -> None:
        platform = "gpu" if kind == "cuda" else "cpu"
        try:
            self.device = jax.devices(platform)[0]
        except RuntimeError as exc:
            raise BenchError(f"no {kind} device for JAX: {exc}") from None
        self.label = kind
        self.init_ns = 0  # the backend's creation, set by the caller that timed it
        self.is_accelerator = kind == "cuda"


def _matmul(jax: Any, precision: str) -> Callable[..., Any]:
    import jax.numpy as jnp

    chosen = None if precision == "default" else jax.lax.Precision.HIGHEST

    def matmul(a: Any, b: Any) -> Any:  # its name keys the cache entry: jit_matmul-<hash>
        return jnp.matmul(a, b, precision=chosen)

    return matmul


def device_init(jax: Any, dev: Device, m: int, n: int) -> tuple[Any, Any]:
    """The first operations on the device: the backend's creation (`jax.devices`, timed before
    the headers so that they can confirm the thread pool), N(0,1) inputs copied, up to ready."""
    import numpy as np

    rng = np.random.default_rng(0)
    t0 = time.perf_counter_ns()
    a = jax.device_put(rng.standard_normal((m, n), dtype=np.float32), dev.device)
    b = jax.device_put(rng.standard_normal((n, m), dtype=np.float32), dev.device)
    a.block_until_ready()
    b.block_until_ready()
    spent = dev.init_ns + time.perf_counter_ns() - t0
    emit(f"{dev.label}: device init {format_duration_ns(spent)}")
    return a, b


def first_call(jax: Any, dev: Device, a: Any, b: Any, precision: str) -> Callable[..., Any]:
    """The first call through jit's AOT path: trace and lower, compile, first run."""
    clock = time.perf_counter_ns
    shape = f"{a.shape[0]}x{a.shape[1]}"
    t0 = clock()
    lowered = jax.jit(_matmul(jax, precision)).lower(a, b)
    t1 = clock()
    compiled = lowered.compile()
    t2 = clock()
    c = compiled(a, b)
    t3 = clock()
    c.block_until_ready()
    t4 = clock()
    # JAX dispatches asynchronously on the CPU too: both forms say returned / after sync
    emit(f"{dev.label} {shape} {OP} first call: returned {format_duration_ns(t3 - t0)}, "
         f"after sync {format_duration_ns(t4 - t0)}")
    emit(f"{dev.label} {shape} {OP} first call breakdown: trace and lower "
         f"{format_duration_ns(t1 - t0)}, compile {format_duration_ns(t2 - t1)}, first run "
         f"{format_duration_ns(t4 - t2)}")
    return compiled


def open_clock(dev: Device) -> smclock.SmClock:
    """NVML's SM clock of the JAX device (matched by the PCI bus id of its CUDA ordinal), or
    one that reads None: off CUDA, without pynvml or NVML (a note)."""
    def find(nvml: Any) -> Any:
        ordinal = int(getattr(dev.device, "local_hardware_id", None) or 0)
        return smclock.bus_id_handle(nvml, smclock.cuda_pci_bus_id(ordinal), f"cuda:{ordinal}")

    return smclock.open_clock(dev.label, 0, find=find)


def run_mm(jax: Any, dev: Device, args: argparse.Namespace, m: int, n: int) -> None:
    shape = f"{m}x{n}"
    a, b = device_init(jax, dev, m, n)
    f = first_call(jax, dev, a, b, args.precision)
    f(a, b).sum().item()  # the reduction's own first call, kept out of the read-back figures
    # The SM clock at each timed block's start and end (NVML, CUDA; outside the timing)
    sm = open_clock(dev)
    try:
        _timed_blocks(jax, dev, args, (a, b, f), shape, sm)
    finally:
        sm.close()
    if args.energy > 0:
        note("--energy: the JAX program has no NVML energy block; no line")


def _timed_blocks(jax: Any, dev: Device, args: argparse.Namespace, work: tuple[Any, Any, Any],
                  shape: str, sm: smclock.SmClock) -> None:
    """The methods after the first call, each block between two reads of the SM clock."""
    clock = time.perf_counter_ns
    a, b, f = work
    nosync: list[int] = []
    synced: list[int] = []
    start_mhz = sm.read()
    for _ in range(args.reps):
        t = clock()
        c = f(a, b)
        nosync.append(clock() - t)
        c.block_until_ready()
        synced.append(clock() - t)
        del c
    end_mhz = sm.read()
    report(dev.label, shape, "no sync", _s(nosync), args.samples)
    report(dev.label, shape, "with sync", _s(synced), args.samples)
    for method in ("no sync", "with sync"):  # one loop: the same clocks for both
        smclock.clock_line(dev.label, shape, method, start_mhz, end_mhz)
    readback: list[int] = []
    start_mhz = sm.read()
    for _ in range(args.reps):
        t = clock()
        f(a, b).sum().item()
        readback.append(clock() - t)
    end_mhz = sm.read()
    report(dev.label, shape, "+ sum().item()", _s(readback), args.samples)
    smclock.clock_line(dev.label, shape, "+ sum().item()", start_mhz, end_mhz)
    if dev.is_accelerator:
        start_mhz = sm.read()
        kernel_time_block(jax, dev, f, a, b, args)
        smclock.clock_line(dev.label, shape, KERNEL_METHOD, start_mhz, sm.read())
        if args.profile_window:
            profile_window(f, a, b, args.reps)
    else:
        for flag, asked in (("--dump-kernels", args.dump_kernels), ("--profile-window",
                                                                    args.profile_window)):
            if asked:
                note(f"{flag}: no CUDA profiler on {dev.label}; nothing done")


def _s(values: Sequence[int]) -> list[float]:
    return [v / 1e9 for v in values]


def run_warm(jax: Any, dev: Device, args: argparse.Namespace, m: int, n: int) -> None:
    """The warm-up puzzle: one call without sync (dropped or kept), then timed synced runs."""
    a, b = device_init(jax, dev, m, n)
    f = jax.jit(_matmul(jax, args.precision))
    warm = f(a, b)  # no sync: compile happens here, the run may still be queued
    if args.warmup == "dropped":
        del warm
    for i in range(1, args.timed_runs + 1):
        t = time.perf_counter_ns()
        f(a, b).block_until_ready()
        emit(f"warm-up {args.warmup}, timed run {i}: after sync "
             f"{format_duration_ns(time.perf_counter_ns() - t)}")


def run_accuracy(jax: Any, dev: Device, args: argparse.Namespace, m: int, n: int) -> None:
    """a = sin(k), b = cos(k) in float32 (k the flat index, as the other programs); what
    computed c: the compiled executable's dot ops (`accuracy kernel (xla)`, every device) and,
    on cuda, the kernels CUPTI saw compute it (`accuracy kernel time (cupti)`, as torch's)."""
    import numpy as np

    a = np.sin(np.arange(m * n, dtype=np.int64).astype(np.float32).reshape(m, n))
    b = np.cos(np.arange(n * m, dtype=np.int64).astype(np.float32).reshape(n, m))
    a_dev, b_dev = jax.device_put(a, dev.device), jax.device_put(b, dev.device)
    compiled = jax.jit(_matmul(jax, args.precision)).lower(a_dev, b_dev).compile()
    shape = f"{m}x{n}"
    hlo_lines(dev.label, shape, compiled)
    if dev.is_accelerator:
        c = np.asarray(accuracy_product_cupti(jax, dev, shape, lambda: compiled(a_dev, b_dev)))
    else:
        c = np.asarray(compiled(a_dev, b_dev))
    out: Path = args.out
    out.mkdir(parents=True, exist_ok=True)
    for name, array in (("a", a), ("b", b), ("c", c)):
        np.save(out / f"{name}.npy", np.ascontiguousarray(array, dtype=np.float32))
    emit(f"{dev.label} {m}x{n} {OP} accuracy: wrote {out.resolve()}")


def hlo_lines(label: str, shape: str, compiled: Any) -> None:
    """`# kernel LABEL SHAPE matmul accuracy kernel (xla): N op(s): NAME`, one per distinct op
    of the compiled module that computes a dot (bench_core/hlo.py names them)."""
    try:
        ops = hlo.dot_ops(compiled.as_text())
    except Exception as exc:  # the product still counts; only its evidence is missing
        note(f"{ACCURACY_XLA_METHOD}: the compiled module's text could not be read "
             f"({type(exc).__name__}: {exc}); no line")
        return
    if not ops:
        note(f"{ACCURACY_XLA_METHOD}: no dot in the compiled module; no line")
    for name, count in ops:
        emit(f"# kernel {label} {shape} {OP} {ACCURACY_XLA_METHOD}: {count} "
             f"{'op' if count == 1 else 'ops'}: {name}")


def _run(argv: Sequence[str] | None) -> None:
    args = build_parser().parse_args(argv)
    if args.mode == "accuracy" and args.out is None:
        raise BenchError("--mode accuracy needs --out DIR", code=2)
    m, n = args.shape or DEFAULT_SHAPE[args.mode]
    set_threads(args.threads)
    import jax

    if args.device == "cpu":
        jax.config.update("jax_platforms", "cpu")
    t0 = time.perf_counter_ns()
    try:
        dev = Device(jax, args.device)
    except BenchError:
        emit(f"jax {jax.__version__}")
        raise
    dev.init_ns = time.perf_counter_ns() - t0
    pool = pool_threads()
    emit(f"jax {jax.__version__}, threads {pool}" if pool else f"jax {jax.__version__}")
    emit(precision_header(jax, args.device, args.precision))
    emit(configure_cache(jax, args.cache_dir))
    {"mm": run_mm, "warm": run_warm, "accuracy": run_accuracy}[args.mode](jax, dev, args, m, n)


def main(argv: Sequence[str] | None = None) -> int:
    return guarded(_run, argv)


if __name__ == "__main__":
    sys.exit(main())
