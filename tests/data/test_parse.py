"""Tests of orchestrator.parse: every line form of docs/LINES.md and the chapter's listings."""

from __future__ import annotations

import dataclasses
import gc
import io
import random
from pathlib import Path

import pytest

from orchestrator.data.parse import (
    Context,
    Figure,
    Header,
    Samples,
    parse_lines,
    parse_text,
    read_log,
)
from orchestrator.errors import InputError
from orchestrator.records import CacheState

from ..conftest import PROJECT

DATA = PROJECT / "tests" / "data"
LISTINGS = (DATA / "chapter_listings.log").read_text(encoding="utf-8")
SEED = (DATA / "chapter_seed.txt").read_text(encoding="utf-8")


def one(figures: list[Figure], **want: object) -> Figure:
    """The single figure whose fields equal `want`."""
    found = [f for f in figures if all(getattr(f, k) == v for k, v in want.items())]
    assert len(found) == 1, (want, found)
    return found[0]


def without_line_no(figure: Figure) -> tuple[object, ...]:
    return dataclasses.astuple(dataclasses.replace(figure, line_no=0))


# ---- the chapter -----------------------------------------------------------------------------


@pytest.fixture(scope="module")
def chapter() -> list[Figure]:
    return parse_text(LISTINGS).figures


def test_chapter_counts() -> None:
    result = parse_text(LISTINGS)
    assert len(result.figures) == 77
    assert len(result.unknown) == 15 and {text for _, text in result.unknown} == {"..."}
    assert result.line_count == 88
    assert [(h.kind, h.version, h.threads) for h in result.headers] == [
        ("torch", "2.15.0", 8), ("torch", "2.15.0", 8), ("torch", "2.15.0", 1),
        ("torch", "2.15.0", 8)]
    assert result.samples == [] and result.info == []
    methods = [f.method for f in result.figures]
    assert {m: methods.count(m) for m in set(methods)} == {
        "no_sync": 14, "with_sync": 18, "device_time": 4, "device_time_no_flush": 1,
        "readback": 4, "device_init": 4, "first_call_returned": 4, "first_call_after_sync": 4,
        "first_call": 2, "accuracy": 13, "warmup_timed_run": 9}


def test_chapter_timing_methods(chapter: list[Figure]) -> None:
    fig = one(chapter, label="metal", method="with_sync", stat="min")
    assert fig.value == 651.666e-6
    assert (fig.framework, fig.device, fig.shape, fig.op, fig.runs) == (
        "burn", "metal", "1024x1024", "matmul", 20)
    assert one(chapter, label="metal", method="no_sync", stat="min").value == 791e-9
    assert one(chapter, label="mps", method="with_sync", stat="median").value == 1.118e-3
    fig = one(chapter, label="mps", method="device_time", stat="min")
    assert (fig.value, fig.method_text, fig.framework) == (419.333e-6, "mps.Event time", "torch")
    fig = one(chapter, label="metal", method="device_time", stat="median")
    assert (fig.value, fig.method_text) == (429.334e-6, "device time (profile_with flush)")
    fig = one(chapter, method="device_time_no_flush")
    assert (fig.stat, fig.value, fig.runs, fig.framework) == ("no_time_count", 20, 20, "burn")
    fig = one(chapter, label="mps", method="readback", stat="min")
    assert (fig.value, fig.method_text) == (592.459e-6, "+ sum().item()")
    assert one(chapter, label="metal", method="readback", stat="median").value == 751.958e-6


def test_chapter_first_calls(chapter: list[Figure]) -> None:
    fig = one(chapter, label="metal", method="first_call_after_sync", process=1)
    assert (fig.value, fig.framework, fig.section) == (3.6, "burn", "burn metal process 1")
    assert fig.threads is None and fig.shape == "1024x1024"
    assert one(chapter, label="metal", method="first_call_returned", process=2).value == 12.584e-6
    fig = one(chapter, label="metal", method="device_init", process=2)
    assert (fig.value, fig.shape, fig.op) == (16.615e-3, None, None)
    fig = one(chapter, label="mps", method="first_call_returned", process=2)
    assert (fig.value, fig.threads, fig.framework) == (12.708e-3, 8, "torch")
    assert one(chapter, label="mps", method="device_init", process=1).value == 79.764e-3


