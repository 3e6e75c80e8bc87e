"""What the parser reads from a program's output: figures, samples, headers (frozen, built by
keywords), the parse result and the context a caller gives; `mutable_twin` serves the
parser's fast path."""

from __future__ import annotations

from dataclasses import MISSING, dataclass, field, fields, make_dataclass
from typing import Any

from orchestrator.records.runs import CacheState


@dataclass(frozen=True, slots=True, kw_only=True)
class Figure:
    """One figure of one line: a future dataset row (built by keywords: 19 fields)."""

    framework: str | None  # 'torch' | 'burn' | None when nothing tells
    label: str  # as printed: 'mps', 'flex(template)', ...; '' when unknown
    device: str  # cpu|cuda|mps|metal|vulkan|...: what the label runs on
    shape: str | None  # '1024x1024'
    op: str | None  # 'matmul'
    method: str  # dataset name: no_sync, with_sync, device_time, ..., accuracy
    method_text: str  # as printed: 'mps.Event time', 'device init', ...
    stat: str  # min, median, value, no_time_count, max_err_f64_ref, max_diff_torch_cpu, ...
    value: float  # seconds; a count or plain number for the stats that are not times
    runs: int | None
    threads: int | None
    cache: CacheState  # NONE when the run has none or the log does not say
    process: int | None
    warmup: str | None  # 'dropped' | 'kept'
    iteration: int | None  # the warm-up puzzle's timed run index
    section: str | None  # text of the last '### ' header
    line_no: int  # 1-based
    profiler: str = ""  # method kernel_time: 'cupti' | 'ncu'; '' for every other figure
    kernel: str = ""  # kernel_min/kernel_median: the kernel's name (ncu: with grid, block)


@dataclass(frozen=True, slots=True, kw_only=True)
class Samples:
    """The raw samples behind one summary line (`# samples ...`), in seconds (built by
    keywords, as Figure is)."""

    label: str
    shape: str | None
    op: str | None
    method: str
    method_text: str
    values: tuple[float, ...]
    line_no: int
    section: str | None
    framework: str | None
    summary_line: int | None  # line_no of the summary line these samples belong to


@dataclass(frozen=True, slots=True)
class Header:
    """A program header: `torch 2.15.0, threads 8`, `torch BLAS_INFO=mkl`, `burn ...`,
    `torch precision fp32`. What every program's header may say is a field; what only one
    program's says is in `facts`, in its own words (torch's `{'blas': 'mkl'}`, burn's
    `{'features': ('std', 'flex')}`), read back by that program (Program.fact_rows).

    Stored as `runs.headers_json` (asdict); rows written before `facts` carry `blas` and
    `features` flat instead. Only `precision` is read from the store (data/precision.py):
    everything else is parsed again from the run's stdout, so both shapes open."""

    kind: str  # '<program>' or '<program>_<what>': 'torch', 'torch_blas', 'burn_precision'
    version: str | None
    threads: int | None
    line_no: int
    # `torch precision tf32` / `burn precision unknown (why)`: fp32, tf32 or unknown; None: not
    # a precision line
    precision: str | None = None
    facts: dict[str, Any] = field(default_factory=dict)

    def __hash__(self) -> int:  # facts is a dict: hash what identifies the line
        return hash((self.kind, self.version, self.threads, self.line_no, self.precision))


@dataclass(slots=True)
class ParseResult:
    """Everything read from one log."""

    figures: list[Figure] = field(default_factory=list)
    samples: list[Samples] = field(default_factory=list)
    headers: list[Header] = field(default_factory=list)
    unknown: list[tuple[int, str]] = field(default_factory=list)  # (line_no, stripped line)
    line_count: int = 0  # every line, blank ones included
    info: list[tuple[int, str]] = field(default_factory=list)  # e.g. '... accuracy: wrote DIR'


@dataclass(frozen=True, slots=True)
class Context:
    """What the caller knows about the run: defaults under section and program headers."""

    framework: str | None = None
    threads: int | None = None
    cache: CacheState = CacheState.NONE
    process: int | None = None
    warmup: str | None = None


def mutable_twin(cls: type) -> type:
    """A plain slotted dataclass with `cls`'s exact slots.

    A frozen dataclass's __init__ assigns through object.__setattr__, ~2 µs for a Figure;
    building the twin and switching __class__ (legal: same slot layout) costs a sixth of that,
    and the parser makes up to two figures per line.
    """
    # fields with a default keep it (added fields the parser's fast path need not pass)
    twin_fields = [(f.name, f.type) if f.default is MISSING else (f.name, f.type,
                                                                    field(default=f.default))
                   for f in fields(cls)]
    kw_only = all(f.kw_only for f in fields(cls))  # a class built by keywords: its twin too
    return make_dataclass(f"_{cls.__name__}Twin", twin_fields, slots=True, kw_only=kw_only)
