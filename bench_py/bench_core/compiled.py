"""Execution modes beyond eager (``--exec``): the same matmul through ``torch.compile`` or
replayed from a CUDA graph, its first call taken apart, and what Inductor's caches did.

``eager`` is ``a @ b`` as the chapter times it. ``compile`` / ``compile:MODE`` is
``torch.compile(matmul, mode=MODE, fullgraph=True, dynamic=False)`` (``compile`` is mode
``default``; ``max-autotune`` benchmarks Triton templates against cuBLAS and, on CUDA, replays
through CUDA graph trees; ``max-autotune-no-cudagraphs`` autotunes without them). On the CPU
Inductor emits C++ and needs a compiler at run time. ``cudagraph`` (CUDA only) captures one
``a @ b`` in a ``torch.cuda.CUDAGraph`` (three warm-up calls on a side stream first, the
documented recipe) and every later call replays it on the same tensors.

The first call of a compiled mode is taken apart from torch's own compile-time metrics
(``torch._dynamo.utils.compilation_time_metrics``): Dynamo's trace is ``_compile.compile_inner``
less ``OutputGraph.call_user_compiler`` (the backend: AOTAutograd and Inductor, autotuning and
Triton/C++ compiles included), the first run is the rest of the first call up to its sync.
Inductor's choice for the mm comes from a feedback saver of ``select_algorithm`` (every
candidate's time; called for a fresh benchmark and for a reused autotune result alike), and the
caches' hits and misses from torch's counters (``counters["inductor"]["fxgraph_cache_hit"]``, ...).
``--cache-dir DIR`` puts Inductor's caches in ``DIR/inductor`` (``TORCHINDUCTOR_CACHE_DIR``) and
Triton's in ``DIR/triton`` (``TRITON_CACHE_DIR``), set before torch is imported.
"""

from __future__ import annotations

import operator
import os
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from . import BenchError, megacache
from . import format as fmt
from .format import OP

if TYPE_CHECKING:
    import torch

    from .facts import Device

EAGER, CUDAGRAPH = "eager", "cudagraph"
COMPILE_MODES = ("default", "reduce-overhead", "max-autotune", "max-autotune-no-cudagraphs")
EXECS = (EAGER, "compile", *(f"compile:{m}" for m in COMPILE_MODES[1:]), CUDAGRAPH)
AUTOTUNE_METHOD = "autotune (inductor)"
CACHE_METHOD = "compile cache (inductor)"
# the counters a run reports, in the order of its `compile cache` line (docs/LINES.md)
COUNTERS = (("aot_autograd", "autograd_cache_hit"), ("aot_autograd", "autograd_cache_miss"),
            ("inductor", "fxgraph_cache_hit"), ("inductor", "fxgraph_cache_miss"),
            ("inductor", "select_algorithm_autotune"))
_TRACE_TOTAL, _BACKEND = "_compile.compile_inner", "OutputGraph.call_user_compiler"
GRAPH_WARMUPS = 3


def compile_mode(exec_mode: str) -> str | None:
    """torch.compile's mode of an exec mode ('compile' -> 'default'); None: not compiled."""
    if exec_mode == "compile":
        return "default"
    return exec_mode.split(":", 1)[1] if exec_mode.startswith("compile:") else None


def set_cache_dir(folder: Path) -> None:
    """Inductor's and Triton's caches under `folder`; before torch is imported (both read
    their variable when they first need the folder)."""
    os.environ["TORCHINDUCTOR_CACHE_DIR"] = str(folder / "inductor")
    os.environ["TRITON_CACHE_DIR"] = str(folder / "triton")


def exec_header(exec_mode: str, cache_dir: Path | None) -> str:
    """``torch exec MODE`` (compiled modes: ``, cache DIR``): after the precision header."""
    where = f", cache {cache_dir.resolve()}" if cache_dir is not None else ""
    return f"torch exec {exec_mode}{where}"


def check(exec_mode: str, label: str) -> None:
    """Refuse what this device cannot run, before any device work."""
    if exec_mode == CUDAGRAPH and label != "cuda":
        raise BenchError(f"--exec cudagraph needs a CUDA device (got {label})", code=2)
    if compile_mode(exec_mode) is not None and label not in ("cpu", "cuda"):
        raise BenchError(f"--exec {exec_mode}: Inductor compiles for cpu and cuda (got {label})",
                         code=2)