def test_chapter_cpu_builds(chapter: list[Figure]) -> None:
    fig = one(chapter, label="flex(template)", method="no_sync", stat="min")
    assert (fig.value, fig.device, fig.framework, fig.threads) == (21.637e-3, "cpu", "burn", None)
    fig = one(chapter, label="flex+apple-amx", method="first_call", threads=8)
    assert (fig.value, fig.framework, fig.device, fig.section) == (
        3.004e-3, "burn", "cpu", "RAYON_NUM_THREADS=8")
    assert one(chapter, label="flex+apple-amx", method="first_call", threads=1).value == 5.127e-3
    fig = one(chapter, label="flex", method="with_sync", stat="min", threads=8)
    assert fig.value == 4.114e-3
    assert one(chapter, label="flex", method="no_sync", stat="median", threads=1).value == 21.973e-3
    fig = one(chapter, label="cpu", method="with_sync", stat="median", threads=1)
    assert (fig.value, fig.framework, fig.device) == (863.750e-6, "torch", "cpu")


def test_chapter_accuracy_table(chapter: list[Figure]) -> None:
    rows = [f for f in chapter if f.method == "accuracy"]
    assert [f.label for f in rows[::2]] == [
        "torch cpu", "torch mps", "burn flex template", "burn flex default",
        "burn flex apple-amx", "burn metal", ""]
    fig = one(rows, label="burn flex template", stat="max_err_f64_ref")
    assert (fig.value, fig.framework, fig.device) == (2.227e-06, "burn", "cpu")
    fig = one(rows, label="torch mps", stat="max_diff_torch_cpu")
    assert (fig.value, fig.framework, fig.device) == (0.0, "torch", "mps")
    assert one(rows, label="burn metal", stat="max_diff_torch_cpu").value == 2.027e-06
    fig = one(rows, stat="max_abs_ref")
    assert (fig.label, fig.device, fig.framework, fig.value) == ("", "", None, 1.095)
    # The table speaks for many builds: no single run's threads leak into its rows.
    assert {(f.threads, f.process, f.cache, f.runs) for f in rows} == {
        (None, None, CacheState.NONE, None)}


def test_chapter_warmup_puzzle(chapter: list[Figure]) -> None:
    fig = one(chapter, method="warmup_timed_run", warmup="kept", iteration=0)
    assert (fig.value, fig.cache, fig.framework, fig.label, fig.device) == (
        3.379, "cold", "burn", "", "")
    fig = one(chapter, method="warmup_timed_run", warmup="dropped", cache="cold", iteration=0)
    assert fig.value == 3.843
    fig = one(chapter, method="warmup_timed_run", cache="warm", iteration=2)
    assert (fig.value, fig.warmup, fig.method_text) == (1.904e-3, "dropped", "warm-up dropped")


def test_seed_gives_the_listings_figures() -> None:
    seed, listings = parse_text(SEED), parse_text(LISTINGS)
    assert [without_line_no(f) for f in seed.figures] == [
        without_line_no(f) for f in listings.figures]
    assert len(seed.unknown) > 100  # the prose, the code and the '...' lines are all kept
    assert seed.headers[0].line_no == 103


# ---- each line form --------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("label", "printed", "method", "framework"),
    [
        ("cuda", "no sync", "no_sync", None),
        ("cuda", "with sync", "with_sync", None),
        ("cuda", "cuda.Event time", "device_time", "torch"),
        ("mps", "mps.Event time", "device_time", "torch"),
        ("xpu", "xpu.Event time", "device_time", "torch"),
        ("cuda", "device time (profile_with flush)", "device_time", "burn"),
        ("cuda", "device time (profile, no flush)", "device_time_no_flush", "burn"),
        ("cuda", "+ sum().item()", "readback", "torch"),
        ("cuda", "+ sum().into_scalar()", "readback", "burn"),
        ("cuda", "benchmark.Timer", "timer", "torch"),
        ("vulkan", "no sync", "no_sync", "burn"),
        ("flex+x86-v4", "with sync", "with_sync", "burn"),
        ("cpu", "no sync", "no_sync", None),
    ],
)
def test_summary_methods(label: str, printed: str, method: str, framework: str | None) -> None:
    line = f"{label} 64x32 matmul {printed}, 7 runs: min 1.500ms median 2.000ms"
    result = parse_text(line)
    low, mid = result.figures
    assert (low.method, low.method_text, low.framework, low.runs) == (method, printed, framework, 7)
    assert (low.stat, low.value, mid.stat, mid.value) == ("min", 1.5e-3, "median", 2e-3)
    assert (low.shape, low.op, low.line_no, low.iteration) == ("64x32", "matmul", 1, None)


