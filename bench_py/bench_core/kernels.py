"""``kernel time (cupti)``: the matmuls' own GPU time from ``torch.profiler`` with CUDA
activities (CUPTI), CUDA only. Every matmul of the profiled block launches the same sequence of
k kernels, so the device events sorted by start are grouped into matmuls by launch order
(``group_kernels``, shared with ``exec_jax.py``, whose profiler trace has the same shape); one
``# kernel`` line per distinct kernel name follows the summary. burn has no twin of this: its
kernel time comes from Nsight Compute (``window``).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from . import format as fmt
from .facts import Device, cuda_index
from .format import OP

if TYPE_CHECKING:
    import torch

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


def _profile_matmuls(a: torch.Tensor, b: torch.Tensor, reps: int, sync: Callable[[], None],
                     mm: Callable[[Any, Any], Any]) -> Any:
    """``reps`` back-to-back matmuls under torch.profiler with CUDA activities (CUPTI)."""
    from torch.profiler import ProfilerActivity, profile

    warm = mm(a, b)  # CUPTI and the kernel selection are not what is measured
    sync()
    del warm
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        outs = [mm(a, b) for _ in range(reps)]  # each kept until the sync: no allocator reuse
        sync()
    del outs
    return prof


def _dump_kernels(path: Path, events: list[dict[str, Any]], meta: dict[str, Any]) -> None:
    """Write the profiler's device events and what produced them, for a test fixture."""
    path.write_text(json.dumps({**meta, "events": events}, indent=1) + "\n", encoding="utf-8")
    fmt.note(f"--dump-kernels: wrote {len(events)} device events to {path}")


def kernel_time_block(
    dev: Device,
    a: torch.Tensor,
    b: torch.Tensor,
    reps: int,
    show_samples: bool,
    dump: Path | None,
    precision: str,
) -> float | None:
    """The kernel-time summary, its samples, and one ``# kernel`` line per kernel name; the
    median per-matmul kernel time (s), None where the grouping (or the profiler) failed."""
    import torch

    label, shape = dev.label, f"{a.shape[0]}x{a.shape[1]}"
    try:
        index = cuda_index(a)
        events = kernel_events(_profile_matmuls(a, b, reps, dev.sync, dev.mm), index)
    except Exception as exc:  # no CUPTI, a profiler bug: the figure is optional, never fatal
        text = " ".join(str(exc).split()) or type(exc).__name__
        fmt.note(f"torch.profiler failed ({type(exc).__name__}: {text}): no {KERNEL_METHOD} line")
        return None
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
        fmt.note(f"{label} {shape} {OP} {KERNEL_METHOD}: {groups.note}")
    per_matmul = None
    if groups.per_matmul_us is not None:
        per_matmul = [us / 1e6 for us in groups.per_matmul_us]
        fmt.report(label, shape, KERNEL_METHOD, per_matmul, show_samples)
    kernel_lines(label, shape, KERNEL_METHOD, groups.kernels)
    return fmt.median(per_matmul) if per_matmul else None


def kernel_lines(label: str, shape: str, method: str, stats: Sequence[KernelStat]) -> None:
    """One ``# kernel LABEL SHAPE OP METHOD: N launches, min DUR median DUR: NAME`` each."""
    for kernel in stats:
        seconds = [us / 1e6 for us in kernel.durations_us]
        fmt.emit(
            f"# kernel {label} {shape} {OP} {method}: {len(seconds)} launches, "
            f"min {fmt.format_duration(min(seconds))} "
            f"median {fmt.format_duration(fmt.median(seconds))}: "
            f"{kernel.name}"
        )


ACCURACY_KERNEL_METHOD = "accuracy kernel time (cupti)"


def accuracy_product(dev: Device, a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    """``a @ b`` on the device for the accuracy mode; on CUDA under torch.profiler (CUPTI),
    then one ``# kernel ... accuracy kernel time (cupti)`` line per kernel that computed it
    (which kernel, and so which arithmetic, made the arrays the orchestrator compares).
    The product is the same either way: the profiler only records; where it fails, a note
    and the product without the lines."""
    if dev.label != "cuda":
        return dev.mm(a, b)
    try:
        from torch.profiler import ProfilerActivity, profile

        with profile(activities=[ProfilerActivity.CUDA]) as prof:
            c = dev.mm(a, b)
            dev.sync()
        events = kernel_events(prof, cuda_index(c))
    except Exception as exc:  # no CUPTI, a profiler bug: the product is what matters here
        text = " ".join(str(exc).split()) or type(exc).__name__
        fmt.note(f"torch.profiler failed ({type(exc).__name__}: {text}): no "
                 f"{ACCURACY_KERNEL_METHOD} line")
        return dev.mm(a, b)
    groups = group_kernels(events, 1)
    if not groups.kernels:
        fmt.note(f"{ACCURACY_KERNEL_METHOD}: the profiler recorded no device kernel")
    kernel_lines(dev.label, f"{a.shape[0]}x{a.shape[1]}", ACCURACY_KERNEL_METHOD,
                 groups.kernels)
    return c

