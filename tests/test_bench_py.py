"""Tests of the PyTorch benchmark program `bench_py/exec_gpu.py`.

The program is run for real, on the CPU, in a subprocess, and every line it prints is checked
against the printed-line contract of `docs/LINES.md` (the regexes are written out here, apart from
the orchestrator's parser). Its duration formatter is checked against `tests/data/durations.tsv`
(nanoseconds, what Rust's `{:.3?}` prints) and against rows produced by rustc 1.95.
"""

from __future__ import annotations

import importlib.util
import math
import re
import subprocess
import sys
from pathlib import Path
from types import ModuleType, SimpleNamespace

import pytest

ROOT = Path(__file__).resolve().parents[1]
PROGRAM = ROOT / "bench_py" / "exec_gpu.py"
DURATIONS_TSV = ROOT / "tests" / "data" / "durations.tsv"


def _load_program() -> ModuleType:
    spec = importlib.util.spec_from_file_location("exec_gpu_under_test", PROGRAM)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up there
    spec.loader.exec_module(module)  # torch is imported lazily: loading it needs no torch
    return module


_load_program()  # puts bench_py/ on sys.path, so the package below is the program's own
from bench_core import energy, facts, kernels, queued  # noqa: E402
from bench_core import format as fmt  # noqa: E402

# --------------------------------------------------------------------------------------------
# The line contract of docs/LINES.md, as regexes
# --------------------------------------------------------------------------------------------

DUR = r"[0-9]+\.[0-9]{3}(?:s|ms|\u00b5s|ns)"  # Rust `{:.3?}`; the program prints U+00B5
LABEL = r"(?P<label>[A-Za-z0-9_.()+-]+)"
SHAPE = r"(?P<shape>[0-9]+x[0-9]+)"
METHOD = (
    r"(?P<method>no sync|with sync|(?:cuda|mps|xpu)\.Event time(?: \(queued\))?"
    r"|\+ sum\(\)\.item\(\)|benchmark\.Timer|kernel time \(cupti\))"
)
FLOAT = r"[0-9.]+(?:e[-+]?[0-9]+)?"

LINE_PATTERNS: dict[str, re.Pattern[str]] = {
    "torch_header": re.compile(r"torch (?P<version>[0-9][^\s,]*), threads (?P<threads>[0-9]+)"),
    "blas_header": re.compile(r"torch BLAS_INFO=(?P<blas>\S+)"),
    "precision_header": re.compile(r"torch precision (?P<precision>fp32|tf32)(?: \(.+\))?"),
    "device_init": re.compile(rf"{LABEL}: device init (?P<dur>{DUR})"),
    "first_call_async": re.compile(
        rf"{LABEL} {SHAPE} matmul first call: returned (?P<ret>{DUR}), after sync (?P<sync>{DUR})"
    ),
    "first_call_cpu": re.compile(rf"{LABEL} {SHAPE} matmul first call: (?P<dur>{DUR})"),
    "summary": re.compile(
        rf"{LABEL} {SHAPE} matmul {METHOD}, (?P<runs>[0-9]+) runs: "
        rf"min (?P<min>{DUR}) median (?P<median>{DUR})"
    ),
    "samples": re.compile(
        rf"# samples {LABEL} {SHAPE} matmul {METHOD}: (?P<values>{FLOAT}(?: {FLOAT})*)"
    ),
    "kernel": re.compile(
        rf"# kernel {LABEL} {SHAPE} matmul kernel time \(cupti\): (?P<launches>[0-9]+) launches, "
        rf"min (?P<min>{DUR}) median (?P<median>{DUR}): (?P<name>.+)"
    ),
    "energy": re.compile(
        rf"{LABEL} {SHAPE} matmul energy \(nvml\): (?P<joules>[0-9]+\.[0-9]{{3}}) J, "
        rf"(?P<runs>[0-9]+) runs, (?P<dur>{DUR})"
    ),
    "accuracy": re.compile(rf"{LABEL} {SHAPE} matmul accuracy: wrote (?P<dir>.+)"),
}
HEADER_KINDS = ["torch_header", "blas_header", "precision_header"]


def classify(line: str) -> tuple[str, re.Match[str]]:
    """The contract line kind of `line`; fails the test if the line fits none."""
    for kind, pattern in LINE_PATTERNS.items():
        match = pattern.fullmatch(line)
        if match is not None:
            return kind, match
    pytest.fail(f"line outside docs/LINES.md: {line!r}")


def run_program(*args: str, timeout: float = 300) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, str(PROGRAM), *args],
        capture_output=True,
        text=True,
        encoding="utf-8",
        timeout=timeout,
        cwd=ROOT,
    )


def _torch_or_skip() -> None:
    pytest.importorskip("torch", reason="the real program needs torch")