@pytest.mark.parametrize(
    ("duration", "seconds"),
    [("3.600s", 3.6), ("1.118ms", 1.118e-3), ("28.166µs", 28.166e-6), ("28.166μs", 28.166e-6),
     ("28.166us", 28.166e-6), ("791.000ns", 791e-9), ("0.000ns", 0.0), ("1000.000ms", 1.0)],
)
def test_units(duration: str, seconds: float) -> None:
    result = parse_text(f"cuda 8x8 matmul with sync, 2 runs: min {duration} median {duration}\n"
                        f"cuda 8x8 matmul first call: {duration}")
    assert [f.value for f in result.figures] == [seconds] * 3


def test_device_init_first_call_and_no_time() -> None:
    result = parse_text("vulkan: device init 16.118ms\n"
                        "vulkan 1024x1024 matmul first call: returned 10.875µs, after sync 3.600s\n"
                        "cpu 1024x1024 matmul first call: 3.004ms\n"
                        "metal 1024x1024 matmul device time (profile, no flush): 3 of 20 read as"
                        " no time\n")
    init, returned, after, cpu, empty = result.figures
    assert (init.method, init.method_text, init.stat, init.value) == (
        "device_init", "device init", "value", 16.118e-3)
    assert (init.device, init.framework, init.shape, init.runs) == ("vulkan", "burn", None, None)
    assert (returned.method, returned.value) == ("first_call_returned", 10.875e-6)
    assert (after.method, after.value, after.line_no) == ("first_call_after_sync", 3.6, 2)
    assert (cpu.method, cpu.method_text, cpu.value) == ("first_call", "first call", 3.004e-3)
    assert (empty.stat, empty.value, empty.runs) == ("no_time_count", 3.0, 20)
    assert result.unknown == []


def test_warmup_takes_the_last_labelled_line() -> None:
    result = parse_text("burn 0.22.1, features [std, metal], rayon threads 8\n"
                        "metal: device init 16.1ms\n"
                        "warm-up kept, timed run 2: after sync 3.843s\n")
    fig = one(result.figures, method="warmup_timed_run")
    assert (fig.label, fig.device, fig.shape, fig.op) == ("metal", "metal", None, None)
    assert (fig.iteration, fig.warmup, fig.threads, fig.value) == (2, "kept", 8, 3.843)
    result = parse_text("cuda 256x256 matmul first call: 1ms\n"
                        "warm-up dropped, timed run 0: after sync 1ms")
    fig = result.figures[-1]
    assert (fig.label, fig.shape, fig.op, fig.framework) == ("cuda", "256x256", "matmul", "burn")


def test_warmup_without_label() -> None:
    fig = parse_text("warm-up dropped, timed run 1: after sync 694.125µs").figures[0]
    assert (fig.label, fig.device, fig.shape, fig.framework) == ("", "", None, "burn")
    assert (fig.method, fig.stat, fig.value, fig.iteration) == (
        "warmup_timed_run", "value", 694.125e-6, 1)


