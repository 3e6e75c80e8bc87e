"""The records every layer passes around: runs, builds, figures, samples, headers.

One home for the types the store writes, the dataset reads and the report shows, so no module
imports another layer's logic for its types. Statuses, roles and cache states are StrEnums: they
compare equal to, and are stored as, the same strings as before. `classify` is the one place
that decides whether a run failed and why. Figure and friends are frozen; `mutable_twin` serves
the parser's fast path.
"""

from __future__ import annotations

import hashlib
import json
import signal
from dataclasses import MISSING, dataclass, field, fields, make_dataclass, replace
from enum import StrEnum
from functools import cached_property
from pathlib import Path
from typing import Any

from orchestrator import axes

STDERR_TAIL = 2000  # bytes of stderr a failed run's reason may quote from
PANIC_TAIL = 64 * 1024  # bytes of stderr searched for a Rust panic (a backtrace follows it)


class Status(StrEnum):
    OK = "ok"
    FAILED = "failed"
    SKIPPED = "skipped"


class Role(StrEnum):
    MEASURE = "measure"  # the run the experiment asked for
    # a run that only fills burn's cache before a warm run; its definition says the state it
    # started in (cold: no cubecl cache), its cache record what it found and left
    PRIMING = "priming"
    # a measured run's twin under a profiler (Nsight Compute): its program's own figures are
    # kept but are never chapter figures; the profiler's are (`kernel_time`, profiler 'ncu')
    PROFILE = "profile"


class CacheState(StrEnum):
    """The on-disk autotune cache a process should find (or a log says it found).

    NONE is the one spelling of "no cache state": devices without an on-disk cache, and lines
    whose log does not say. The dataset's `cache` column writes it as '' (`column`).
    """

    COLD = "cold"
    WARM = "warm"
    NONE = "none"

    @property
    def column(self) -> str:
        """The dataset's spelling: 'cold', 'warm' or ''."""
        return "" if self == CacheState.NONE else self.value

    @classmethod
    def of(cls, value: str | None) -> CacheState:
        """From a stored or printed value; '' and NULL (a version-1 store) mean NONE."""
        return cls(value.lower()) if value else cls.NONE


class CacheAction(StrEnum):
    """What is done to the cache before a process starts."""

    DELETE = "delete"
    ENSURE = "ensure"
    NONE = "none"


class Params(dict):  # type: ignore[type-arg]
    """A run's sweep parameters (axis name -> value, orchestrator/axes.py), hashable: a
    RunDef is a dict key and a set member. Never changed once its run is made."""

    def __hash__(self) -> int:  # type: ignore[override]
        return hash(tuple(self.items()))


