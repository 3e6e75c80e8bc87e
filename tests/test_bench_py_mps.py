"""The PyTorch program's MPS path, run here (no Mac) against a stand-in device layer.

Only the device layer is replaced: `torch.backends.mps.is_built/is_available`,
`torch.accelerator.is_available/current_accelerator/synchronize`, `torch.mps.synchronize` and
the timing events (`torch.Event(device='mps')`, `torch.mps.Event`) become fakes, and the tensors
land on the CPU (the real `resolve_device` picks MPS, then its `torch.device` is swapped for the
CPU's), so `bench_py/exec_gpu.py` runs its own MPS branches with real matmuls.

Every call that matters goes, in order, into one log with each printed line: random fills,
matmuls, host clock reads (the program's `time.perf_counter_ns`, the Timer's
`timeit.default_timer`), synchronizes, event creation/record/synchronize/elapsed_time, and
read-backs. The tests check the printed lines against docs/LINES.md (the forms an MPS run can
print are written out here) and, method by method, the exact order of the chapter's loops: a
clock read that must include the device's work comes after a synchronize, device events are
recorded around the matmul and synchronized before `elapsed_time`, and `benchmark.Timer`
synchronizes around its clock reads. The fake events time on a fake device clock that advances
`MM_DEVICE_NS` per matmul, so the printed `mps.Event time` is an exact, known figure.

Two torch API generations: `torch.accelerator` + `torch.Event` (torch >= 2.6), and older torch
without them (`torch.mps.synchronize`, `torch.mps.Event`, a benchmark Timer that does not sync
MPS by itself).
"""

from __future__ import annotations

import dataclasses
import importlib.util
import math
import re
import subprocess
import sys
import time
import timeit
from collections.abc import Callable, Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

torch = pytest.importorskip("torch", reason="the MPS path runs real PyTorch matmuls on the CPU")
np = pytest.importorskip("numpy")
import torch.utils.benchmark.utils.timer as bench_timer  # noqa: E402  (needs torch, above)

pytestmark = pytest.mark.torch

ROOT = Path(__file__).resolve().parents[1]
PROGRAM = ROOT / "bench_py" / "exec_gpu.py"

GENERATIONS = ["accelerator", "legacy"]  # torch.accelerator + torch.Event | torch.mps only
REPS = 3
SHAPE = "64x64"
MM_DEVICE_NS = 250_000  # one matmul on the fake device clock: mps.Event time reads 250.000µs

# Log entries
CLOCK, RAND, MM, SYNC, ITEM, TO_HOST = "clock", "rand", "mm", "sync", "item", "to host"
EVENT, RECORD, EVENT_SYNC, ELAPSED = "event", "record", "event sync", "elapsed"
EMIT = "emit: "


# --------------------------------------------------------------------------------------------
# The MPS forms of the line contract (docs/LINES.md)
# --------------------------------------------------------------------------------------------

DUR = r"[0-9]+\.[0-9]{3}(?:s|ms|\u00b5s|ns)"
SHAPE_RE = r"(?P<shape>[0-9]+x[0-9]+)"
METHOD = r"(?P<method>no sync|with sync|mps\.Event time|\+ sum\(\)\.item\(\)|benchmark\.Timer)"
FLOAT = r"[0-9.]+(?:e[-+]?[0-9]+)?"
HEADERS = ("torch_header", "blas_header", "precision_header")

LINE_PATTERNS: dict[str, re.Pattern[str]] = {
    "torch_header": re.compile(r"torch (?P<version>[0-9][^\s,]*), threads (?P<threads>[0-9]+)"),
    "blas_header": re.compile(r"torch BLAS_INFO=(?P<blas>\S+)"),
    # A header line another change adds; tolerated where it appears, never required.
    "precision_header": re.compile(r"torch precision (?P<precision>fp32|tf32)(?:[ ,].*)?"),
    "device_init": re.compile(rf"(?P<label>mps): device init (?P<dur>{DUR})"),
    "first_call_async": re.compile(
        rf"(?P<label>mps) {SHAPE_RE} matmul first call: returned (?P<ret>{DUR}), "
        rf"after sync (?P<sync>{DUR})"
    ),
    "summary": re.compile(
        rf"(?P<label>mps) {SHAPE_RE} matmul {METHOD}, (?P<runs>[0-9]+) runs: "
        rf"min (?P<min>{DUR}) median (?P<median>{DUR})"
    ),
    "samples": re.compile(
        rf"# samples (?P<label>mps) {SHAPE_RE} matmul {METHOD}: (?P<values>{FLOAT}(?: {FLOAT})*)"
    ),
    "accuracy": re.compile(rf"(?P<label>mps) {SHAPE_RE} matmul accuracy: wrote (?P<dir>.+)"),
}
MPS_METHODS = ["no sync", "with sync", "mps.Event time", "+ sum().item()", "benchmark.Timer"]