def test_samples() -> None:
    result = parse_text("mps 1024x1024 matmul no sync, 3 runs: min 28.166µs median 35.458µs\n"
                        "# samples mps 1024x1024 matmul no sync: 2.8166e-05 3.5458e-05 4e-05\n"
                        "# samples cuda 8x8 matmul + sum().into_scalar(): 0.5\n"
                        "# samples cuda 8x8 matmul with sync:\n")
    first, second, empty = result.samples
    assert first == Samples(label="mps", shape="1024x1024", op="matmul", method="no_sync",
                            method_text="no sync", values=(2.8166e-05, 3.5458e-05, 4e-05),
                            line_no=2, section=None, framework="torch", summary_line=1)
    assert type(first) is Samples
    assert (second.method, second.framework, second.values) == ("readback", "burn", (0.5,))
    assert empty.values == ()
    assert second.summary_line is None and empty.summary_line is None  # no summary line above
    assert len(result.figures) == 2 and result.unknown == []


def test_headers() -> None:
    result = parse_text("torch 2.15.0+cu130, threads 16\n"
                        "torch BLAS_INFO=mkl\n"
                        "burn 0.22.1, features [std, flex, simd, rayon], rayon threads 8\n"
                        "burn 0.22.1, features []\n")
    assert result.headers == [
        Header("torch", "2.15.0+cu130", 16, 1),
        Header("torch_blas", None, None, 2, facts={"blas": "mkl"}),
        Header("burn", "0.22.1", 8, 3, facts={"features": ("std", "flex", "simd", "rayon")}),
        Header("burn", "0.22.1", None, 4),
    ]
    assert result.unknown == [] and result.figures == []


def test_accuracy_forms() -> None:
    result = parse_text("accuracy\n"
                        "cuda 256x256 matmul accuracy: wrote /tmp/out dir\n"
                        "burn cuda  max|x - f64 ref| = 1.5e-06\n"
                        "flex   max|x - f64 ref| = 2e-6   max|x - torch cpu| = nan\n"
                        "max |ref| = 1.095\n")
    assert result.info == [(2, "cuda 256x256 matmul accuracy: wrote /tmp/out dir")]
    burn_cuda, flex_err, flex_diff, ref = result.figures
    assert (burn_cuda.label, burn_cuda.framework, burn_cuda.device) == ("burn cuda", "burn", "cuda")
    assert (burn_cuda.stat, burn_cuda.value, burn_cuda.method_text) == (
        "max_err_f64_ref", 1.5e-6, "max|x - f64 ref|")
    assert (flex_err.framework, flex_err.device, flex_diff.stat) == (
        "burn", "cpu", "max_diff_torch_cpu")
    assert flex_diff.value != flex_diff.value  # nan
    assert (ref.stat, ref.value, ref.method) == ("max_abs_ref", 1.095, "accuracy")
    assert result.unknown == [(1, "accuracy")]


# ---- context ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("section", "want"),
    [
        ("### burn cuda process 3", ("burn", None, CacheState.NONE, 3, None)),
        ("### torch cpu threads 4", ("torch", 4, CacheState.NONE, None, None)),
        ("### PyTorch, OMP_NUM_THREADS=2", ("torch", 2, CacheState.NONE, None, None)),
        ("### RAYON_NUM_THREADS=16, warm cache", (None, 16, "warm", None, None)),
        ("### Cold cache, warm-up KEPT", (None, None, "cold", None, "kept")),
        ("### torch vs burn", (None, None, CacheState.NONE, None, None)),
        ("###", (None, None, CacheState.NONE, None, None)),
    ],
)
def test_section_context(section: str, want: tuple[object, ...]) -> None:
    fig = parse_text(f"{section}\ncuda 8x8 matmul first call: 1ms").figures[0]
    assert (fig.framework, fig.threads, fig.cache, fig.process, fig.warmup) == want
    assert fig.section == section[4:]


def test_context_precedence() -> None:
    context = Context(framework="burn", threads=2, cache="warm", process=5, warmup="dropped")
    line = "cuda 8x8 matmul first call: 1ms"
    log = "\n".join([line, "### torch threads 4, cold cache", line, "torch 2.15.0, threads 6",
                     line, "### process 7", line])
    figures = parse_text(log, context).figures
    context_fields = [(f.framework, f.threads, f.cache, f.process, f.warmup) for f in figures]
    assert context_fields == [
        ("burn", 2, "warm", 5, "dropped"),  # the caller's defaults
        ("torch", 4, "cold", 5, "dropped"),  # the section wins over them
        ("torch", 6, "cold", 5, "dropped"),  # the program's header wins over the section
        ("burn", 2, "warm", 7, "dropped"),  # a new section: the header's reach is over
    ]
    assert [f.section for f in figures] == [None, "torch threads 4, cold cache",
                                            "torch threads 4, cold cache", "process 7"]