@dataclass(frozen=True, init=False)
class RunDef:
    """Everything that defines one measured process: its identity (the fields) and its sweep
    parameters (`params`, one per axis of orchestrator/axes.py; `run.threads` and the other
    built-in axes read as properties, and construct as keywords: `RunDef(..., threads=4)`).

    Its definition (a JSON of the fields and the axes) is hashed into the run id, which a resumed
    sweep and the committed stores rely on: names and values must stay as they are (enum
    members serialise as their strings, so the JSON is byte-identical to plain strings).
    """

    experiment: str
    program: str
    device: str
    mode: str
    reps: int
    build: str | None = None
    crate: str | None = None
    features: tuple[str, ...] = ()
    cache_action: CacheAction = CacheAction.NONE  # done before the process starts
    timed_runs: int | None = None
    processes: int = 1
    samples: bool = True
    env: tuple[tuple[str, str], ...] = ()
    timeout_s: float = field(default=600, compare=False)
    # seconds of the energy block (`--energy`); None: no block (0 in the experiments file)
    energy_s: float | None = None
    params: Params = field(default_factory=Params)

    def __init__(self, experiment: str, program: str, device: str, mode: str,
                 shape: tuple[int, int] | None = None, reps: int | None = None, *,
                 params: dict[str, Any] | None = None, **rest: Any) -> None:
        """The identity's fields and the axes, both by keyword (`replace` passes `params` and
        the changes); a name that is neither is a TypeError, as a dataclass's would be."""
        if reps is None or (shape is None and not params):
            raise TypeError("RunDef needs its 'shape' and 'reps'")
        chosen = Params(axes.defaults())
        chosen.update(params or {})
        if shape is not None:
            chosen["shape"] = shape
        identity = {f.name: f for f in fields(self)}
        values: dict[str, Any] = {"experiment": experiment, "program": program,
                                  "device": device, "mode": mode, "reps": reps}
        for name, value in rest.items():
            if name in chosen:
                chosen[name] = value
            elif name in identity and name != "params":
                values[name] = value
            else:
                raise TypeError(f"RunDef got an unexpected keyword argument {name!r}")
        for name, f in identity.items():
            if name not in values and name != "params":
                values[name] = f.default_factory() if f.default is MISSING else f.default
        # one spelling: a caller's plain 'cold' becomes CacheState.COLD (equal, same JSON)
        chosen["cache"] = CacheState(chosen["cache"])
        values["cache_action"] = CacheAction(values["cache_action"])
        for name, value in (*values.items(), ("params", chosen)):
            object.__setattr__(self, name, value)

    # the built-in axes, by their old field names
    shape = property(lambda self: self.params["shape"])
    threads = property(lambda self: self.params["threads"])
    cache = property(lambda self: self.params["cache"])  # the state the process should find
    warmup = property(lambda self: self.params["warmup"])
    process = property(lambda self: self.params["process"])
    repeat = property(lambda self: self.params["repeat"])
    precision = property(lambda self: self.params["precision"])
    variant = property(lambda self: self.params["variant"])
    profile = property(lambda self: self.params["profile"])

    def definition(self) -> dict[str, Any]:
        """The fields and the axes as one flat dict (as stored: `runs.definition_json`). Every
        value is a string, a number or a tuple of them, so this equals `dataclasses.asdict`
        without its deep copy (a sixth of the cost, paid per run)."""
        found = {f.name: getattr(self, f.name) for f in fields(self) if f.name != "params"}
        return {**found, **axes.stored(self.params)}

    @classmethod
    def from_definition(cls, definition: dict[str, Any]) -> RunDef:
        """The run a stored `definition()` describes (JSON turned the tuples into lists)."""
        fixed = dict(definition)
        fixed["features"] = tuple(fixed["features"])
        fixed["env"] = tuple(tuple(pair) for pair in fixed["env"])
        fixed["cache_action"] = CacheAction(fixed.get("cache_action", "none"))
        for axis in axes.axes():
            if axis.name in fixed:
                fixed[axis.name] = axis.load(fixed[axis.name])
        fixed["shape"] = tuple(fixed["shape"])  # required: a definition without one is damage
        return cls(**fixed)

    @property
    def series_id(self) -> str:
        """The run id of the first process of this run's series (a profile run's: its
        measured run's): what a precision target stops (run/stopping.py). A warm series'
        first process is the one that ensures the cache (its later ones find it warm); a
        precision target has no cold series, whose later processes would read as warm."""
        first = CacheAction.ENSURE if self.cache == CacheState.WARM else self.cache_action
        return replace(self, process=1, profile=None, cache_action=first).run_id

    @cached_property  # asked for several times per run; the fields are frozen
    def run_id(self) -> str:
        definition = self.definition()
        definition.pop("timeout_s")  # a longer timeout measures the same thing
        # axes and fields added later, at their defaults: old run ids stay as they were
        for name in axes.unhashed(self.params):
            definition.pop(name, None)
        for name in _UNHASHED_DEFAULTS:
            if definition[name] is None:
                definition.pop(name)
        blob = json.dumps(definition, sort_keys=True, separators=(",", ":"))
        return hashlib.sha256(blob.encode()).hexdigest()[:16]

    @property
    def shape_text(self) -> str:
        return f"{self.shape[0]}x{self.shape[1]}"

    @property
    def profile_of(self) -> str | None:
        """A profile run's measured run (the same definition without the profiler)."""
        return replace(self, profile=None).run_id if self.profile else None

    def describe(self) -> str:
        """One human line: what this run is ('burn cuda' for a build, 'torch' without), then
        its axes' parts in the registry's order."""
        what = f"{self.program} {self.build}" if self.build else self.program
        head = f"{self.experiment}: {what} {self.device} {self.mode} {self.shape_text}"
        return ", ".join([head, *axes.describe(self.params, self)])


# RunDef fields left out of the run id while None (their default), newest last (the axes say
# their own: orchestrator/axes.py `hashed_default`)
_UNHASHED_DEFAULTS = ("energy_s",)


@dataclass
class Outcome:
    """What one process did, as the process module saw it."""

    returncode: int | None
    timed_out: bool
    wall_s: float
    stdout: bytes
    stderr: bytes
    truncated_at: int | None = None  # the byte count stdout was cut at, when it was
    # stderr cut at this byte count: its tail (the reason's source) is lost, the figures are not
    stderr_truncated_at: int | None = None
    over_cap: bool = False  # killed while running: its output had passed the cap
    # processes the run left outside its group (a daemon), ended after it: 'pid N (command)'
    left_running: tuple[str, ...] = ()