def classify(line: str) -> tuple[str, re.Match[str]]:
    """The contract line kind of `line` (MPS forms only); fails the test if it fits none."""
    for kind, pattern in LINE_PATTERNS.items():
        match = pattern.fullmatch(line)
        if match is not None:
            return kind, match
    pytest.fail(f"line outside docs/LINES.md's MPS forms: {line!r}")


def split_headers(lines: list[str]) -> tuple[list[str], list[str]]:
    """The header lines (torch, BLAS, maybe precision) and the lines after them."""
    count = 0
    while count < len(lines) and classify(lines[count])[0] in HEADERS:
        count += 1
    return lines[:count], lines[count:]


# --------------------------------------------------------------------------------------------
# The stand-in device layer
# --------------------------------------------------------------------------------------------


class FakeEvent:
    """A timing event on the fake device: it reads the fake device clock when recorded."""

    def __init__(self, mps: FakeMps, enable_timing: bool) -> None:
        if not enable_timing:
            raise ValueError("elapsed_time needs enable_timing=True")
        self.mps = mps
        self.recorded_ns: int | None = None
        self.done = False
        mps.log.append(EVENT)
        mps.events.append(self)

    def record(self, stream: Any = None) -> None:
        self.mps.log.append(RECORD)
        self.recorded_ns = self.mps.device_ns
        self.done = False

    def synchronize(self) -> None:
        self.mps.log.append(EVENT_SYNC)
        self.done = self.recorded_ns is not None

    def elapsed_time(self, end: FakeEvent) -> float:
        """Milliseconds, like torch; refuses an end event nobody waited for, as a device does."""
        self.mps.log.append(ELAPSED)
        if self.recorded_ns is None or end.recorded_ns is None:
            raise RuntimeError("elapsed_time: both events must be recorded first")
        if not end.done:
            raise RuntimeError("elapsed_time: the end event has not completed (synchronize it)")
        return (end.recorded_ns - self.recorded_ns) / 1e6


class FakeMps:
    """Records, in order, what the program asks of the device and of the clocks."""

    def __init__(self) -> None:
        self.log: list[str] = []
        self.device_ns = 0
        self.events: list[FakeEvent] = []
        self.sync_apis: list[str] = []
        self.event_apis: list[str] = []
        self.resolved: list[Any] = []  # the Device the real resolve_device returned
        self.fail_rand: Exception | None = None

    def synchronizer(self, api: str) -> Callable[..., None]:
        def synchronize(device: Any = None) -> None:
            self.log.append(SYNC)
            self.sync_apis.append(api)
            for event in self.events:  # a device-wide wait completes every recorded event
                event.done = event.recorded_ns is not None

        return synchronize

    def event_maker(self, api: str, needs_device: bool) -> Callable[..., FakeEvent]:
        def make(device: Any = None, *, enable_timing: bool = False, **_: Any) -> FakeEvent:
            if needs_device and str(device) != "mps":
                raise AssertionError(f"{api} made for device {device!r}, not mps")
            self.event_apis.append(api)
            return FakeEvent(self, enable_timing)

        return make

    def clock_ns(self) -> int:
        self.log.append(CLOCK)
        return time.perf_counter_ns()

    def clock_s(self) -> float:
        self.log.append(CLOCK)
        return time.perf_counter()


class ClockShim:
    """The program's `time` module: `perf_counter_ns` is logged, the rest is the real one."""

    def __init__(self, fake: FakeMps) -> None:
        self.perf_counter_ns = fake.clock_ns

    def __getattr__(self, name: str) -> Any:
        return getattr(time, name)


@dataclasses.dataclass
class Program:
    """The program's modules the stand-in reaches into, and its entry point."""

    facts: ModuleType  # resolve_device
    fmt: ModuleType  # emit, the duration format
    bench: ModuleType  # the modes' `time`
    compiled: ModuleType  # the first call's `time` (every execution mode's first call)
    main: Callable[[list[str]], int]