def _matmul(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    return x @ y


class Autotune:
    """What Inductor's mm autotune chose: every candidate's time (ms) of its last choice."""

    def __init__(self) -> None:
        self.timings: dict[Any, float] = {}

    def __call__(self, timings: dict[Any, float], *_rest: Any) -> None:
        self.timings = dict(timings)

    def winner(self) -> tuple[int, str] | None:
        """(candidates, 'NAME (template|extern, median DUR): DESCRIPTION') or None."""
        finite = {c: t for c, t in self.timings.items() if t == t and t != float("inf")}
        if not finite:
            return None
        best = min(finite, key=finite.__getitem__)
        kind = "extern" if "Extern" in type(best).__name__ else "template"
        name = str(getattr(best, "name", type(best).__name__))
        text = " ".join(str(getattr(best, "description", "") or "").split())
        words = f"{name} ({kind}, {fmt.format_duration(finite[best] / 1e3)})"
        return len(self.timings), f"{words}: {text}" if text else words

    def line(self, head: str) -> str | None:
        """`# kernel HEAD autotune (inductor): N candidates: WINNER` (docs/LINES.md), or None
        where Inductor chose among no candidates (one choice is not benchmarked)."""
        winner = self.winner()
        if winner is None:
            return None
        return f"# kernel {head} {AUTOTUNE_METHOD}: {winner[0]} candidates: {winner[1]}"


def _metrics() -> dict[str, float]:
    from torch._dynamo.utils import compilation_time_metrics

    return {k: sum(v) for k, v in compilation_time_metrics.items() if k in (_TRACE_TOTAL, _BACKEND)}


def _counts() -> list[int]:
    from torch._dynamo.utils import counters

    return [int(counters[group][key]) for group, key in COUNTERS]


@dataclass
class First:
    """A mode's matmul and its first call: the times, and the contract lines that take it
    apart (printed after the `first call` line: `breakdown`, then `more`)."""

    mm: Callable[..., torch.Tensor]
    returned_ns: int
    after_ns: int
    breakdown: str | None = None
    more: list[str] = field(default_factory=list)

    def emit(self, breakdown: bool = True) -> None:
        for line in ([self.breakdown] if breakdown and self.breakdown else []) + self.more:
            fmt.emit(line)


def prepare(dev: Device, exec_mode: str, a: torch.Tensor, b: torch.Tensor, shape: str,
            artifacts: megacache.Artifacts | None = None) -> First:
    """The matmul of `exec_mode` and its first call (docs/LINES.md); a compiled mode's
    caches filled from a mega-cache blob before it, or saved as one after it (`artifacts`)."""
    head = f"{dev.label} {shape} {OP}"
    if exec_mode == CUDAGRAPH:
        return _graph(dev, a, b, head)
    mode = compile_mode(exec_mode)
    if mode is None:
        return _first(dev, operator.matmul, a, b)
    import torch
    from torch._inductor import select_algorithm

    seen = Autotune()
    saving = hasattr(select_algorithm, "add_feedback_saver")
    if saving:
        select_algorithm.add_feedback_saver(seen)
    else:  # older torch: the kernel-time block's names still say what ran
        fmt.note(f"torch {torch.__version__} has no select_algorithm.add_feedback_saver: "
                 f"no {AUTOTUNE_METHOD} line")
    artifacts = artifacts or megacache.Artifacts()
    try:
        loaded = megacache.load(artifacts, head) if artifacts.load else None
        before, counts = _metrics(), _counts()
        fn = torch.compile(_matmul, mode=mode, fullgraph=True, dynamic=False)
        first = _first(dev, fn, a, b)
        spent = {k: v - before.get(k, 0.0) for k, v in _metrics().items()}
        counts = [n - m for n, m in zip(_counts(), counts, strict=True)]
    finally:
        if saving and hasattr(select_algorithm, "clear_feedback_savers"):
            select_algorithm.clear_feedback_savers()
    first.breakdown = _breakdown(head, first.after_ns, spent)
    if (tuned_line := seen.line(head)) is not None:
        first.more.append(tuned_line)
    hit, miss, fx_hit, fx_miss, tuned = counts
    first.more.append(f"{head} {CACHE_METHOD}: fx graph hit {fx_hit} miss {fx_miss}, aot "
                      f"autograd hit {hit} miss {miss}, autotune benchmarked {tuned}")
    saved = megacache.save(artifacts.save, head) if artifacts.save else None
    first.more += [line for line in (loaded, saved) if line]
    return first


def _first(dev: Device, fn: Callable[..., torch.Tensor], a: torch.Tensor,
           b: torch.Tensor) -> First:
    clock = time.perf_counter_ns
    t0 = clock()
    c = fn(a, b)
    returned = clock() - t0
    dev.sync()
    after = clock() - t0
    del c
    return First(fn, returned, after)


def _breakdown(head: str, after_ns: int, spent: dict[str, float]) -> str | None:
    if _TRACE_TOTAL not in spent or _BACKEND not in spent:
        fmt.note(f"this torch records no {_TRACE_TOTAL}/{_BACKEND} compile times: "
                 "no first call breakdown line")
        return None
    total_ns, backend_ns = round(spent[_TRACE_TOTAL] * 1e9), round(spent[_BACKEND] * 1e9)
    dur = fmt.format_duration_ns
    return (f"{head} first call breakdown: dynamo trace {dur(max(total_ns - backend_ns, 0))}, "
            f"inductor compile {dur(backend_ns)}, first run {dur(max(after_ns - total_ns, 0))}")


def _graph(dev: Device, a: torch.Tensor, b: torch.Tensor, head: str) -> First:
    """Warm-up on a side stream, capture, first replay (its first call); later calls replay."""
    import torch

    clock, dur = time.perf_counter_ns, fmt.format_duration_ns
    t0 = clock()
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        for _ in range(GRAPH_WARMUPS):
            out = a @ b
    torch.cuda.current_stream().wait_stream(side)
    dev.sync()
    del out
    t1 = clock()
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        static = a @ b
    t2 = clock()
    graph.replay()
    returned = clock() - t0
    dev.sync()
    t3 = clock()

    def replay(_a: torch.Tensor, _b: torch.Tensor) -> torch.Tensor:
        graph.replay()  # the captured a @ b, on the tensors it was captured with
        return static

    line = (f"{head} first call breakdown: warm-up {dur(t1 - t0)}, graph capture "
            f"{dur(t2 - t1)}, first replay {dur(t3 - t2)}")
    return First(replay, returned, t3 - t0, line)
