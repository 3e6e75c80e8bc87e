"""The report: the chapter's tables from its own listings, and warnings, CIs and ratios.

Two datasets: the chapter's listings parsed (tests/data/chapter_listings.log), whose tables
must show the chapter's numbers exactly; and a synthetic results-store dataset with raw
samples, load, failed and skipped runs and accuracy comparisons from real arrays.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest

from orchestrator.data import accuracy
from orchestrator.data.accuracy import Arrays
from orchestrator.data.dataset import COLUMNS, SAMPLE_COLUMNS, Dataset, from_parse
from orchestrator.data.durations import format_duration
from orchestrator.data.parse import parse_text
from orchestrator.report import writer as report
from orchestrator.report.checks import Thresholds
from orchestrator.stats.spread import median_ci
from tests.data.test_accuracy import chapter_inputs, reversed_sum

from ..conftest import PROJECT

DATA = PROJECT / "tests" / "data"
INT_COLUMNS = ("runs", "threads", "process", "iteration", "threads_requested", "line_no", "idx",
               "summary_line")


# ---- the chapter ----------------------------------------------------------------------------


def chapter_dataset() -> Dataset:
    log = DATA / "chapter_listings.log"
    return from_parse(parse_text(log.read_text(encoding="utf-8")), log.name)


@pytest.fixture(scope="module")
def chapter(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("chapter")
    report.write(chapter_dataset(), out)
    return out


def csv(out: Path, name: str, index: str) -> pd.DataFrame:
    """A table's CSV as strings, indexed by its first column."""
    frame = pd.read_csv(out / f"{name}.csv", dtype=str, keep_default_na=False)
    return frame.set_index(index)


def test_chapter_writes_every_table_and_plot(chapter: Path) -> None:
    names = {p.name for p in chapter.iterdir()}
    assert {"report.md", "methods.csv", "first_call.csv", "cpu_threads.csv", "accuracy.csv",
            "warmup.csv", "ratios.csv", "methods.png", "cpu_threads.png", "first_call.png",
            "warmup.png"} <= names
    assert "spread.csv" not in names  # no raw samples in the chapter's listings


def test_chapter_methods_table(chapter: Path) -> None:
    t = csv(chapter, "methods", "method")
    assert list(t.columns) == ["PyTorch mps min", "PyTorch mps median", "burn metal min",
                               "burn metal median"]
    assert list(t.index) == ["no sync", "with sync", "device time", "device time without flush",
                             "read-back", "1-min load before → after"]
    assert t.loc["no sync", "PyTorch mps min"] == "28.166µs"
    assert t.loc["no sync", "burn metal min"] == "791.000ns"
    assert t.loc["with sync", "burn metal min"] == "651.666µs"
    assert t.loc["with sync", "PyTorch mps median"] == "1.118ms"
    assert t.loc["device time", "burn metal median"] == "429.334µs"
    assert t.loc["device time without flush", "burn metal min"] == "20 of 20 read no time"
    assert t.loc["device time without flush", "PyTorch mps min"] == ""
    assert t.loc["read-back", "PyTorch mps min"] == "592.459µs"
    assert t.loc["1-min load before → after", "burn metal min"] == "not recorded"


def test_chapter_first_call_table(chapter: Path) -> None:
    t = pd.read_csv(chapter / "first_call.csv", dtype=str, keep_default_na=False)
    assert list(t.columns) == ["framework", "device", "process", "cache", "device init",
                               "first call returned", "first call after sync"]
    rows = [list(r) for r in t.itertuples(index=False)]
    assert rows == [
        ["burn", "metal", "1", "", "16.118ms", "10.875µs", "3.600s"],
        ["burn", "metal", "2", "", "16.615ms", "12.584µs", "108.038ms"],
        ["PyTorch", "mps", "1", "", "79.764ms", "130.549ms", "132.103ms"],
        ["PyTorch", "mps", "2", "", "79.016ms", "12.708ms", "14.194ms"],
    ]