def load_program(monkeypatch: pytest.MonkeyPatch) -> Program:
    spec = importlib.util.spec_from_file_location("exec_gpu_mps_under_test", PROGRAM)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    monkeypatch.setitem(sys.modules, spec.name, module)
    spec.loader.exec_module(module)  # puts bench_py/ on sys.path: the package is the program's
    from bench_core import bench, compiled, facts
    from bench_core import format as fmt

    return Program(facts, fmt, bench, compiled, module.main)


def _set_default(monkeypatch: pytest.MonkeyPatch, function: Any, name: str, value: Any) -> None:
    """Give `function`'s parameter `name` another default (as if defined in older torch)."""
    code = function.__code__
    names = code.co_varnames[: code.co_argcount]
    defaults = list(function.__defaults__)
    defaults[names.index(name) - (len(names) - len(defaults))] = value
    monkeypatch.setattr(function, "__defaults__", tuple(defaults))


def install(
    monkeypatch: pytest.MonkeyPatch,
    program: Program,
    generation: str,
    *,
    built: bool = True,
    available: bool = True,
) -> FakeMps:
    """Replace torch's MPS device layer (one API generation) and log the program's calls."""
    fake = FakeMps()
    present = built and available
    mps_backend = torch.backends.mps
    monkeypatch.setattr(mps_backend, "is_built", lambda: built)
    monkeypatch.setattr(mps_backend, "is_available", lambda: present)
    monkeypatch.setattr(torch.mps, "synchronize", fake.synchronizer("torch.mps.synchronize"))
    monkeypatch.setattr(torch.mps, "Event", fake.event_maker("torch.mps.Event", False))
    clock_s = fake.clock_s  # one object: the program compares timers by identity
    monkeypatch.setattr(timeit, "default_timer", clock_s)
    if generation == "accelerator":
        acc = torch.accelerator
        monkeypatch.setattr(acc, "is_available", lambda: present)
        monkeypatch.setattr(
            acc,
            "current_accelerator",
            lambda check_available=False: torch.device("mps") if present else None,
        )
        monkeypatch.setattr(acc, "synchronize", fake.synchronizer("torch.accelerator.synchronize"))
        monkeypatch.setattr(torch, "Event", fake.event_maker("torch.Event", True))
    else:  # torch before 2.6: no torch.accelerator, no torch.Event
        monkeypatch.delattr(torch, "accelerator")
        monkeypatch.delattr(torch, "Event")
        # Such a torch's benchmark Timer synced only CUDA: elsewhere its timer, and the
        # Timer's default, was timeit.default_timer itself.
        monkeypatch.setattr(bench_timer, "timer", clock_s)
        _set_default(monkeypatch, bench_timer.Timer.__init__, "timer", clock_s)

    real_rand = torch.rand
    real_uniform = torch.Tensor.uniform_
    real_matmul = torch.Tensor.__matmul__
    real_item = torch.Tensor.item
    real_cpu = torch.Tensor.cpu

    def rand(*args: Any, **kwargs: Any) -> Any:
        fake.log.append(RAND)
        if fake.fail_rand is not None:
            raise fake.fail_rand
        return real_rand(*args, **kwargs)

    def uniform(self: Any, *args: Any, **kwargs: Any) -> Any:
        # the inputs' random fill: uniform_ in [-1, 1), burn's distribution
        fake.log.append(RAND)
        if fake.fail_rand is not None:
            raise fake.fail_rand
        return real_uniform(self, *args, **kwargs)

    def matmul(self: Any, other: Any) -> Any:
        fake.log.append(MM)
        fake.device_ns += MM_DEVICE_NS
        return real_matmul(self, other)

    def item(self: Any) -> Any:
        fake.log.append(ITEM)
        return real_item(self)

    def cpu(self: Any, *args: Any, **kwargs: Any) -> Any:
        fake.log.append(TO_HOST)
        return real_cpu(self, *args, **kwargs)

    monkeypatch.setattr(torch, "rand", rand)
    monkeypatch.setattr(torch.Tensor, "uniform_", uniform)
    monkeypatch.setattr(torch.Tensor, "__matmul__", matmul)
    monkeypatch.setattr(torch.Tensor, "item", item)
    monkeypatch.setattr(torch.Tensor, "cpu", cpu)

    real_resolve = program.facts.resolve_device

    def resolve_on_cpu(requested: str) -> Any:
        dev = real_resolve(requested)  # the program's own choice and synchronizer
        fake.resolved.append(dev)
        return dataclasses.replace(dev, device=torch.device("cpu"))  # tensors land on the CPU

    real_emit = program.fmt.emit

    def emit(line: str) -> None:
        fake.log.append(EMIT + line)
        real_emit(line)

    monkeypatch.setattr(program.facts, "resolve_device", resolve_on_cpu)
    monkeypatch.setattr(program.fmt, "emit", emit)
    monkeypatch.setattr(program.bench, "time", ClockShim(fake))
    monkeypatch.setattr(program.compiled, "time", ClockShim(fake))
    return fake