def test_label_decides_framework_only_when_nothing_else_does() -> None:
    assert parse_text("mps: device init 1ms").figures[0].framework == "torch"
    assert parse_text("cuda: device init 1ms").figures[0].framework is None
    assert parse_text("cuda: device init 1ms", Context(framework="torch")).figures[0].framework \
        == "torch"
    log = "### burn\ncuda 8x8 matmul + sum().item(), 2 runs: min 1ms median 1ms"
    assert parse_text(log).figures[0].framework == "burn"


def test_section_forgets_last_label() -> None:
    log = "cuda 8x8 matmul first call: 1ms\n### next\nwarm-up kept, timed run 0: after sync 1s"
    assert parse_text(log).figures[-1].label == ""


# ---- robustness ------------------------------------------------------------------------------

VALID_LINES = [
    "torch 2.15.0, threads 8",
    "burn 0.22.1, features [std, flex, simd, rayon], rayon threads 8",
    "metal: device init 16.118ms",
    "metal 1024x1024 matmul first call: returned 10.875µs, after sync 3.600s",
    "flex+apple-amx 1024x1024 matmul first call: 3.004ms",
    "mps 1024x1024 matmul + sum().item(), 20 runs: min 592.459µs median 985.416µs",
    "metal 1024x1024 matmul device time (profile, no flush): 20 of 20 read as no time",
    "# samples mps 1024x1024 matmul no sync: 2.8166e-05 3.5458e-05",
    "warm-up dropped, timed run 0: after sync 3.843s",
    "torch cpu            max|x - f64 ref| = 2.008e-06   max|x - torch cpu| = 0.000e+00",
    "max |ref| = 1.095",
]


@pytest.mark.parametrize("line", VALID_LINES)
def test_truncated_lines_are_unknown_not_errors(line: str) -> None:
    for cut in range(1, len(line)):
        result = parse_text(line[:cut])
        assert result.line_count == 1
        kept = len(result.unknown) + len(result.headers) + len(result.samples)
        assert kept + bool(result.figures) == 1  # a cut at a space can still be a valid line


@pytest.mark.parametrize(
    "line",
    [
        "mps 1024x1024 matmul no sync, 20 runs: min 28.166xs median 35.458µs",
        "mps 1024x1024 matmul no sync, 20 runs: min -28.166µs median 35.458µs",
        "mps 1024x1024 matmul no sync, 20 runs: min 28.166µs median 35.458µs extra",
        "mps 1024x1024 matmul no sync, 20 runs: min 28.166µs",
        "mps 1024x1024 matmul teleport, 20 runs: min 28.166µs median 35.458µs",
        "mps matmul no sync, 20 runs: min 28.166µs median 35.458µs",
        "mps 1024x1024 matmul no sync, 99999999999 runs: min 1ms median 1ms",
        "mps 1024x1024 matmul no sync, 20 runs: min 1e-3s median 1ms",
        "mps 1024x1024 matmul no sync, ٢٠ runs: min 1ms median 1ms",
        "metal: device init soon",
        "metal 1024x1024 matmul first call: returned 10.875µs",
        "metal 1024x1024 matmul device time (profile, no flush): some of 20 read as no time",
        "warm-up dropped, timed run one: after sync 3.843s",
        "# samples mps 1024x1024 matmul no sync: 1.0 two 3.0",
        "# samples mps 1024x1024 matmul stretch: 1.0",
        "# a comment",
        "#",
        "max |ref| = large",
        "torch cpu max|x - f64 ref| = small",
        "...",
        "  • PyTorch 慢在调用那一行（returned 130.549ms）",
        "println!(\"warm-up {kind}, timed run {i}: after sync {:.3?}\", t.elapsed());",
    ],
)
def test_malformed_known_forms_are_unknown(line: str) -> None:
    result = parse_text(line)
    assert (result.figures, result.samples, result.headers) == ([], [], [])
    assert result.unknown == [(1, line.strip())]