def test_chapter_cpu_table(chapter: Path) -> None:
    t = csv(chapter, "cpu_threads", "build")
    assert list(t.columns) == ["1 thread", "8 threads", "BLAS"]
    assert t.to_dict("index") == {
        "PyTorch CPU": {"1 thread": "832.209µs", "8 threads": "816.875µs", "BLAS": ""},
        "burn Flex, template": {"1 thread": "21.637ms", "8 threads": "single thread only",
                                "BLAS": ""},
        "burn Flex, default features": {"1 thread": "21.455ms", "8 threads": "4.114ms",
                                        "BLAS": ""},
        "burn Flex + apple-amx": {"1 thread": "3.477ms", "8 threads": "1.430ms", "BLAS": ""},
    }
    first = csv(chapter, "cpu_first_call", "build")
    assert first.loc["burn Flex + apple-amx"].to_dict() == {"1 thread": "5.127ms",
                                                            "8 threads": "3.004ms"}


def test_chapter_accuracy_table(chapter: Path) -> None:
    t = csv(chapter, "accuracy", "build")
    assert list(t.columns) == ["max|x - f64 ref|", "max|x - torch cpu|"]
    assert list(t.index) == ["torch cpu", "torch mps", "burn flex template", "burn flex default",
                             "burn flex apple-amx", "burn metal"]
    assert t.loc["torch cpu"].tolist() == ["2.008e-06", "0.000e+00"]
    assert t.loc["burn metal"].tolist() == ["2.227e-06", "2.027e-06"]
    md = (chapter / "report.md").read_text(encoding="utf-8")
    assert "max |ref| = 1.095" in md
    assert "Bit-for-bit equality is not recorded" in md


def test_chapter_warmup_table(chapter: Path) -> None:
    t = pd.read_csv(chapter / "warmup.csv", dtype=str, keep_default_na=False)
    assert [list(r) for r in t.itertuples(index=False)] == [
        ["cold", "dropped", "3.843s", "694.125µs", "658.250µs"],
        ["cold", "kept", "3.379s", "748.875µs", "661.167µs"],
        ["warm", "dropped", "105.686ms", "2.016ms", "1.904ms"],
    ]
    assert list(t.columns) == ["cache", "warm-up", "run 0", "run 1", "run 2"]


def test_chapter_ratios_without_samples(chapter: Path) -> None:
    t = pd.read_csv(chapter / "ratios.csv", dtype=str, keep_default_na=False)
    device = t[(t["burn"] == "burn metal") & (t["method"] == "device time")].iloc[0]
    assert device["PyTorch"] == "PyTorch mps"
    assert device["min ratio"] == "1.02×"  # 427.375 / 419.333: the chapter's "almost the same"
    assert device["median ratio 95% CI"] == "no samples"
    amx = t[t["burn"] == "burn Flex + apple-amx, 8 threads"].iloc[0]
    assert amx["PyTorch"] == "PyTorch CPU, 8 threads"
    assert amx["min ratio"] == "1.75×"  # the chapter: still 1.7 times slower than PyTorch


def section(md: str, title: str) -> str:
    """The text of one '## ' section of report.md."""
    start = md.index(f"## {title}")
    end = md.find("\n## ", start + 1)
    return md[start:end if end > 0 else None]


def test_chapter_warnings(chapter: Path) -> None:
    md = (chapter / "report.md").read_text(encoding="utf-8")
    methods = section(md, "1. Timing methods")
    assert ("**call overhead**: burn metal no sync (min 791.000ns) is 0.12% of with sync "
            "(min 651.666µs)") in methods
    assert "**call overhead**: PyTorch mps no sync (min 28.166µs)" in methods
    assert ("**profile read no time**: burn metal device time without flush: 20 of 20 runs "
            "read as no time") in methods
    assert "**wide spread**: PyTorch mps with sync: median 1.118ms is 2.09× the min" in methods
    assert "**under load**" not in md  # a log carries no load
    first = section(md, "2. First call")
    assert "burn metal process 1: 3.600s is 5524× the with-sync min 651.666µs" in first
    assert "the call returned after 10.875µs, so the cost was paid at the sync" in first
    assert "PyTorch mps process 1" in first and "paid inside the call" in first
    cpu = section(md, "3. CPU builds")
    assert "**threads without effect**: PyTorch CPU is 1.02× faster at 8 threads" in cpu
    assert "CPU sync mismatch" not in cpu  # the chapter's no sync and with sync agree
    warm = section(md, "5. The warm-up puzzle")
    assert "cold cache, warm-up dropped: run 0 took 3.843s, 5536× run 1 (694.125µs)" in warm
    assert warm.count("**first timed run swallowed setup**") == 3
    # a section with nothing to show is left out; an empty failures list is said at the top
    assert "## 7. Runs skipped" not in md
    assert "- Runs skipped or failed: none (every run succeeded)." in section(md, "Findings")