# --------------------------------------------------------------------------------------------
# The real program on the CPU
# --------------------------------------------------------------------------------------------

CPU_METHODS = ["no sync", "with sync", "+ sum().item()", "benchmark.Timer"]
REPS = 3


@pytest.fixture(scope="module", params=[1, 2], ids=["threads1", "threads2"])
def cpu_mm_run(request: pytest.FixtureRequest) -> tuple[int, subprocess.CompletedProcess[str]]:
    _torch_or_skip()
    threads = request.param
    proc = run_program(
        "--device", "cpu", "--shape", "64x64", "--reps", str(REPS), "--samples",
        "--threads", str(threads),
    )  # fmt: skip
    return threads, proc


@pytest.mark.torch
def test_cpu_mm_every_line_follows_the_contract(
    cpu_mm_run: tuple[int, subprocess.CompletedProcess[str]],
) -> None:
    threads, proc = cpu_mm_run
    assert proc.returncode == 0, proc.stderr
    assert "Traceback" not in proc.stderr
    lines = proc.stdout.splitlines()
    kinds = [classify(line) for line in lines]

    expected_kinds = [*HEADER_KINDS, "device_init", "first_call_cpu"]
    expected_kinds += ["summary", "samples"] * len(CPU_METHODS)
    assert [kind for kind, _ in kinds] == expected_kinds, proc.stdout

    header = kinds[0][1]
    assert int(header["threads"]) == threads
    assert kinds[2][1]["precision"] == "fp32"  # no TF32 switch on the CPU
    assert kinds[3][1]["label"] == "cpu"
    assert kinds[4][1]["label"] == "cpu" and kinds[4][1]["shape"] == "64x64"

    pairs = kinds[5:]
    for index, method in enumerate(CPU_METHODS):
        (_, summary), (_, samples) = pairs[2 * index], pairs[2 * index + 1]
        assert summary["label"] == "cpu" and summary["shape"] == "64x64"
        assert summary["method"] == method
        assert int(summary["runs"]) == REPS
        assert (samples["label"], samples["shape"], samples["method"]) == ("cpu", "64x64", method)
        values = [float(v) for v in samples["values"].split()]
        assert len(values) == REPS
        assert all(v > 0 and math.isfinite(v) for v in values)
        # The summary is exactly the formatted min and median of the samples it precedes.
        assert summary["min"] == fmt.format_duration(min(values))
        assert summary["median"] == fmt.format_duration(fmt.median(values))


@pytest.mark.torch
def test_cpu_mm_reports_the_thread_count(
    cpu_mm_run: tuple[int, subprocess.CompletedProcess[str]],
) -> None:
    threads, proc = cpu_mm_run
    assert proc.returncode == 0, proc.stderr
    first = proc.stdout.splitlines()[0]
    assert re.fullmatch(rf"torch \S+, threads {threads}", first), first


@pytest.mark.torch
def test_blas_header_names_a_library() -> None:
    _torch_or_skip()
    import torch

    proc = run_program("--device", "cpu", "--shape", "8x8", "--reps", "1")
    assert proc.returncode == 0, proc.stderr
    blas = LINE_PATTERNS["blas_header"].fullmatch(proc.stdout.splitlines()[1])
    assert blas is not None
    found = re.search(r"BLAS_INFO=([^,\s]+)", torch.__config__.show())
    assert blas["blas"] == (found.group(1) if found else "unknown")


# --------------------------------------------------------------------------------------------
# Accuracy mode
# --------------------------------------------------------------------------------------------


@pytest.mark.torch
def test_accuracy_mode_writes_the_chapter_inputs_and_product(tmp_path: Path) -> None:
    _torch_or_skip()
    import numpy as np

    out = tmp_path / "acc"
    proc = run_program("--device", "cpu", "--mode", "accuracy", "--out", str(out))
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    assert [classify(line)[0] for line in lines] == [*HEADER_KINDS, "accuracy"]
    assert lines[2] == "torch precision fp32"
    acc = LINE_PATTERNS["accuracy"].fullmatch(lines[-1])
    assert acc is not None
    assert (acc["label"], acc["shape"]) == ("cpu", "256x256")
    assert Path(acc["dir"]) == out.resolve()

    a, b, c = (np.load(out / f"{name}.npy") for name in ("a", "b", "c"))
    for array in (a, b, c):
        assert array.dtype == np.float32 and array.shape == (256, 256)
        assert array.flags["C_CONTIGUOUS"]
    k = np.arange(256 * 256, dtype=np.float32).reshape(256, 256)
    # sin/cos in f32 by torch: within an ulp or so of numpy's f32 sin/cos.
    assert np.abs(a - np.sin(k)).max() < 1e-6
    assert np.abs(b - np.cos(k)).max() < 1e-6
    ref = a.astype(np.float64) @ b.astype(np.float64)
    assert f"{np.abs(ref).max():.3f}" == "1.095"  # the chapter's max |ref|
    err = float(np.abs(c.astype(np.float64) - ref).max())
    assert 0 < err < 1e-5  # the chapter: about 2e-6 for a correctly rounded f32 product


