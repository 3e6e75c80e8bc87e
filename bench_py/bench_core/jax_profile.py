"""JAX's profiler for ``exec_jax.py`` (CUDA): the ``kernel time (cupti)`` block, the kernels
that computed an accuracy product (``accuracy kernel time (cupti)``, as torch's ``kernels``
prints them) and the ``--profile-window`` for Nsight Compute. JAX's profiler writes a perfetto
trace; its ``/device:GPU:N`` ``Stream`` events are CUPTI's kernels and copies, grouped as
torch's (``kernels.group_kernels``). ``jax`` is passed in, never imported here.
"""

from __future__ import annotations

import argparse
import gzip
import json
import tempfile
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from .format import OP, emit, format_duration_ns, note, report
from .kernels import ACCURACY_KERNEL_METHOD, KERNEL_METHOD, group_kernels, kernel_lines


def kernel_time_block(jax: Any, dev: Any, f: Callable[..., Any], a: Any, b: Any,
                      args: argparse.Namespace) -> None:
    """`kernel time (cupti)`: JAX's profiler (CUPTI) around --reps synced matmuls."""
    shape = f"{a.shape[0]}x{a.shape[1]}"
    try:
        with tempfile.TemporaryDirectory() as folder:
            jax.profiler.start_trace(folder, create_perfetto_trace=True)
            for _ in range(args.reps):
                f(a, b).block_until_ready()
            jax.profiler.stop_trace()
            events = trace_kernels(_perfetto_trace(Path(folder)))
    except Exception as exc:
        note(f"kernel time: JAX's profiler failed ({type(exc).__name__}: {exc}); no lines")
        return
    if args.dump_kernels is not None:
        meta = {"jax": jax.__version__, "gpu": str(dev.device.device_kind), "shape": shape,
                "reps": args.reps, "precision": args.precision, "events": events}
        args.dump_kernels.write_text(json.dumps(meta, indent=1))
    groups = group_kernels(events, args.reps)
    if groups.note:
        note(f"kernel time: {groups.note}")
    text = KERNEL_METHOD
    if groups.per_matmul_us is not None:
        report(dev.label, shape, text, [us / 1e6 for us in groups.per_matmul_us], args.samples)
    for kernel in groups.kernels:
        durations = [us * 1e3 for us in kernel.durations_us]  # µs to ns
        emit(f"# kernel {dev.label} {shape} {OP} {text}: {len(durations)} launches, min "
             f"{format_duration_ns(round(min(durations)))} median "
             f"{format_duration_ns(round(_median(durations)))}: {kernel.name}")


def _median(values: Sequence[float]) -> float:
    ordered = sorted(values)
    mid = len(ordered) // 2
    return ordered[mid] if len(ordered) % 2 else (ordered[mid - 1] + ordered[mid]) / 2


def _perfetto_trace(folder: Path) -> dict[str, Any]:
    found = sorted(folder.rglob("*.trace.json.gz")) or sorted(folder.rglob("perfetto_trace*"))
    if not found:
        raise OSError(f"no trace file under {folder}")
    raw = found[0].read_bytes()
    return json.loads(gzip.decompress(raw) if raw[:2] == b"\x1f\x8b" else raw)


def trace_kernels(trace: dict[str, Any]) -> list[dict[str, Any]]:
    """The GPU stream events of a JAX profiler trace, as exec_gpu's kernel_events dicts.

    Device processes are named `/device:GPU:N`; their `Stream #K...` threads hold the kernels
    and copies as CUPTI saw them (the `XLA Ops`/`XLA Modules` threads are derived summaries of
    the same time, left out so nothing is counted twice)."""
    events = trace.get("traceEvents", [])
    processes = {e["pid"]: e.get("args", {}).get("name", "") for e in events
                 if e.get("ph") == "M" and e.get("name") == "process_name"}
    threads = {(e["pid"], e["tid"]): e.get("args", {}).get("name", "") for e in events
               if e.get("ph") == "M" and e.get("name") == "thread_name"}
    out = []
    for e in events:
        where = processes.get(e.get("pid"), "")
        if e.get("ph") != "X" or not where.startswith("/device:GPU"):
            continue
        if not threads.get((e["pid"], e.get("tid")), "").startswith("Stream"):
            continue
        name = str(e.get("name", ""))
        kind = "gpu_memcpy" if "memcpy" in name.lower() else "kernel"
        out.append({"name": name, "start_us": float(e["ts"]), "duration_us": float(e["dur"]),
                    "device": where, "kind": kind})
    return out


def profile_window(f: Callable[..., Any], a: Any, b: Any, reps: int) -> None:
    """--reps synced matmuls between the driver's cuProfilerStart and cuProfilerStop."""
    import ctypes

    try:
        cuda = ctypes.CDLL("libcuda.so.1")
    except OSError as exc:
        note(f"--profile-window: cannot load libcuda ({exc}); no window marked")
        return
    f(a, b).block_until_ready()
    cuda.cuProfilerStart()
    for _ in range(reps):
        f(a, b).block_until_ready()
    cuda.cuProfilerStop()


def accuracy_product_cupti(jax: Any, dev: Any, shape: str,
                           product: Callable[[], Any]) -> Any:
    """The product under JAX's profiler (CUPTI), then torch's `# kernel ... accuracy kernel
    time (cupti)` lines for the kernels that computed it; where the profiler fails, a note and
    the product without them (the profiler only records)."""
    try:
        with tempfile.TemporaryDirectory() as folder:
            jax.profiler.start_trace(folder, create_perfetto_trace=True)
            c = product()
            c.block_until_ready()
            jax.profiler.stop_trace()
            events = trace_kernels(_perfetto_trace(Path(folder)))
    except Exception as exc:
        note(f"{ACCURACY_KERNEL_METHOD}: JAX's profiler failed ({type(exc).__name__}: {exc}); "
             "no line")
        return product()
    groups = group_kernels(events, 1)
    if not groups.kernels:
        note(f"{ACCURACY_KERNEL_METHOD}: the profiler recorded no device kernel")
    kernel_lines(dev.label, shape, ACCURACY_KERNEL_METHOD, groups.kernels)
    return c