def test_chapter_markdown_escapes_pipes(chapter: Path) -> None:
    md = (chapter / "report.md").read_text(encoding="utf-8")
    assert "| build | max\\|x - f64 ref\\| | max\\|x - torch cpu\\| |" in md
    assert "| with sync | 535.250µs | 1.118ms | 651.666µs | 688.791µs |" in md
    assert "![1. Timing methods on the accelerator](methods.png)" in md


def test_chapter_report_matches_the_reviewed_copy(chapter: Path) -> None:
    """The whole report.md for the chapter, as reviewed; REPORT_GOLDEN_UPDATE=1 rewrites it."""
    golden = DATA / "report_chapter.md"
    text = (chapter / "report.md").read_text(encoding="utf-8")
    if os.environ.get("REPORT_GOLDEN_UPDATE") == "1":
        golden.write_text(text, encoding="utf-8")
    assert text == golden.read_text(encoding="utf-8")


# ---- a synthetic results store --------------------------------------------------------------

class Store:
    """Rows as dataset.load makes them: one run context per run, one row per figure."""

    def __init__(self) -> None:
        self.figures: list[dict[str, Any]] = []
        self.samples: list[dict[str, Any]] = []
        self.rng = np.random.default_rng(7)  # per store: the same data every time

    def run(self, run_id: str, experiment: str, framework: str, label: str, device: str,
            **ctx: Any) -> dict[str, Any]:
        return {"run_id": run_id, "experiment": experiment, "framework": framework,
                "label": label, "device": device, "shape": "1024x1024", "op": "matmul",
                "status": "ok", "role": "measure", "expect_failure": False, "sweep_id": "s1",
                "cache": "", "warmup": "", **ctx}

    def add(self, run: dict[str, Any], method: str, stat: str, value: float,
            **extra: Any) -> None:
        self.figures.append({**run, "method": method, "stat": stat, "value_s": value,
                             "line_no": len(self.figures) + 1, **extra})

    def summary(self, run: dict[str, Any], method: str, base: float, spread: float = 0.1,
                n: int = 20) -> np.ndarray:
        """min and median rows and the raw samples behind them."""
        values = base * (1 + spread * self.rng.random(n))
        values[0] = base  # the min is exactly `base`
        line = len(self.figures) + 1  # min and median come from one summary line
        self.add(run, method, "min", float(values.min()), runs=n, line_no=line)
        self.add(run, method, "median", float(np.median(values)), runs=n, line_no=line)
        self.samples += [{"run_id": run["run_id"], "experiment": run["experiment"],
                          "label": run["label"], "shape": run["shape"], "method": method,
                          "idx": i, "value_s": float(v), "sweep_id": "s1",
                          "summary_line": line}
                         for i, v in enumerate(values)]
        return values

    def dataset(self, host: dict[str, Any]) -> Dataset:
        figures = pd.DataFrame(self.figures, columns=COLUMNS)
        samples = pd.DataFrame(self.samples, columns=SAMPLE_COLUMNS)
        for frame in (figures, samples):
            for col in INT_COLUMNS:
                if col in frame:
                    frame[col] = frame[col].astype("Int64")
        return Dataset(figures, samples, pd.DataFrame(), host)


def _methods(s: Store) -> dict[str, np.ndarray]:
    quiet = {"load1_before": 0.5, "load1_after": 0.7}
    tc = s.run("t-cuda", "methods", "torch", "cuda", "cuda", threads_requested=None, **quiet)
    bc = s.run("b-cuda", "methods", "burn", "cuda", "cuda", cache="warm",
               load1_before=6.5, load1_after=5.25)
    out = {"torch no_sync": s.summary(tc, "no_sync", 30e-6),
           "torch with_sync": s.summary(tc, "with_sync", 500e-6),
           "torch device_time": s.summary(tc, "device_time", 400e-6)}
    s.summary(tc, "readback", 550e-6)
    s.summary(tc, "timer", 510e-6)
    out["burn no_sync"] = s.summary(bc, "no_sync", 1e-6)
    out["burn with_sync"] = s.summary(bc, "with_sync", 600e-6, spread=2.0)
    out["burn device_time"] = s.summary(bc, "device_time", 420e-6)
    s.summary(bc, "device_time_no_flush", 410e-6, n=15)
    s.add(bc, "device_time_no_flush", "no_time_count", 5.0, runs=20)
    s.summary(bc, "readback", 650e-6)
    return out


