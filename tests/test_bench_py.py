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
from types import ModuleType

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


exec_gpu = _load_program()


# --------------------------------------------------------------------------------------------
# The line contract of docs/LINES.md, as regexes
# --------------------------------------------------------------------------------------------

DUR = r"[0-9]+\.[0-9]{3}(?:s|ms|\u00b5s|ns)"  # Rust `{:.3?}`; the program prints U+00B5
LABEL = r"(?P<label>[A-Za-z0-9_.()+-]+)"
SHAPE = r"(?P<shape>[0-9]+x[0-9]+)"
METHOD = (
    r"(?P<method>no sync|with sync|(?:cuda|mps|xpu)\.Event time|\+ sum\(\)\.item\(\)"
    r"|benchmark\.Timer)"
)
FLOAT = r"[0-9.]+(?:e[-+]?[0-9]+)?"

LINE_PATTERNS: dict[str, re.Pattern[str]] = {
    "torch_header": re.compile(r"torch (?P<version>[0-9][^\s,]*), threads (?P<threads>[0-9]+)"),
    "blas_header": re.compile(r"torch BLAS_INFO=(?P<blas>\S+)"),
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
    "accuracy": re.compile(rf"{LABEL} {SHAPE} matmul accuracy: wrote (?P<dir>.+)"),
}


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

    expected_kinds = ["torch_header", "blas_header", "device_init", "first_call_cpu"]
    expected_kinds += ["summary", "samples"] * len(CPU_METHODS)
    assert [kind for kind, _ in kinds] == expected_kinds, proc.stdout

    header = kinds[0][1]
    assert int(header["threads"]) == threads
    assert kinds[2][1]["label"] == "cpu"
    assert kinds[3][1]["label"] == "cpu" and kinds[3][1]["shape"] == "64x64"

    pairs = kinds[4:]
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
        assert summary["min"] == exec_gpu.format_duration(min(values))
        assert summary["median"] == exec_gpu.format_duration(exec_gpu.median(values))


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
    assert [classify(line)[0] for line in lines] == ["torch_header", "blas_header", "accuracy"]
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
    ],
    ids=["unknown-option", "unknown-device", "zero-reps", "bad-shape", "bad-threads",
         "warm-is-burn-only", "accuracy-needs-out"],
)  # fmt: skip
def test_bad_arguments_are_one_error_line_and_exit_2(args: list[str]) -> None:
    _assert_one_error_line(run_program(*args), 2)


def test_help_exits_0() -> None:
    proc = run_program("--help")
    assert proc.returncode == 0
    assert "--device" in proc.stdout and "--samples" in proc.stdout


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
    assert exec_gpu.format_duration_ns(nanos) == expected


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
        got = exec_gpu.format_duration_ns(nanos)
        if got != expected:
            mismatches.append(f"line {number}: {nanos} ns: Rust {expected!r}, Python {got!r}")
    assert rows > 0, "durations.tsv has no rows"
    assert not mismatches, "\n".join(mismatches[:20])


def test_format_seconds_rounds_to_the_nearest_nanosecond() -> None:
    assert exec_gpu.format_duration(28.166e-6) == "28.166µs"
    assert exec_gpu.format_duration(0.0011174994) == "1.117ms"  # 1_117_499 ns
    assert exec_gpu.format_duration(0.0011174996) == "1.118ms"  # 1_117_500 ns: a tie, 7 is odd
    assert exec_gpu.format_duration(3.6) == "3.600s"
    assert exec_gpu.format_duration(0.0) == "0.000ns"
    with pytest.raises(ValueError):
        exec_gpu.format_duration_ns(-1)


def test_median_takes_the_mean_of_the_two_middle_values() -> None:
    assert exec_gpu.median([3.0, 1.0, 2.0]) == 2.0
    assert exec_gpu.median([4.0, 1.0, 3.0, 2.0]) == 2.5
    assert exec_gpu.median([5.0]) == 5.0
    with pytest.raises(ValueError):
        exec_gpu.median([])