def test_garbage_never_raises() -> None:
    rng = random.Random(7)
    alphabet = "".join(map(chr, range(0, 0x250))) + "µμ#:,.x |()+=[]\r\n\t" + "0123456789" * 5
    pieces = [*VALID_LINES, "### process 1", "### threads 8"]
    for _ in range(300):
        line = "".join(rng.choice(alphabet) for _ in range(rng.randrange(0, 120)))
        mixed = rng.choice(pieces)
        spot = rng.randrange(len(mixed) + 1)
        text = "\n".join([line, mixed[:spot] + line[:5] + mixed[spot:], "9" * 5000])
        result = parse_text(text)
        assert result.line_count == len(text.split("\n")) - (text.endswith("\n"))
    assert parse_text("\udcff\x00\ufeff").unknown == [(1, "\udcff\x00\ufeff")]


@pytest.mark.parametrize(
    "line",
    ["a" + " " * 100_000 + "b max|x - f64 ref| = x", "cuda 8x8 matmul " + ", " * 50_000,
     "### " + "threads " * 20_000, "x" * 100_000 + " first call: " + " " * 100_000,
     "# samples cuda 8x8 matmul no sync:" + " 1" * 50_000 + "x"],
)
def test_long_pathological_lines_stay_linear(line: str) -> None:
    # A regex that backtracks quadratically would take minutes on these.
    result = parse_text(line)
    assert result.figures == [] and result.line_count == 1


def test_whitespace_blank_lines_and_line_numbers() -> None:
    text = "\r\n  \n\t\r\n   mps: device init 1.000ms  \r\n\n...\r\n"
    result = parse_text(text)
    assert result.line_count == 6
    assert [(f.line_no, f.value) for f in result.figures] == [(4, 1e-3)]
    assert result.unknown == [(6, "...")]
    assert parse_text("").line_count == 0 and parse_text("\n").line_count == 1
    assert parse_text("...").unknown == [(1, "...")]


def test_parse_lines_reads_a_file_like_object() -> None:
    text = LISTINGS.replace("\n", "\r\n")
    from_file = parse_lines(io.StringIO(text, newline=""))
    assert from_file.line_count == 88
    assert from_file.figures == parse_text(LISTINGS).figures


def test_figures_are_real_frozen_figures() -> None:
    fig = parse_text("mps: device init 1ms").figures[0]
    assert type(fig) is Figure
    assert fig == Figure(framework="torch", label="mps", device="mps", shape=None, op=None,
                         method="device_init", method_text="device init", stat="value",
                         value=1e-3, runs=None, threads=None, cache=CacheState.NONE,
                         process=None, warmup=None, iteration=None, section=None, line_no=1)
    assert hash(fig) == hash(dataclasses.replace(fig))
    with pytest.raises(dataclasses.FrozenInstanceError):
        fig.value = 2.0  # type: ignore[misc]
    assert dataclasses.asdict(fig)["method"] == "device_init"


def test_gc_state_is_restored() -> None:
    assert gc.isenabled()
    parse_text(LISTINGS)
    assert gc.isenabled()
    gc.disable()
    try:
        parse_text(LISTINGS)
        assert not gc.isenabled()
    finally:
        gc.enable()


# ---- what a hostile or careless log holds -----------------------------------------

SYNC = "cpu 8x8 matmul with sync, 3 runs: min 1.000µs median 2.000µs"


@pytest.mark.parametrize("colour", [
    "\x1b[32m{}\x1b[0m", "\x1b[1;38;5;208m{}\x1b[m", "\x1b]0;bench\x07{}", "\x1b]8;;http://x\x1b\\{}",
    "{}\x1b[K", "\x1b(B{}"])
def test_ansi_escapes_are_stripped_before_matching(colour: str) -> None:
    text = colour.format(SYNC) + "\n" + colour.format("# samples cpu 8x8 matmul with sync: 1e-06")
    result = parse_text(text)
    assert [(f.label, f.stat, f.value) for f in result.figures] == [
        ("cpu", "min", 1e-6), ("cpu", "median", 2e-6)]
    assert result.unknown == [] and result.samples[0].values == (1e-6,)
    assert result.samples[0].summary_line == 1