def _first_call(s: Store) -> None:
    for process, cache, after in ((1, "cold", 3.0), (2, "warm", 0.1)):
        run = s.run(f"b-first-{process}", "first-call", "burn", "cuda", "cuda", cache=cache,
                    process=process, load1_before=0.4, load1_after=0.4)
        s.add(run, "device_init", "value", 0.015)
        s.add(run, "first_call_returned", "value", 11e-6)
        s.add(run, "first_call_after_sync", "value", after)
        s.summary(run, "with_sync", 700e-6, n=5)  # fewer reps: the methods run wins


def _cpu(s: Store) -> None:
    for threads, reported in ((1, 1), (4, 2)):
        run = s.run(f"t-cpu-{threads}", "cpu", "torch", "cpu", "cpu", threads=reported,
                    threads_requested=threads, load1_before=1.0, load1_after=1.0)
        s.summary(run, "no_sync", 0.9e-3 * (1.1 if threads == 4 else 1.0))
        s.summary(run, "with_sync", 0.9e-3)
    template = s.run("b-tpl", "cpu", "burn", "flex(template)", "cpu", threads_requested=1)
    s.summary(template, "with_sync", 21e-3)
    for label in ("flex", "flex+x86-v4"):
        for threads in (1, 4):
            run = s.run(f"b-{label}-{threads}", "cpu", "burn", label, "cpu", threads=threads,
                        threads_requested=threads)
            s.add(run, "first_call", "value", 5e-3 / threads)
            s.summary(run, "no_sync", 20e-3 / threads / (1 + (label != "flex")))
            s.summary(run, "with_sync", 20e-3 / threads / (1 + (label != "flex")))


def _accuracy(s: Store) -> None:
    a, b = chapter_inputs(32)
    burn = reversed_sum(a, b)
    other = a.copy()
    other[1, 1] += np.float32(1e-3)
    builds = [("torch", "cpu", a, a @ b), ("torch", "cuda", a, (a @ b).copy()),
              ("burn", "flex(template)", a, burn), ("burn", "flex", a, burn.copy()),
              ("burn", "cuda", other, other @ b)]
    entries = [Arrays(f"{fw} {label}", f"acc-{fw}-{label}", x, b, c)
               for fw, label, x, c in builds]
    for comp, (fw, label, _x, _c) in zip(accuracy.compare(entries), builds, strict=True):
        run = s.run(comp.run_id, "accuracy", fw, label, "cpu" if "flex" in label else label,
                    shape=comp.shape, method_text=comp.name)
        stats = {"max_err_f64_ref": comp.max_err_f64_ref,
                 "max_diff_torch_cpu": comp.max_diff_torch_cpu, "max_abs_ref": comp.max_abs_ref,
                 "inputs_match_torch_cpu": comp.inputs_match_torch_cpu,
                 "bitwise_group": comp.bitwise_group}
        for stat, value in stats.items():
            s.add(run, "accuracy", stat, float(value))


def _warmup_and_failures(s: Store) -> None:
    for cache, warmup, first in (("cold", "dropped", 3.8), ("cold", "kept", 3.4),
                                 ("warm", "dropped", 0.004)):
        run = s.run(f"w-{cache}-{warmup}", "warmup", "burn", "cuda", "cuda", shape=None,
                    cache=cache, warmup=warmup)
        for i, value in enumerate((first, 0.7e-3, 0.66e-3)):
            s.add(run, "warmup_timed_run", "value", value, iteration=i)
    s.figures.append({**s.run("b-acc", "failed-build", "burn", "", "flex", build="accelerate",
                              threads_requested=8),
                      "status": "failed", "expect_failure": True,
                      "reason": "build failed: error: failed to select a version for blas-src"})
    s.figures.append({**s.run("t-mps", "methods", "torch", "", "mps"), "status": "skipped",
                      "reason": "needs Apple silicon with MPS (this is Linux x86_64)"})


