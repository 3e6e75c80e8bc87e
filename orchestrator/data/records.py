"""What the parser yields: figures, samples, program headers, and the caller's context.

Kept apart from the parser itself so the dataset, the store and the report can name these types
without the line grammar. The classes are frozen; `mutable_twin` serves the parser's fast path.
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields, make_dataclass


@dataclass(frozen=True, slots=True)
class Figure:
    """One figure of one line: a future dataset row."""

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
    cache: str | None  # 'cold' | 'warm'
    process: int | None
    warmup: str | None  # 'dropped' | 'kept'
    iteration: int | None  # the warm-up puzzle's timed run index
    section: str | None  # text of the last '### ' header
    line_no: int  # 1-based


@dataclass(frozen=True, slots=True)
class Samples:
    """The raw samples behind one summary line (`# samples ...`), in seconds."""

    label: str
    shape: str | None
    op: str | None
    method: str
    method_text: str
    values: tuple[float, ...]
    line_no: int
    section: str | None
    framework: str | None


@dataclass(frozen=True, slots=True)
class Header:
    """A program header: `torch 2.15.0, threads 8`, `torch BLAS_INFO=mkl`, `burn ...`."""

    kind: str  # 'torch' | 'burn' | 'torch_blas'
    version: str | None
    threads: int | None
    features: tuple[str, ...]
    blas: str | None
    line_no: int


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
    cache: str | None = None
    process: int | None = None
    warmup: str | None = None


def mutable_twin(cls: type) -> type:
    """A plain slotted dataclass with `cls`'s exact slots.

    A frozen dataclass's __init__ assigns through object.__setattr__, ~2 µs for a Figure;
    building the twin and switching __class__ (legal: same slot layout) costs a sixth of that,
    and the parser makes up to two figures per line.
    """
    twin_fields = [(f.name, f.type) for f in fields(cls)]
    return make_dataclass(f"_{cls.__name__}Twin", twin_fields, slots=True)