@pytest.mark.parametrize("values", ["١ ٢", "５", "1_000", "nan", "inf", "-1e-06", "1e-06 +1",
                                    "1e999", "0x10", "1e-06 ٣"])
def test_samples_are_ascii_decimals_or_the_line_is_unknown(values: str) -> None:
    line = f"# samples cpu 8x8 matmul with sync: {values}"
    result = parse_text(f"{SYNC}\n{line}")
    assert result.samples == [] and result.unknown == [(2, line)]


def test_sample_forms_the_programs_print_are_numbers() -> None:
    result = parse_text(f"{SYNC}\n# samples cpu 8x8 matmul with sync: 1e-06 2.5E-6 0.0 3 .5 4.")
    assert result.samples[0].values == (1e-6, 2.5e-6, 0.0, 3.0, 0.5, 4.0)


@pytest.mark.parametrize("line", [
    "cuda 8x8 matmul device time (profile, no flush): 21 of 20 read as no time",
    "cuda 8x8 matmul energy (nvml): nan J, 20 runs, 1.000s",
    "cuda 8x8 matmul energy (nvml): -1.000 J, 20 runs, 1.000s",
    "cuda 8x8 matmul energy (nvml): ５ J, 20 runs, 1.000s",
    "cuda 8x8 matmul with sync, ２ runs: min 1.000µs median 2.000µs",
    "cpu: device init １.000ms",
])
def test_impossible_counts_and_non_ascii_numbers_are_unknown(line: str) -> None:
    result = parse_text(line)
    assert result.figures == [] and result.unknown == [(1, line)]


def test_lines_the_contract_allows_are_figures_however_odd() -> None:
    text = "\n".join(["cpu 8x8 matmul with sync, 3 runs: min 0.000ns median 1.000ns",
                      "cpu 8x8 matmul no sync, 3 runs: min 2.000µs median 1.000µs",
                      "cuda 8x8 matmul device time (profile, no flush): 20 of 20 read as no time",
                      "cuda 8x8 matmul energy (nvml): 0.000 J, 0 runs, 0.000ns"])
    result = parse_text(text)
    assert result.unknown == [] and len(result.figures) == 7


def test_read_log_is_bounded(tmp_path: Path) -> None:
    big = tmp_path / "big.log"
    big.write_bytes(b"x" * 2049)
    with pytest.raises(InputError, match=r"big\.log: larger than the 0 MiB"):
        read_log(big, cap=2048)
    with pytest.raises(InputError, match=r"/dev/zero: larger than"):
        read_log(Path("/dev/zero"), cap=3 * 2**20 + 5)  # read in chunks, up to the cap
    assert read_log(big, cap=2049) == "x" * 2049
    with pytest.raises(InputError, match="cannot read log"):
        read_log(tmp_path)


def test_wrote_label_of_a_coloured_line() -> None:
    from orchestrator.data.parse import wrote_label

    assert wrote_label("\x1b[1mflex 256x256 matmul accuracy: wrote /tmp/x\x1b[0m") == "flex"


def test_a_label_with_bytes_that_are_not_utf8_is_an_unknown_line() -> None:
    """`\\xff\\xfecpu` decodes to `��cpu`: it was kept as a figure of a device named so. A
    label (or op) holding U+FFFD names no device: the line is unknown, counted and shown."""
    raw = b"\xff\xfecpu 8x8 matmul with sync, 20 runs: min 1.0ms median 1.1ms\n" \
          b"cpu 8x8 matmul with sync, 20 runs: min 1.0ms median 1.1ms\n" \
          b"cpu 8x8 mat\xffmul with sync, 20 runs: min 1.0ms median 1.1ms\n"
    parsed = parse_text(raw.decode("utf-8", "replace"))
    assert {f.label for f in parsed.figures} == {"cpu"}
    assert [n for n, _line in parsed.unknown] == [1, 3]