def synthetic_dataset() -> tuple[Dataset, dict[str, np.ndarray]]:
    s = Store()
    samples = _methods(s)
    _first_call(s)
    _cpu(s)
    _accuracy(s)
    _warmup_and_failures(s)
    host = {"torch": {"blas": "mkl", "version": "2.4.0"}, "cpu_model": "Test CPU",
            "os": "Linux 6.1", "burn": "0.22.1"}
    return s.dataset(host), samples


@pytest.fixture(scope="module")
def synthetic(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, np.ndarray]]:
    out = tmp_path_factory.mktemp("synthetic")
    data, samples = synthetic_dataset()
    written = report.write(data, out)
    assert all(p.exists() for p in written)
    return out, samples


def test_synthetic_methods_table(synthetic: tuple[Path, dict[str, np.ndarray]]) -> None:
    out, samples = synthetic
    t = csv(out, "methods", "method")
    assert list(t.index) == ["no sync", "with sync", "device time", "device time without flush",
                             "read-back", "benchmark.Timer", "1-min load before → after"]
    assert t.loc["with sync", "PyTorch cuda min"] == "500.000µs"
    # burn's with sync comes from the 20-rep methods run, not the 5-rep first-call runs.
    assert t.loc["with sync", "burn cuda min"] == "600.000µs"
    assert t.loc["with sync", "burn cuda median"] == format_duration(
        float(np.median(samples["burn with_sync"])))
    assert t.loc["device time without flush", "burn cuda min"] == "410.000µs (5 of 20 read no time)"
    assert t.loc["1-min load before → after", "burn cuda min"] == "6.50 → 5.25"
    assert t.loc["1-min load before → after", "PyTorch cuda min"] == "0.50 → 0.70"
    assert t.loc["benchmark.Timer", "burn cuda min"] == ""


def test_synthetic_warnings(synthetic: tuple[Path, dict[str, np.ndarray]]) -> None:
    out, _ = synthetic
    md = (out / "report.md").read_text(encoding="utf-8")
    methods = section(md, "1. Timing methods")
    assert "**call overhead**: burn cuda no sync" in methods
    assert "**profile read no time**: burn cuda device time without flush: 5 of 20" in methods
    assert "**under load**: burn cuda (methods) ran at a 1-minute load of 6.50 before" in methods
    assert "PyTorch cuda (methods) ran" not in methods
    spread = [w for w in methods.splitlines() if "**wide spread**: burn cuda with sync" in w]
    assert len(spread) == 1 and "IQR" in spread[0] and "of the median" in spread[0]
    cpu = section(md, "3. CPU builds")
    assert "**threads**: PyTorch CPU asked for 4 threads but reported 2." in cpu
    assert "**CPU sync mismatch**: PyTorch CPU at 4 threads min no sync 990.000µs vs with " \
           "sync 900.000µs" in cpu
    assert "PyTorch CPU at 1 thread " not in cpu
    assert "**threads without effect**: PyTorch CPU is 1.00× faster at 4 threads" in cpu
    assert "burn Flex, default features is" not in cpu  # 4 threads, 4× faster: fine
    first = section(md, "2. First call")
    # its own run's with-sync min (700 µs, 5 reps), not the methods run's 600 µs
    assert "burn cuda process 1, cold cache: 3.000s is 4286× the with-sync min 700.000µs; the " \
           "call returned after 11.000µs, so the cost was paid at the sync." in first
    warm = section(md, "5. The warm-up puzzle")
    assert "cuda, cold cache, warm-up dropped: run 0 took 3.800s" in warm
    assert warm.count("**first timed run swallowed setup**") == 2  # warm: 4 ms is only 6×


def test_synthetic_thresholds_are_parameters(tmp_path: Path) -> None:
    data, _ = synthetic_dataset()
    report.write(data, tmp_path, thresholds=Thresholds(load1=10.0, spread=100.0))
    md = (tmp_path / "report.md").read_text(encoding="utf-8")
    assert "**under load**" not in md and "**wide spread**" not in md
    assert "**call overhead**" in md


def test_synthetic_cpu_table(synthetic: tuple[Path, dict[str, np.ndarray]]) -> None:
    out, _ = synthetic
    t = csv(out, "cpu_threads", "build")
    assert list(t.columns) == ["1 thread", "4 threads", "BLAS"]
    assert t.loc["PyTorch CPU"].tolist() == ["900.000µs", "900.000µs", "mkl"]
    assert t.loc["burn Flex, template"].tolist() == ["21.000ms", "single thread only", ""]
    assert t.loc["burn Flex + x86-v4"].tolist() == ["10.000ms", "2.500ms", ""]
    first = csv(out, "cpu_first_call", "build")
    assert first.loc["burn Flex, default features"].tolist() == ["5.000ms", "1.250ms"]