@pytest.fixture(autouse=True)
def _keep_torch_threads() -> Iterator[None]:
    """The program calls torch.set_num_threads in this process; give the count back."""
    threads = torch.get_num_threads()
    yield
    torch.set_num_threads(threads)


@dataclasses.dataclass
class Run:
    code: int
    lines: list[str]
    stderr: str
    fake: FakeMps
    program: Program
    generation: str

    def segments(self) -> list[tuple[str, list[str]]]:
        """Each printed line with the calls logged between the previous line and it."""
        out: list[tuple[str, list[str]]] = []
        ops: list[str] = []
        for entry in self.fake.log:
            if entry.startswith(EMIT):
                out.append((entry[len(EMIT) :], ops))
                ops = []
            else:
                ops.append(entry)
        assert ops == [], f"calls after the last printed line: {ops}"
        return out


def run_main(
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    generation: str,
    args: list[str],
    **device: bool,
) -> Run:
    program = load_program(monkeypatch)
    fake = install(monkeypatch, program, generation, **device)
    capsys.readouterr()
    code = program.main(args)
    out, err = capsys.readouterr()
    return Run(code, out.splitlines(), err, fake, program, generation)


MM_ARGS = ["--device", "mps", "--mode", "mm", "--shape", SHAPE, "--reps", str(REPS), "--samples"]