@pytest.mark.torch
def test_accuracy_mode_rectangular_shapes(tmp_path: Path) -> None:
    _torch_or_skip()
    import numpy as np

    proc = run_program(
        "--device", "cpu", "--mode", "accuracy", "--shape", "8x3", "--out", str(tmp_path)
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    a, b, c = (np.load(tmp_path / f"{name}.npy") for name in ("a", "b", "c"))
    assert a.shape == (8, 3) and b.shape == (3, 8) and c.shape == (8, 8)
    assert a[2, 1] == np.float32(np.sin(np.float32(2 * 3 + 1)))
    assert b[2, 1] == np.float32(np.cos(np.float32(2 * 8 + 1)))


# --------------------------------------------------------------------------------------------
# Expected failures: one line, right exit status, no traceback
# --------------------------------------------------------------------------------------------


def _assert_one_error_line(proc: subprocess.CompletedProcess[str], code: int) -> None:
    assert proc.returncode == code, (proc.returncode, proc.stderr)
    assert proc.stdout == ""
    assert "Traceback" not in proc.stderr
    lines = proc.stderr.splitlines()
    assert len(lines) == 1, proc.stderr
    assert lines[0].startswith("error: ")


@pytest.mark.torch
def test_cuda_without_a_gpu_is_one_error_line() -> None:
    _torch_or_skip()
    import torch

    if torch.cuda.is_available():
        pytest.skip("this machine has a CUDA GPU")
    _assert_one_error_line(run_program("--device", "cuda", "--reps", "1"), 1)


@pytest.mark.parametrize(
    "args",
    [
        ["--bogus"],
        ["--device", "tpu"],
        ["--reps", "0"],
        ["--shape", "12"],
        ["--threads", "x"],
        ["--mode", "warm"],
        ["--mode", "accuracy"],  # no --out
        ["--precision", "tf32", "--device", "cpu"],
        ["--precision", "tf32", "--device", "mps"],
        ["--precision", "fp16"],
        ["--energy", "-1"],
        ["--energy", "nan"],
        ["--energy", "soon"],
        ["--dump-kernels", "/nonexistent-folder/kernels.json"],
    ],
    ids=["unknown-option", "unknown-device", "zero-reps", "bad-shape", "bad-threads",
         "warm-is-burn-only", "accuracy-needs-out", "tf32-on-cpu", "tf32-on-mps",
         "unknown-precision", "negative-energy", "nan-energy", "energy-not-a-number",
         "dump-into-a-missing-folder"],
)  # fmt: skip
def test_bad_arguments_are_one_error_line_and_exit_2(args: list[str]) -> None:
    _assert_one_error_line(run_program(*args), 2)


def test_help_exits_0() -> None:
    proc = run_program("--help")
    assert proc.returncode == 0
    for option in ("--device", "--samples", "--precision", "--energy", "--dump-kernels"):
        assert option in proc.stdout, option


@pytest.mark.torch
def test_tf32_where_auto_finds_no_cuda_is_one_error_line_exit_2() -> None:
    _torch_or_skip()
    import torch

    if torch.cuda.is_available():
        pytest.skip("this machine has a CUDA GPU: auto picks it and tf32 is allowed")
    proc = run_program("--precision", "tf32", "--shape", "8x8", "--reps", "1")
    _assert_one_error_line(proc, 2)
    assert "--precision tf32 needs a CUDA device" in proc.stderr


# --------------------------------------------------------------------------------------------
# Beyond the chapter, on a machine without CUDA: a note, no line, exit 0
# --------------------------------------------------------------------------------------------


@pytest.mark.torch
def test_energy_on_cpu_is_a_note_and_no_energy_line(tmp_path: Path) -> None:
    _torch_or_skip()
    dump = tmp_path / "kernels.json"
    proc = run_program(
        "--device", "cpu", "--shape", "16x16", "--reps", "2", "--energy", "0.1",
        "--dump-kernels", str(dump), "--profile-window",
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    assert "Traceback" not in proc.stderr
    kinds = [classify(line)[0] for line in proc.stdout.splitlines()]
    assert "energy" not in kinds and "kernel" not in kinds
    assert kinds == [*HEADER_KINDS, "device_init", "first_call_cpu"] + ["summary"] * 4
    notes = [line for line in proc.stderr.splitlines() if line.startswith("note: ")]
    assert any("--energy" in line and "cpu" in line for line in notes), proc.stderr
    assert any("--dump-kernels" in line for line in notes), proc.stderr
    assert any("--profile-window" in line and "cpu" in line for line in notes), proc.stderr
    assert not dump.exists()


@pytest.mark.torch
def test_precision_is_read_back_from_torch_after_setting_it() -> None:
    """The installed torch's own switches, set and read in a fresh process (no GPU needed)."""
    _torch_or_skip()
    script = (
        "import sys\n"
        f"sys.path.insert(0, {str(PROGRAM.parent)!r})\n"
        "from bench_core import facts as m\n"
        "for wanted in sys.argv[1:]:\n"
        "    m.set_precision(wanted)\n"
        "    print(wanted, m.cuda_matmul_precision())\n"
    )
    proc = subprocess.run(
        [sys.executable, "-c", script, "tf32", "fp32", "tf32"],
        capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.splitlines() == ["tf32 tf32", "fp32 fp32", "tf32 tf32"]


@pytest.mark.torch
# the real torch.profiler asked for CUDA with no GPU says so (a UserWarning): this test's own
# situation, on a CPU box only; the note and the missing line are what it checks
@pytest.mark.filterwarnings("ignore:CUDA is not available, disabling CUDA profiling:UserWarning")
def test_kernel_block_without_cupti_is_a_note_and_no_line(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """The real torch.profiler asked for CUDA activities where there is no CUDA."""
    _torch_or_skip()
    import torch

    if torch.cuda.is_available():
        pytest.skip("this machine has a CUDA GPU")
    monkeypatch.setattr(kernels, "cuda_index", lambda tensor: 0)
    dev = facts.Device("cuda", torch.device("cpu"), lambda: None, is_accelerator=True)
    a = torch.rand(8, 8)
    kernels.kernel_time_block(dev, a, a, 3, True, None, "fp32")
    out, err = capsys.readouterr()
    assert out == ""
    notes = [line for line in err.splitlines() if line.startswith("note: ")]
    assert len(notes) == 1 and "kernel time (cupti)" in notes[0], err


# --------------------------------------------------------------------------------------------
# Kernel time: the profiler's events grouped into matmuls
# --------------------------------------------------------------------------------------------

GEMM = "sm80_xmma_gemm_f32f32_f32f32_f32_nn_n_tilesize128x128x8_stage3_warpsize2x2x1_ffma_aligna4"
SPLITK = "void cublasLt::splitKreduce_kernel<32, 16, int, float, float, float>(float const*)"


def _events(names_and_us: list[tuple[str, float]], gap_us: float = 5.0) -> list[dict[str, object]]:
    """Device events as kernel_events writes them, launched one after the other."""
    out: list[dict[str, object]] = []
    start = 1000.0
    for name, duration in names_and_us:
        out.append({"name": name, "start_us": start, "duration_us": duration, "device": "cuda:0"})
        start += duration + gap_us
    return out


def test_one_kernel_per_matmul() -> None:
    durations = [55.4, 55.6, 55.5]
    groups = kernels.group_kernels(_events([(GEMM, d) for d in durations]), 3)
    assert groups.note is None
    assert groups.per_matmul_us == durations
    assert [(k.name, k.durations_us) for k in groups.kernels] == [(GEMM, durations)]


def test_two_kernels_per_matmul_are_summed_in_launch_order() -> None:
    launches = [(GEMM, 40.0), (SPLITK, 3.0), (GEMM, 41.0), (SPLITK, 2.5)]
    events = _events(launches)
    events.reverse()  # the profiler's list need not be in launch order; start_us is
    groups = kernels.group_kernels(events, 2)
    assert groups.note is None
    assert groups.per_matmul_us == [43.0, 43.5]
    assert [(k.name, k.durations_us) for k in groups.kernels] == [
        (GEMM, [40.0, 41.0]),
        (SPLITK, [3.0, 2.5]),
    ]


def test_a_count_that_does_not_divide_gives_per_kernel_stats_only() -> None:
    events = _events([(GEMM, 55.0)] * 4 + [("Memset (Device)", 1.0)])
    groups = kernels.group_kernels(events, 4)
    assert groups.per_matmul_us is None
    assert groups.note is not None and "5 kernels for 4 matmuls" in groups.note
    assert [(k.name, len(k.durations_us)) for k in groups.kernels] == [
        (GEMM, 4),
        ("Memset (Device)", 1),
    ]


def test_matmuls_with_different_kernel_sequences_are_not_summed() -> None:
    events = _events([(GEMM, 40.0), (SPLITK, 3.0), (GEMM, 41.0), (GEMM, 39.0)])
    groups = kernels.group_kernels(events, 2)
    assert groups.per_matmul_us is None
    assert groups.note is not None and "same 2 kernels" in groups.note
    assert [len(k.durations_us) for k in groups.kernels] == [3, 1]


def test_device_events_that_are_not_work_are_left_out() -> None:
    events = _events([(GEMM, 55.0), ("gpu annotation", 60.0), (GEMM, 56.0)])
    events[0]["kind"] = events[2]["kind"] = "kernel"
    events[1]["kind"] = "gpu_user_annotation"
    groups = kernels.group_kernels(events, 2)
    assert groups.note is None and groups.per_matmul_us == [55.0, 56.0]
    assert [k.name for k in groups.kernels] == [GEMM]


def test_no_device_events_is_a_note() -> None:
    groups = kernels.group_kernels([], 20)
    assert (groups.per_matmul_us, groups.kernels) == (None, [])
    assert groups.note == "the profiler recorded no device kernel"


@pytest.mark.torch
def test_event_record_reads_the_installed_profilers_events() -> None:
    """The FunctionEvent attributes event_record uses exist in this torch (CPU events here)."""
    _torch_or_skip()
    import torch
    from torch.profiler import ProfilerActivity, profile

    a = torch.rand(32, 32)
    with profile(activities=[ProfilerActivity.CPU]) as prof:
        a @ a
    records = [kernels.event_record(event) for event in prof.events()]
    mm = [r for r in records if r["name"] == "aten::mm"]
    assert len(mm) == 1, records
    assert mm[0]["duration_us"] > 0 and mm[0]["start_us"] >= 0
    assert str(mm[0]["device"]).startswith("cpu:")
    assert mm[0]["kind"] in (None, "cpu_op")  # torch's activity_type where it has one
    assert kernels.kernel_events(prof) == []  # no CUDA device events in a CPU profile


# --------------------------------------------------------------------------------------------
# Queued device time: the spin's length and the proof that the launch gap stayed out
# --------------------------------------------------------------------------------------------


def test_spin_lasts_five_times_the_slowest_enqueue_and_at_least_200us() -> None:
    # 2 cycles per ns = 2000 per µs (a 2 GHz SM clock)
    assert queued.spin_cycles([30_000, 80_000, 50_000], 2000.0) == 5 * 80 * 2000
    assert queued.spin_cycles([10_000], 2000.0) == 200 * 2000  # 50 µs < the 200 µs floor
    with pytest.raises(ValueError):
        queued.spin_cycles([], 2000.0)


def test_queued_note_counts_the_runs_whose_start_was_reached() -> None:
    assert queued.queued_note("cuda", [False] * 20) is None
    text = queued.queued_note("cuda", [False, True, False, True])
    assert text is not None
    assert text.startswith("cuda.Event time (queued): in 2 of 4 runs")


class _FakeGpu:
    """A stream in order: _sleep(cycles) and matmuls take device time; events read its clock."""

    def __init__(self, reached: list[bool]) -> None:
        self.log: list[str] = []
        self.reached = reached  # what start.query() answers, run by run (in the timed loop)
        self.queries = 0

    def sleep(self, cycles: int) -> None:
        self.log.append(f"sleep {cycles}")

    def event(self) -> _FakeEvent:
        return _FakeEvent(self)


class _FakeEvent:
    def __init__(self, gpu: _FakeGpu) -> None:
        self.gpu = gpu

    def record(self) -> None:
        self.gpu.log.append("record")

    def query(self) -> bool:
        self.gpu.log.append("query")
        answer = self.gpu.reached[self.gpu.queries]
        self.gpu.queries += 1
        return answer

    def synchronize(self) -> None:
        self.gpu.log.append("event sync")

    def elapsed_time(self, end: _FakeEvent) -> float:
        return 0.5  # ms: a calibration spin of 1e6 cycles in 500 µs is 2000 cycles per µs


@pytest.mark.torch
def test_queued_loop_spins_before_the_start_event_and_counts_early_starts(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    _torch_or_skip()
    import torch

    gpu = _FakeGpu([False, True, False])
    monkeypatch.setattr(torch.cuda, "_sleep", gpu.sleep, raising=False)
    dev = facts.Device("cuda", torch.device("cpu"), lambda: None, is_accelerator=True)
    a = torch.rand(8, 8)
    found = queued.queued_event_times(dev, a, a, 3, gpu.event)
    assert found is not None
    times, reached = found
    assert times == [0.5e-3] * 3
    assert reached == [False, True, False]
    assert queued.queued_proof_line("cuda", "8x8", reached) == (
        "cuda 8x8 matmul cuda.Event time (queued): start event waited in 2 of 3 runs")
    timed = gpu.log[-3 * 5 :]  # the timed loop: spin, start, (matmul), end, query, sync
    spins = {entry for entry in timed if entry.startswith("sleep ")}
    assert len(spins) == 1
    assert int(spins.pop().split()[1]) >= 200 * 2000  # at least 200 µs at the calibrated rate
    assert [e.split()[0] for e in timed] == ["sleep", "record", "record", "query", "event"] * 3
    err = capsys.readouterr().err
    assert "note: cuda.Event time (queued): in 1 of 3 runs" in err


@pytest.mark.torch
def test_queued_with_a_spin_that_takes_no_time_is_a_note_and_no_figure(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    _torch_or_skip()
    import torch

    gpu = _FakeGpu([False] * 3)
    monkeypatch.setattr(torch.cuda, "_sleep", gpu.sleep, raising=False)
    monkeypatch.setattr(_FakeEvent, "elapsed_time", lambda self, end: 0.0)
    dev = facts.Device("cuda", torch.device("cpu"), lambda: None, is_accelerator=True)
    a = torch.rand(4, 4)
    assert queued.queued_event_times(dev, a, a, 3, gpu.event) is None
    assert "took no time" in capsys.readouterr().err
    assert "query" not in gpu.log  # no timed run was attempted


@pytest.mark.torch
def test_queued_without_torch_sleep_is_a_note_and_no_figure(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    _torch_or_skip()
    import torch

    monkeypatch.delattr(torch.cuda, "_sleep", raising=False)
    dev = facts.Device("cuda", torch.device("cpu"), lambda: None, is_accelerator=True)
    a = torch.rand(4, 4)
    assert queued.queued_event_times(dev, a, a, 3, _FakeGpu([]).event) is None
    assert "torch.cuda._sleep" in capsys.readouterr().err


# --------------------------------------------------------------------------------------------
# Energy: the counter loop and the NVML device (a fake NVML library)
# --------------------------------------------------------------------------------------------


class _World:
    """A GPU whose NVML energy counter steps every 100 ms: idle at 120 W, 700 W while a batch
    runs (each batch 0.25 s); clock reads cost 10 µs. Drives measure_energy with no GPU."""

    STEP_NS = 100_000_000

    def __init__(self) -> None:
        self.t = 37_000_000  # not on a counter step: the first read is mid-interval
        self.mj = 0.0  # energy so far (exact), the counter shows it as of its last step
        self.shown = 0
        self.steps = 0
        self.reads: list[int] = []

    def _advance(self, ns: int, watts: float) -> None:
        for _ in range(ns // 1_000_000):  # 1 ms steps
            self.t += 1_000_000
            self.mj += watts  # W x 1 ms = that many mJ
            if self.t // self.STEP_NS > self.steps:  # NVML updates its counter
                self.steps, self.shown = self.t // self.STEP_NS, round(self.mj)

    def clock(self) -> int:
        self.t += 10_000
        return self.t

    def read_mj(self) -> int:
        self.reads.append(self.t)
        return self.shown

    def sleep(self, seconds: float) -> None:
        self._advance(max(int(seconds * 1e9), 1_000_000), 120.0)

    def batch(self) -> int:
        self._advance(250_000_000, 700.0)
        return 100


def test_energy_reads_at_counter_steps_and_subtracts_idle_power() -> None:
    world = _World()
    reading = energy.measure_energy(world.batch, lambda: None, world.read_mj, 5.0,
                                    world.clock, world.sleep)
    assert reading is not None
    assert reading.runs == 2000  # 20 batches of 0.25 s: the first >= 5 s
    # the idle interval and the block start and end within 1 ms after a counter step
    assert reading.idle_watts == pytest.approx(120.0, rel=0.01)
    assert reading.elapsed_ns >= 5_000_000_000
    # both ends just after a counter step: the block is a whole number of steps, +- 2 ms
    assert min(reading.elapsed_ns % _World.STEP_NS,
               -reading.elapsed_ns % _World.STEP_NS) < 2_000_000
    assert min(reading.idle_ns % _World.STEP_NS, -reading.idle_ns % _World.STEP_NS) < 2_000_000
    # gross: 5 s at 700 W plus the idle tail up to the next step; net: less 120 W x the time
    seconds = reading.elapsed_ns / 1e9
    assert reading.millijoules / 1000 == pytest.approx(5 * 700 + (seconds - 5) * 120, rel=0.01)
    assert reading.net_joules == pytest.approx(5 * 580, rel=0.01)
    # busy share from one matmul's kernel time: 2000 x 2.5 ms over the block's time
    assert reading.busy(2.5e-3) == pytest.approx(5 / seconds)
    assert reading.busy(None) is None


def test_energy_gives_up_when_the_counter_never_moves() -> None:
    world = _World()
    reading = energy.measure_energy(world.batch, lambda: None, lambda: 42, 5.0, world.clock,
                                    world.sleep)
    assert reading is None


def test_energy_lines_follow_the_contract_and_parse() -> None:
    from orchestrator.data import parse

    reading = energy.EnergyReading(3_625_000, 2000, 5_100_000_000, 121_000, 1_000_000_000)
    lines: list[str] = []
    original = fmt.emit
    try:
        energy.fmt.emit = lines.append  # type: ignore[assignment]
        energy.print_reading("cuda", "1024x1024", reading, 2.5e-3)
        energy.print_reading("cuda", "1024x1024", reading, None)
    finally:
        energy.fmt.emit = original  # type: ignore[assignment]
    assert lines[1] == ("# energy cuda 1024x1024 matmul energy (nvml): idle 121.000 W over "
                        "1.000s, net 3007.900 J, busy 0.980")
    assert lines[3].endswith("net 3007.900 J")  # no kernel time: no busy share
    parsed = parse.parse_text("\n".join(lines))
    assert not parsed.unknown
    stats = {(f.line_no, f.stat): f.value for f in parsed.figures}
    assert stats[(1, "joules")] == 3625.0 and stats[(1, "joules_net")] == 3007.9
    assert stats[(1, "busy_fraction")] == 0.98 and stats[(1, "idle_watts")] == 121.0
    assert (3, "busy_fraction") not in stats and stats[(3, "idle_seconds")] == 1.0
    assert {f.runs for f in parsed.figures} == {2000}  # the block's runs, on its line


def test_uuids_of_nvml_and_torch_compare_equal() -> None:
    torch_form = "6c4a1f3e-0b2d-4e5f-8a9b-0c1d2e3f4a5b"
    assert energy.uuid_key("GPU-6C4A1F3E-0B2D-4E5F-8A9B-0C1D2E3F4A5B") == torch_form
    assert energy.uuid_key(b"GPU-6c4a1f3e-0b2d-4e5f-8a9b-0c1d2e3f4a5b") == torch_form
    assert energy.uuid_key(torch_form) == torch_form


class _FakeNvml(ModuleType):
    """pynvml's calls the program makes: two GPUs, an energy counter that moves per read."""

    class NVMLError(Exception):
        pass

    def __init__(self, supported: bool = True) -> None:
        super().__init__("pynvml")
        self.supported = supported
        self.energy = {0: 1000, 1: 90_000}
        self.calls: list[str] = []

    def nvmlInit(self) -> None:
        self.calls.append("init")

    def nvmlShutdown(self) -> None:
        self.calls.append("shutdown")

    def nvmlDeviceGetCount(self) -> int:
        return 2

    def nvmlDeviceGetHandleByIndex(self, index: int) -> int:
        return index

    def nvmlDeviceGetUUID(self, handle: int) -> str:
        return ["GPU-aaaaaaaa-0000", "GPU-bbbbbbbb-1111"][handle]

    def nvmlDeviceGetTotalEnergyConsumption(self, handle: int) -> int:
        if not self.supported:
            raise self.NVMLError("Not Supported")
        self.calls.append(f"energy {handle}")
        self.energy[handle] += 1250
        return self.energy[handle]


def _energy_run(monkeypatch: pytest.MonkeyPatch, nvml: _FakeNvml, uuid: str) -> None:
    """energy_block on a 'cuda' Device whose tensors are on the CPU, torch's GPU UUID faked."""
    import torch

    monkeypatch.setitem(sys.modules, "pynvml", nvml)
    monkeypatch.setattr(energy, "cuda_index", lambda tensor: 0)
    monkeypatch.setattr(torch.cuda, "get_device_properties", lambda i: SimpleNamespace(uuid=uuid))
    dev = facts.Device("cuda", torch.device("cpu"), lambda: None, is_accelerator=True)
    a = torch.rand(4, 4)
    monkeypatch.setattr(energy, "IDLE_S", 0.01)  # the fake counter moves at every read
    energy.energy_block(dev, a, a, 0.01)


@pytest.mark.torch
def test_energy_block_reads_the_nvml_device_with_torchs_uuid(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    _torch_or_skip()
    nvml = _FakeNvml()
    _energy_run(monkeypatch, nvml, "bbbbbbbb-1111")
    out, err = capsys.readouterr()
    line, more = out.splitlines()  # the energy line and its `# energy` line
    kind, match = classify(line)
    assert kind == "energy", line
    assert more.startswith("# energy cuda 4x4 matmul energy (nvml): idle "), more
    # the fake counter moves 1.25 J at every read: from one step to the step after the next
    assert (match["label"], match["shape"], match["joules"]) == ("cuda", "4x4", "2.500")
    assert int(match["runs"]) % energy.ENERGY_BATCH == 0 and int(match["runs"]) > 0
    assert {c for c in nvml.calls if c.startswith("energy")} == {"energy 1"}
    assert nvml.calls[0] == "init" and nvml.calls[-1] == "shutdown"
    assert [n for n in err.splitlines() if "shorter than 5 s" not in n] == []


@pytest.mark.torch
def test_energy_block_falls_back_to_nvml_device_0_with_a_note(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    _torch_or_skip()
    nvml = _FakeNvml()
    _energy_run(monkeypatch, nvml, "cccccccc-2222")
    out, err = capsys.readouterr()
    assert classify(out.splitlines()[0])[0] == "energy"
    assert {c for c in nvml.calls if c.startswith("energy")} == {"energy 0"}
    assert "reading NVML device 0" in err


@pytest.mark.torch
def test_energy_not_supported_is_a_note_and_no_line(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    _torch_or_skip()
    nvml = _FakeNvml(supported=False)
    _energy_run(monkeypatch, nvml, "bbbbbbbb-1111")
    out, err = capsys.readouterr()
    assert out == ""
    assert "Not Supported" in err and err.startswith("note: ")
    assert nvml.calls[-1] == "shutdown"


# --------------------------------------------------------------------------------------------
# The duration formatter: Rust's `{:.3?}` for std::time::Duration
# --------------------------------------------------------------------------------------------

# Printed by rustc 1.95 (`format!("{:.3?}", Duration::from_nanos(n))`). An exact half after the
# third digit rounds to even (1_000_500 ns -> 1.000ms, 1_117_500 ns -> 1.118ms); a carry out of
# the digits stays in the same unit (999_999_500 ns -> 1000.000ms).
RUST_ROWS: list[tuple[int, str]] = [
    (0, "0.000ns"),
    (1, "1.000ns"),
    (791, "791.000ns"),
    (999, "999.000ns"),
    (1000, "1.000µs"),
    (1001, "1.001µs"),
    (1500, "1.500µs"),
    (28166, "28.166µs"),
    (999500, "999.500µs"),
    (999999, "999.999µs"),
    (1000000, "1.000ms"),
    (1000499, "1.000ms"),
    (1000500, "1.000ms"),
    (1000501, "1.001ms"),
    (1117499, "1.117ms"),
    (1117500, "1.118ms"),
    (1118000, "1.118ms"),
    (1999500, "2.000ms"),
    (9999500, "10.000ms"),
    (99999499, "99.999ms"),
    (99999500, "100.000ms"),
    (268268500, "268.268ms"),
    (989989500, "989.990ms"),
    (999999499, "999.999ms"),
    (999999500, "1000.000ms"),
    (999999600, "1000.000ms"),
    (999999999, "1000.000ms"),
    (1000000000, "1.000s"),
    (1000499999, "1.000s"),
    (1000500000, "1.000s"),
    (1999500000, "2.000s"),
    (3599999999, "3.600s"),
    (3600000000, "3.600s"),
    (59999500000, "60.000s"),
    (74574500000, "74.574s"),
    (999999500000, "1000.000s"),
    (123456789012, "123.457s"),
]


@pytest.mark.parametrize(("nanos", "expected"), RUST_ROWS)
def test_formatter_matches_rust_rows(nanos: int, expected: str) -> None:
    assert fmt.format_duration_ns(nanos) == expected


def test_formatter_matches_every_row_of_durations_tsv() -> None:
    if not DURATIONS_TSV.is_file():
        pytest.fail(
            f"{DURATIONS_TSV.relative_to(ROOT)} is missing: it is produced by the Rust side "
            "(nanoseconds<TAB>formatted) and both formatters are checked against it"
        )
    mismatches: list[str] = []
    rows = 0
    for number, raw in enumerate(DURATIONS_TSV.read_text(encoding="utf-8").splitlines(), 1):
        if not raw.strip() or raw.startswith("#"):
            continue
        fields = raw.split("\t")
        if not fields[0].strip().isdigit():  # a header row
            continue
        assert len(fields) == 2, f"line {number}: expected nanoseconds<TAB>formatted: {raw!r}"
        nanos, expected = int(fields[0]), fields[1]
        rows += 1
        got = fmt.format_duration_ns(nanos)
        if got != expected:
            mismatches.append(f"line {number}: {nanos} ns: Rust {expected!r}, Python {got!r}")
    assert rows > 0, "durations.tsv has no rows"
    assert not mismatches, "\n".join(mismatches[:20])


def test_format_seconds_rounds_to_the_nearest_nanosecond() -> None:
    assert fmt.format_duration(28.166e-6) == "28.166µs"
    assert fmt.format_duration(0.0011174994) == "1.117ms"  # 1_117_499 ns
    assert fmt.format_duration(0.0011174996) == "1.118ms"  # 1_117_500 ns: a tie, 7 is odd
    assert fmt.format_duration(3.6) == "3.600s"
    assert fmt.format_duration(0.0) == "0.000ns"
    with pytest.raises(ValueError):
        fmt.format_duration_ns(-1)


def test_median_takes_the_mean_of_the_two_middle_values() -> None:
    assert fmt.median([3.0, 1.0, 2.0]) == 2.0
    assert fmt.median([4.0, 1.0, 3.0, 2.0]) == 2.5
    assert fmt.median([5.0]) == 5.0
    with pytest.raises(ValueError):
        fmt.median([])