@dataclass
class RunRecord:
    """Everything kept about one run, measured or not."""

    run: RunDef
    role: Role = Role.MEASURE
    status: Status = Status.OK
    reason: str = ""
    started_at: float = 0.0
    ended_at: float = 0.0
    wall_s: float | None = None
    returncode: int | None = None
    load_before: dict[str, float] | None = None
    load_after: dict[str, float] | None = None
    gate: dict[str, Any] | None = None
    argv: list[str] = field(default_factory=list)
    env: dict[str, str] = field(default_factory=dict)
    cwd: str = ""
    cache: dict[str, Any] | None = None  # what was done to burn's cache folder, and found
    # the machine around the run (run/gpu_state, run/cpu_state): gpu_before/_after/_delta,
    # cpu_before/_after; None: no process ran
    state: dict[str, Any] | None = None
    stdout: bytes = b""
    stderr: bytes = b""
    artifacts: dict[str, bytes] = field(default_factory=dict)
    expect_failure: bool = False
    outcome: Outcome | None = field(default=None, repr=False)  # None: no process ran
    # what the orchestrator would not take from the run, and why (arrays over their cap): a
    # failure that classify reports
    refused: str = ""

    @property
    def run_id(self) -> str:
        return self.run.run_id + ("-prime" if self.role == Role.PRIMING else "")

    def stderr_tail(self) -> str:
        return self.stderr[-STDERR_TAIL:].decode("utf-8", "replace").strip()


def classify(rec: RunRecord, parsed: ParseResult | None = None) -> tuple[Status, str]:
    """Whether a run failed, and why: the one place that decides.

    A record without a process (skipped, failed build, unsafe cache, no scratch folder) keeps
    what was decided when it was made. Otherwise, in this order: the process's own faults
    (timeout, not started, signal, exit status, output cut, nothing printed, a partial last
    line), then what it produced: an accuracy run must dump its arrays, any other run must
    print a figure (checked once `parsed` is given). The reason ends with stderr's last line.
    """
    outcome = rec.outcome
    if outcome is None:
        return rec.status, rec.reason
    failure = _process_failure(outcome, rec.run.timeout_s) or _product_failure(rec, parsed)
    if failure is None:
        return Status.OK, ""
    why = stderr_reason(rec.stderr)
    return Status.FAILED, failure + (f": {why}" if why else "")


PANIC = "panicked at "
WHAT = "what():"  # std::terminate's line for an uncaught C++ exception


def stderr_reason(stderr: bytes) -> str:
    """The line of stderr that says why: a Rust panic's own line and message (`thread 'main'
    panicked at src/x.rs:3:5:` then the message; older Rust: one line; the first panic, the
    cause of any that follow), not the backtrace hint or the backtrace printed after it; a C++
    exception's `what():` (torch's c10::Error, before its frames); otherwise the last line."""
    tail = stderr[-PANIC_TAIL:].decode("utf-8", "replace")
    lines = [line.strip() for line in tail.splitlines() if line.strip()]
    for at, line in enumerate(lines):
        if line.startswith("thread '") and PANIC in line:
            follows = lines[at + 1] if at + 1 < len(lines) else ""
            if line.endswith(":") and follows and not follows.startswith("note:"):
                return f"{line} {follows}"
            return line
    for line in lines:
        if line.startswith(WHAT):
            return line
    last = stderr[-STDERR_TAIL:].decode("utf-8", "replace").strip()
    return last.splitlines()[-1] if last else ""


def _process_failure(outcome: Outcome, timeout_s: float) -> str | None:
    if outcome.over_cap:  # before the signal: the SIGKILL was ours, for this reason
        return (f"output cut at {outcome.truncated_at or outcome.stderr_truncated_at} bytes "
                "(the rest is lost): still printing at several times that, process group "
                "killed")
    if outcome.timed_out:
        return f"timed out after {timeout_s:g} s (process group killed)"
    if outcome.returncode is None:
        return "did not start"
    if outcome.returncode < 0:
        try:
            name = signal.Signals(-outcome.returncode).name
        except ValueError:
            name = str(-outcome.returncode)
        return f"killed by signal {name}"
    if outcome.returncode != 0:
        return f"exited with status {outcome.returncode}"
    # stdout only: the figures after the cut are lost; a cut stderr loses none (the runner
    # notes it in the record's state)
    if outcome.truncated_at is not None:
        return f"output cut at {outcome.truncated_at} bytes (the rest is lost)"
    if not outcome.stdout.strip():
        return "printed nothing"
    if not outcome.stdout.endswith(b"\n"):
        return "output ends in a partial line"
    return None


def _product_failure(rec: RunRecord, parsed: ParseResult | None) -> str | None:
    if rec.refused:
        return rec.refused
    if rec.run.mode == "accuracy":
        return None if rec.artifacts else "wrote no .npy arrays"
    if parsed is not None and not parsed.figures:
        return f"printed no figures ({len(parsed.unknown)} unknown lines)"
    return None


@dataclass(frozen=True)
class BuildResult:
    """One cargo build of a sweep: found up to date, built, or failed with cargo's error."""

    name: str
    key: str
    status: Status  # ok | failed
    binary: Path | None
    seconds: float
    fresh: bool  # True: the stamp matched, cargo did not run
    error: str = ""
    log: str = ""
    expect_failure: bool = False

    @property
    def outcome(self) -> str:
        """'up to date', 'built in 4.2 s', 'failed' or 'failed (expected)', for people."""
        if self.status == Status.OK:
            return "up to date" if self.fresh else f"built in {self.seconds:.1f} s"
        return "failed (expected)" if self.expect_failure else "failed"


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