@pytest.fixture(params=GENERATIONS)
def mm_run(
    request: pytest.FixtureRequest,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> Run:
    run = run_main(monkeypatch, capsys, request.param, MM_ARGS)
    assert run.code == 0, run.stderr
    assert "Traceback" not in run.stderr
    emitted = [entry[len(EMIT) :] for entry in run.fake.log if entry.startswith(EMIT)]
    assert run.lines == emitted, "a stdout line bypassed emit(): the call log would miss it"
    return run


# --------------------------------------------------------------------------------------------
# mm mode: the lines
# --------------------------------------------------------------------------------------------


def test_mm_every_line_follows_the_contract(mm_run: Run) -> None:
    headers, body = split_headers(mm_run.lines)
    assert [classify(line)[0] for line in headers][:2] == ["torch_header", "blas_header"]
    kinds = [classify(line) for line in body]
    expected = ["device_init", "first_call_async"] + ["summary", "samples"] * len(MPS_METHODS)
    assert [kind for kind, _ in kinds] == expected, "\n".join(mm_run.lines)
    assert all(match["label"] == "mps" for _, match in kinds)
    assert all(match["shape"] == SHAPE for _, match in kinds[1:])

    pairs = kinds[2:]
    for index, method in enumerate(MPS_METHODS):
        (_, summary), (_, samples) = pairs[2 * index], pairs[2 * index + 1]
        assert (summary["method"], samples["method"]) == (method, method)
        assert int(summary["runs"]) == REPS
        values = [float(v) for v in samples["values"].split()]
        assert len(values) == REPS and all(v >= 0 and math.isfinite(v) for v in values)
        # The summary is exactly the formatted min and median of the samples it precedes.
        fmt = mm_run.program.fmt
        assert summary["min"] == fmt.format_duration(min(values))
        assert summary["median"] == fmt.format_duration(fmt.median(values))


def _samples(run: Run, method: str) -> list[float]:
    prefix = f"# samples mps {SHAPE} matmul {method}: "
    (line,) = [line for line in run.lines if line.startswith(prefix)]
    return [float(v) for v in line[len(prefix) :].split()]


def test_mps_event_time_reads_the_device_clock_in_seconds(mm_run: Run) -> None:
    # Each event pair brackets one matmul, 0.25 ms on the fake device clock: the program must
    # turn elapsed_time's milliseconds into seconds.
    assert _samples(mm_run, "mps.Event time") == [MM_DEVICE_NS / 1e9] * REPS
    summary = f"mps {SHAPE} matmul mps.Event time, {REPS} runs: min 250.000µs median 250.000µs"
    assert summary in mm_run.lines


def test_with_sync_includes_the_no_sync_time(mm_run: Run) -> None:
    # One loop, two clock reads from one start: the synced read comes later, run by run.
    nosync, synced = _samples(mm_run, "no sync"), _samples(mm_run, "with sync")
    assert all(s >= n for n, s in zip(nosync, synced, strict=True))


def test_the_generation_s_own_apis_are_used(mm_run: Run) -> None:
    fake = mm_run.fake
    (dev,) = fake.resolved
    assert (dev.label, dev.device, dev.is_accelerator) == ("mps", torch.device("mps"), True)
    if mm_run.generation == "accelerator":
        assert set(fake.sync_apis) == {"torch.accelerator.synchronize"}
        assert set(fake.event_apis) == {"torch.Event"}
        assert "note:" not in mm_run.stderr
    else:
        assert set(fake.sync_apis) == {"torch.mps.synchronize"}
        assert set(fake.event_apis) == {"torch.mps.Event"}
        # The Timer of such a torch does not sync MPS: the program says it passes one that does.
        assert "benchmark.Timer does not sync mps" in mm_run.stderr


# --------------------------------------------------------------------------------------------
# mm mode: where each timed region synchronizes (the chapter's rule)
# --------------------------------------------------------------------------------------------

DEVICE_INIT = [CLOCK, RAND, RAND, SYNC, CLOCK]  # the clock stops after the first synchronize
FIRST_CALL = [CLOCK, MM, CLOCK, SYNC, CLOCK]  # returned, then after sync
SYNC_LOOP = [CLOCK, MM, CLOCK, SYNC, CLOCK] * REPS  # no sync read, then the with-sync read
# _event_factory proves one event cycle works, then each run brackets one matmul and waits for
# the end event before reading the time.
EVENT_PROBE = [EVENT, EVENT, RECORD, RECORD, EVENT_SYNC, ELAPSED]
EVENT_LOOP = [EVENT, EVENT, RECORD, MM, RECORD, EVENT_SYNC, ELAPSED] * REPS
READBACK_LOOP = [CLOCK, MM, ITEM, CLOCK] * REPS  # .item() is the wait
# timeit(1): two untimed warm-up calls between two synced clock reads, then the timed one.
TIMER_WARMUP = [SYNC, CLOCK, MM, MM, SYNC, CLOCK]
TIMER_TIMED = [SYNC, CLOCK, MM, SYNC, CLOCK]
TIMER_LOOP = [*TIMER_WARMUP, *TIMER_TIMED] * REPS

EXPECTED_CALLS = {
    "device_init": DEVICE_INIT,
    "first_call_async": FIRST_CALL,
    "no sync": SYNC_LOOP,
    "with sync": [],  # the same loop as no sync: printed right after it
    "mps.Event time": EVENT_PROBE + EVENT_LOOP,
    "+ sum().item()": READBACK_LOOP,
    "benchmark.Timer": TIMER_LOOP,
}


def test_every_timed_region_synchronizes_where_the_chapter_says(mm_run: Run) -> None:
    for line, ops in mm_run.segments():
        kind, match = classify(line)
        if kind in HEADERS or kind == "samples":
            assert ops == [], f"{line!r}: device work before a header or samples line: {ops}"
            continue
        key = match["method"] if kind == "summary" else kind
        assert ops == EXPECTED_CALLS[key], f"{line!r}: calls {ops}"


def test_first_call_after_sync_includes_the_return_time(mm_run: Run) -> None:
    # Both figures run from one clock read before the call: after sync >= returned.
    first = next(line for line in mm_run.lines if "first call" in line)
    match = LINE_PATTERNS["first_call_async"].fullmatch(first)
    assert match is not None
    assert _to_ns(match["sync"]) >= _to_ns(match["ret"])


def _to_ns(text: str) -> float:
    units = {"s": 1e9, "ms": 1e6, "µs": 1e3, "ns": 1.0}
    number, unit = re.fullmatch(r"([0-9.]+)(s|ms|µs|ns)", text).groups()  # type: ignore[union-attr]
    return float(number) * units[unit]


@pytest.mark.parametrize("generation", GENERATIONS)
def test_auto_picks_mps_when_it_is_the_accelerator(
    generation: str, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    args = ["--device", "auto", "--shape", "8x8", "--reps", "1"]
    run = run_main(monkeypatch, capsys, generation, args)
    assert run.code == 0, run.stderr
    _, body = split_headers(run.lines)
    assert [classify(line)[1]["label"] for line in body] == ["mps"] * len(body)
    assert any("mps.Event time" in line for line in body)


# --------------------------------------------------------------------------------------------
# The header, accuracy mode, and a device that is not there
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize("generation", GENERATIONS)
def test_header_on_mps(
    generation: str, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    args = ["--device", "mps", "--shape", "8x8", "--reps", "1", "--threads", "2"]
    run = run_main(monkeypatch, capsys, generation, args)
    assert run.code == 0, run.stderr
    headers, _ = split_headers(run.lines)
    assert headers[0] == f"torch {torch.__version__}, threads 2"
    found = re.search(r"BLAS_INFO=([^,\s]+)", torch.__config__.show())
    assert headers[1] == f"torch BLAS_INFO={found.group(1) if found else 'unknown'}"
    segments = run.segments()
    assert all(ops == [] for _, ops in segments[: len(headers)]), "headers come before the device"


@pytest.mark.parametrize("generation", GENERATIONS)
def test_a_device_failure_at_init_keeps_the_header(
    generation: str, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    program = load_program(monkeypatch)
    fake = install(monkeypatch, program, generation)
    fake.fail_rand = RuntimeError("MPS backend out of memory (MPS allocated: 0 bytes)")
    capsys.readouterr()
    code = program.main(MM_ARGS)
    out, err = capsys.readouterr()
    assert code == 1
    headers, body = split_headers(out.splitlines())
    assert len(headers) >= 2 and body == []
    assert err.splitlines() == [f"error: RuntimeError: {fake.fail_rand}"]


@pytest.mark.parametrize("generation", GENERATIONS)
def test_accuracy_mode_on_mps(
    generation: str,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    out = tmp_path / "acc"
    args = ["--device", "mps", "--mode", "accuracy", "--shape", "16x8", "--out", str(out)]
    run = run_main(monkeypatch, capsys, generation, args)
    assert run.code == 0, run.stderr
    headers, body = split_headers(run.lines)
    assert len(headers) >= 2 and len(body) == 1
    kind, match = classify(body[0])
    assert (kind, match["label"], match["shape"]) == ("accuracy", "mps", "16x8")
    assert Path(match["dir"]) == out.resolve()
    # One product on the device, then .cpu() brings it back (that is the wait).
    assert run.segments()[-1][1] == [MM, TO_HOST]

    a, b, c = (np.load(out / f"{name}.npy") for name in ("a", "b", "c"))
    assert a.shape == (16, 8) and b.shape == (8, 16) and c.shape == (16, 16)
    assert a.dtype == b.dtype == c.dtype == np.float32
    k = np.arange(16 * 8, dtype=np.float32)
    assert np.abs(a - np.sin(k).reshape(16, 8)).max() < 1e-6
    assert np.abs(b - np.cos(k).reshape(8, 16)).max() < 1e-6
    ref = a.astype(np.float64) @ b.astype(np.float64)
    assert float(np.abs(c - ref).max()) < 1e-5


@pytest.mark.parametrize("generation", GENERATIONS)
@pytest.mark.parametrize(
    ("built", "why"),
    [
        (True, "torch.backends.mps.is_available() is False (needs Apple silicon, macOS)"),
        (False, "was built without MPS"),
    ],
    ids=["not-available", "not-built"],
)
def test_mps_missing_is_one_error_line_exit_1(
    generation: str,
    built: bool,
    why: str,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    run = run_main(monkeypatch, capsys, generation, MM_ARGS, built=built, available=False)
    assert run.code == 1
    assert run.lines == []
    errors = run.stderr.splitlines()
    assert len(errors) == 1 and errors[0].startswith("error: --device mps: "), run.stderr
    assert why in errors[0]
    assert run.fake.log == []  # nothing touched the device


def test_mps_on_this_torch_for_real_is_one_error_line() -> None:
    """No stand-in: the installed torch, in a subprocess, where MPS does not exist."""
    if torch.backends.mps.is_available():
        pytest.skip("this machine has MPS")
    proc = subprocess.run(
        [sys.executable, str(PROGRAM), "--device", "mps", "--reps", "1"],
        capture_output=True,
        text=True,
        encoding="utf-8",
        timeout=300,
        cwd=ROOT,
    )
    assert proc.returncode == 1, proc.stderr
    assert proc.stdout == ""
    errors = proc.stderr.splitlines()
    assert len(errors) == 1 and errors[0].startswith("error: --device mps: "), proc.stderr
