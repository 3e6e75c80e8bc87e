"""The profile window of mm mode (``--profile-window``, docs/LINES.md): one more block of
``--reps`` matmuls, each synced, between ``cudaProfilerStart`` and ``cudaProfilerStop``, so that
a profiler started with ``--profile-from-start off`` (Nsight Compute's profile runs) sees exactly
these kernels. Prints nothing: the profiler's output is the figure. The twin of
``bench-core/src/window.rs``.
"""

from __future__ import annotations

import operator
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import torch


def profile_window_block(
    a: torch.Tensor, b: torch.Tensor, reps: int, sync: Callable[[], None],
    mm: Callable[[Any, Any], Any] = operator.matmul,
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
            c = mm(a, b)
            sync()
            del c
    finally:
        torch.cuda.profiler.stop()