def test_synthetic_accuracy(synthetic: tuple[Path, dict[str, np.ndarray]]) -> None:
    out, _ = synthetic
    t = csv(out, "accuracy", "build")
    assert list(t.columns) == ["max|x - f64 ref|", "max|x - torch cpu|", "max |ref|",
                               "bit-for-bit group", "inputs = torch cpu's"]
    assert t["bit-for-bit group"].to_dict() == {
        "torch cpu": "A", "torch cuda": "A", "burn flex(template)": "B", "burn flex": "B",
        "burn cuda": "C"}
    assert t["inputs = torch cpu's"].tolist() == ["yes", "yes", "yes", "yes", "no"]
    assert t.loc["torch cpu", "max|x - torch cpu|"] == "0.000e+00"
    md = section((out / "report.md").read_text(encoding="utf-8"), "4. Same numbers")
    assert "Bit-for-bit identical: torch cpu = torch cuda; burn flex(template) = burn flex." in md
    assert "Unlike any other build: burn cuda." in md
    assert "**inputs differ**: burn cuda: sin/cos inputs not bit-equal to torch cpu's" in md
    assert "**inaccurate**" not in md


def test_synthetic_failures(synthetic: tuple[Path, dict[str, np.ndarray]]) -> None:
    out, _ = synthetic
    t = pd.read_csv(out / "failures.csv", dtype=str, keep_default_na=False)
    assert [list(r) for r in t.itertuples(index=False)] == [
        ["failed", "failed-build", "burn flex (build accelerate), threads 8",
         "build failed: error: failed to select a version for blas-src", "yes"],
        ["skipped", "methods", "torch mps", "needs Apple silicon with MPS (this is Linux x86_64)",
         ""],
    ]


def test_synthetic_spread_ci(synthetic: tuple[Path, dict[str, np.ndarray]]) -> None:
    out, samples = synthetic
    t = pd.read_csv(out / "spread.csv", dtype=str, keep_default_na=False)
    row = t[(t["run"] == "burn cuda, warm cache") & (t["method"] == "with sync") &
            (t["experiment"] == "methods")].iloc[0]
    values = np.sort(samples["burn with_sync"])
    assert row["n"] == "20"
    # n = 20: the order-statistic 95% interval is [x(6), x(15)] (coverage 95.9%)
    assert row["median 95% CI"] == f"{format_duration(values[5])} – {format_duration(values[14])}"
    assert row["median"] == format_duration(float(np.median(values)))
    short = t[(t["experiment"] == "first-call")]
    assert short["run"].tolist() == ["burn cuda, cold cache", "burn cuda, process 2, warm cache"]
    assert short["n"].tolist() == ["5", "5"]
    assert short["median 95% CI"].tolist() == ["n too small", "n too small"]


def test_synthetic_ratios(synthetic: tuple[Path, dict[str, np.ndarray]]) -> None:
    out, samples = synthetic
    t = pd.read_csv(out / "ratios.csv", dtype=str, keep_default_na=False)
    row = t[(t["burn"] == "burn cuda") & (t["method"] == "with sync")].iloc[0]
    assert row["PyTorch"] == "PyTorch cuda"
    assert row["min ratio"] == "1.20×"
    ratio = np.median(samples["burn with_sync"]) / np.median(samples["torch with_sync"])
    assert row["median ratio"] == f"{ratio:.2f}×"
    lo, hi = (float(x.rstrip("×")) for x in row["median ratio 95% CI"].split(" – "))
    assert lo <= round(ratio, 2) <= hi
    assert "no sync" not in set(t["method"])  # issuing costs are not compared
    cpu = t[t["burn"] == "burn Flex + x86-v4, 4 threads"].iloc[0]
    assert cpu["PyTorch"] == "PyTorch CPU, 4 threads" and cpu["min ratio"] == "2.78×"


def test_ratio_ci_is_deterministic(synthetic: tuple[Path, dict[str, np.ndarray]],
                                   tmp_path: Path) -> None:
    out, _ = synthetic
    data, _ = synthetic_dataset()
    report.write(data, tmp_path)
    assert (tmp_path / "ratios.csv").read_text() == (out / "ratios.csv").read_text()


