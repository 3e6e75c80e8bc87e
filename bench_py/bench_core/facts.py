"""What the run stands on: the device (``--device``, resolved the way the installed torch can),
the one code path to wait on it and to time on it, CUDA's f32 matmul precision (set by
``--precision`` and read back from torch, never assumed), and the header lines that say so
(``torch VERSION, threads N``, ``torch BLAS_INFO=...``, ``torch precision ...``). The headers
are the twin of ``header_line``/``precision_line`` in ``bench-core/src/lib.rs``.
"""

from __future__ import annotations

import operator
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from . import BenchError
from . import format as fmt

if TYPE_CHECKING:  # torch is imported lazily so that --help and bad arguments stay fast
    import torch


@dataclass
class Device:
    """The device a run uses and the one code path to wait on it and time on it."""

    label: str  # as printed: cpu, cuda, mps (xpu, ... when --device auto finds one)
    device: torch.device
    sync: Callable[[], None]
    is_accelerator: bool
    # the matmul every block times: `a @ b` (eager), or the exec mode's (bench_core/compiled)
    mm: Callable[[Any, Any], Any] = operator.matmul


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


def event_factory(dev: Device) -> Callable[[], Any]:
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



def cuda_index(tensor: torch.Tensor) -> int:
    """The CUDA device index a tensor lives on (``cuda`` alone means the current device)."""
    import torch

    index = tensor.device.index
    return torch.cuda.current_device() if index is None else int(index)


def print_headers(precision: str = "fp32") -> None:
    """The header lines; ``precision`` is what ``cuda_matmul_precision`` read (fp32 elsewhere)."""
    import torch

    fmt.emit(f"torch {torch.__version__}, threads {torch.get_num_threads()}")
    match = re.search(r"BLAS_INFO=([^,\s]+)", torch.__config__.show())
    fmt.emit(f"torch BLAS_INFO={match.group(1) if match else 'unknown'}")
    fmt.emit(f"torch precision {precision}")