def test_median_ci_coverage_rule() -> None:
    x = np.arange(1.0, 21.0)
    assert median_ci(x) == (6.0, 15.0)
    assert median_ci(np.arange(1.0, 6.0)) is None  # 5 samples cannot give 95%
    assert median_ci(np.arange(1.0, 7.0)) == (1.0, 6.0)


def test_empty_dataset_says_why(tmp_path: Path) -> None:
    data = Dataset(pd.DataFrame(columns=COLUMNS), pd.DataFrame(columns=SAMPLE_COLUMNS),
                   pd.DataFrame(), {})
    written = report.write(data, tmp_path)
    assert [p.name for p in written] == ["report.md", "report.html"]
    md = (tmp_path / "report.md").read_text(encoding="utf-8")
    # every table missing: each named once, under the findings; no section of "No table"
    assert "No table" not in md and "## 1. Timing methods" not in md
    assert "Not measured here (no accelerator run in this data: no GPU, or none asked for): " \
        "Timing methods on the accelerator (no accelerator runs in this " \
        "data); Energy per matmul (NVML)" in md
    assert "- `methods.png`: no accelerator timing figures in this data." in md


def test_a_build_printing_another_builds_label_keeps_its_own_row(tmp_path: Path) -> None:
    """The chapter's accelerate build prints plain 'flex'; it must not merge with 'default'."""
    s = Store()
    for build, experiment, expect in (("default", "cpu", False),
                                      ("accelerate", "failed-build", True)):
        run = s.run(f"b-{build}", experiment, "burn", "flex", "cpu", build=build, threads=2,
                    threads_requested=2, expect_failure=expect)
        s.summary(run, "with_sync", 4e-3 if build == "default" else 9e-3)
    report.write(s.dataset({}), tmp_path)
    t = csv(tmp_path, "cpu_threads", "build")
    assert t["2 threads"].to_dict() == {"burn Flex, default features": "4.000ms",
                                        "burn Flex, default features [accelerate build]": "9.000ms"}
    md = section((tmp_path / "report.md").read_text(encoding="utf-8"), "7. Runs skipped")
    assert ("**expected to fail, but ran**: burn cpu (build accelerate), threads 2 "
            "(failed-build)") in md


def test_log_samples_follow_their_own_section(tmp_path: Path) -> None:
    """A log has one run_id: samples of the same label and method go with their own run."""
    log = (
        "### torch cpu threads 1\n"
        "cpu 64x64 matmul with sync, 6 runs: min 1.000ms median 3.500ms\n"
        "# samples cpu 64x64 matmul with sync: 0.001 0.002 0.003 0.004 0.005 0.006\n"
        "### torch cpu threads 8\n"
        "cpu 64x64 matmul with sync, 6 runs: min 10.000µs median 35.000µs\n"
        "# samples cpu 64x64 matmul with sync: 1e-05 2e-05 3e-05 4e-05 5e-05 6e-05\n"
        "### burn flex default features, RAYON_NUM_THREADS=8\n"
        "flex 64x64 matmul with sync, 6 runs: min 20.000µs median 70.000µs\n"
        "# samples flex 64x64 matmul with sync: 2e-05 4e-05 6e-05 8e-05 0.0001 0.00012\n"
    )
    report.write(from_parse(parse_text(log), "x.log"), tmp_path)
    t = pd.read_csv(tmp_path / "spread.csv", dtype=str, keep_default_na=False)
    assert t[["run", "median", "median 95% CI"]].values.tolist() == [
        ["PyTorch CPU, 1 thread", "3.500ms", "1.000ms – 6.000ms"],
        ["PyTorch CPU, 8 threads", "35.000µs", "10.000µs – 60.000µs"],
        ["burn Flex, default features, 8 threads", "70.000µs", "20.000µs – 120.000µs"],
    ]
    ratios = pd.read_csv(tmp_path / "ratios.csv", dtype=str, keep_default_na=False)
    assert ratios[["burn", "PyTorch", "min ratio", "median ratio"]].values.tolist() == [
        ["burn Flex, default features, 8 threads", "PyTorch CPU, 8 threads", "2.00×", "2.00×"]]
    assert ratios["median ratio 95% CI"].iloc[0] != "no samples"
