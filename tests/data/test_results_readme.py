"""Each results folder's README claims checked against that folder's own CSVs.

`CLAIMS` maps a folder of docs/results to its README and the checks of the numbers that README
states; each check reads the folder's committed dataset.csv here, rounded the way the README
writes it, so an edited README or a re-made sweep that no longer says the same fails. A folder
with a README and a dataset.csv is either in `CLAIMS` or in `UNCHECKED` with the reason
(`test_every_results_folder_is_claimed_or_excused`). For a re-made folder, re-point
its entry's checks at what its README then says (`_h200_*`: h200-2026-12-01/README.md).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path
from typing import NamedTuple

import numpy as np
import pandas as pd
import pytest

from ..conftest import PROJECT

RESULTS = PROJECT / "docs" / "results"
Check = Callable[[pd.DataFrame, str], None]


def _row(readme: str, head: str) -> list[str]:
    for line in readme.splitlines():
        if line.startswith(f"| {head}"):
            cells = re.split(r"(?<!\\)\|", line.strip().strip("|"))  # `\|` is a cell's own
            return [cell.strip() for cell in cells][1:]
    raise AssertionError(f"no README row starting {head!r}")


def _us(value: float) -> str:
    us = value * 1e6
    return f"{us:.2f} µs" if us < 10 else f"{us:.1f} µs"


def _h200_clock_table(csv: pd.DataFrame, readme: str) -> None:
    m = csv[(csv["experiment"] == "methods") & (csv["device"] == "cuda")
            & (csv["shape"] == "1024x1024") & (csv["role"] == "measure") & (csv["stat"] == "min")]
    sides = [m[(m["framework"] == "torch") & (m["precision"] == "fp32")],
             m[(m["framework"] == "torch") & (m["precision"] == "tf32")],
             m[m["framework"] == "burn"]]
    for head, method in (("no sync", "no_sync"), ("with sync", "with_sync"),
                         ("device time, as the chapter", "device_time"),
                         ("device time, launch gap kept out", "device_time_queued"),
                         ("read-back", "readback")):
        cells = _row(readme, head)
        for cell, side in zip(cells, sides, strict=True):
            value = side[side["method"] == method]["value_s"]
            assert len(value) == 1, (head, cell)
            assert cell == _us(float(value.iloc[0])), (head, cell, float(value.iloc[0]))


def _h200_cold_order(csv: pd.DataFrame, readme: str) -> None:
    cold = csv[(csv["experiment"] == "first-call") & (csv["framework"] == "burn")
               & (csv["cache"] == "cold") & (csv["method"] == "first_call_after_sync")]
    in_order = ", ".join(f"{v:.1f}" for v in cold["value_s"])  # the CSV keeps run order
    cell = _row(readme, "burn first call after sync")[0]
    assert "in run order" in readme and cell.startswith(f"{in_order} s;"), (cell, in_order)
    warm = csv[(csv["experiment"] == "first-call") & (csv["framework"] == "burn")
               & (csv["cache"] == "warm") & (csv["method"] == "first_call_after_sync")]
    low, high = warm["value_s"].min(), warm["value_s"].max()
    assert f"{low:.2f}-{high:.2f} s" in cell
    priming = csv[(csv["role"] == "priming") & (csv["method"] == "first_call_after_sync")]
    assert f"{float(priming['value_s'].iloc[0]):.1f} s" in cell


def _h200_accuracy(csv: pd.DataFrame, readme: str) -> None:
    cell = _row(readme, "max\\|x - f64 ref\\|")[0]
    numbers = re.findall(r"[0-9.]+e-[0-9]+", cell)
    assert len(numbers) == 5, cell
    errors = csv[csv["stat"] == "max_err_f64_ref"]["value_s"].astype(float)
    for text in numbers:
        assert any(f"{e:.2e}".replace("e-0", "e-") == text for e in errors), text


def _h200_headline(csv: pd.DataFrame, readme: str) -> None:
    """The headline ratio: burn / PyTorch TF32 on kernel time, ncu / ncu, ratio of medians."""
    m = csv[(csv["experiment"] == "methods") & (csv["stat"] == "median") & (csv["device"] == "cuda")
            & (csv["precision"] == "tf32")]
    # the measured run's own clocks; ncu's figures come from the profile run
    m = m[(m["role"] == "measure") | (m["profiler"] == "ncu")]
    def ratio(method: str, profiler: str | None = None) -> float:
        rows = m[(m["method"] == method) & m["kernel"].isna()]
        rows = rows[rows["profiler"] == profiler] if profiler else rows[rows["profiler"].isna()]
        by = dict(zip(rows["framework"], rows["value_s"], strict=True))
        return float(by["burn"]) / float(by["torch"])
    text = " ".join(readme.split())
    assert f"**burn / PyTorch = {ratio('kernel_time', 'ncu'):.2f}× on kernel time (ncu / ncu" \
        in text
    assert f"{ratio('device_time_queued'):.2f}× on the queued device time" in text
    assert f"{ratio('device_time'):.2f}× on the chapter's idle-stream device time" in text


# ---- docs/results/h200-2026-12-02-chapter/README.md ------------------------------------------


def _kernel_median(csv: pd.DataFrame, framework: str, precision: str, profiler: str) -> float:
    rows = csv[(csv["experiment"] == "methods") & (csv["method"] == "kernel_time")
               & (csv["stat"] == "median") & csv["kernel"].isna() & (csv["role"] != "priming")
               & (csv["framework"] == framework) & (csv["precision"] == precision)
               & (csv["profiler"] == profiler)]
    assert len(rows) == 1, (framework, precision, profiler, len(rows))
    return float(rows["value_s"].iloc[0])


def _chapter_kernel_ratios(csv: pd.DataFrame, readme: str) -> None:
    jax_tf32 = _kernel_median(csv, "jax", "tf32", "cupti") / _kernel_median(
        csv, "torch", "tf32", "cupti")
    jax_fp32 = _kernel_median(csv, "jax", "fp32", "cupti") / _kernel_median(
        csv, "torch", "fp32", "cupti")
    burn = _kernel_median(csv, "burn", "tf32", "ncu") / _kernel_median(csv, "torch", "tf32", "ncu")
    claim = (f"JAX/PyTorch kernel time {jax_tf32:.2f} (TF32, CUPTI/CUPTI), {jax_fp32:.2f} "
             f"(FP32); burn/PyTorch TF32 kernel {burn:.2f}× (ncu/ncu)")
    assert claim in " ".join(readme.split()), claim


def _chapter_jax_accuracy(csv: pd.DataFrame, readme: str) -> None:
    acc = csv[(csv["experiment"] == "accuracy") & (csv["stat"] == "max_err_f64_ref")
              & (csv["framework"] == "jax") & (csv["device"] == "cuda")]
    err = {(p, s): float(v) for p, s, v in zip(acc["precision"], acc["shape"], acc["value_s"],
                                                strict=True)}
    claim = (f"max error {err['tf32', '1024x1024']:.3e} at 1024² and "
             f"{err['tf32', '256x256']:.3e} at 256²").replace("e-0", "e-")
    text = " ".join(readme.split())
    assert claim in text, claim
    assert f"`precision: highest` is FP32 ({err['fp32', '256x256']:.3e} at 256²)".replace(
        "e-0", "e-") in text


def _chapter_first_call_breakdown(csv: pd.DataFrame, readme: str) -> None:
    rows = csv[(csv["experiment"] == "first-call") & (csv["framework"] == "jax")
               & (csv["device"] == "cuda") & (csv["precision"] == "tf32")
               & (csv["cache"] == "cold")]
    def span(method: str) -> pd.Series:
        return rows[rows["method"] == method]["value_s"].astype(float)
    lower, compile_, run = span("first_call_lower"), span("first_call_compile"), \
        span("first_call_run")
    claim = (f"trace and lower ~{lower.min() * 1e3:.0f}-{lower.max() * 1e3:.0f} ms, compile "
             f"~{compile_.min():.2f}-{compile_.max():.2f} s, "
             f"first run ~{run.median() * 1e3:.1f} ms")
    assert claim in " ".join(readme.split()), claim


def _tflops(csv: pd.DataFrame, framework: str, method: str) -> dict[int, float]:
    rows = csv[(csv["experiment"] == "sizes") & (csv["stat"] == "min") & (csv["device"] == "cuda")
               & (csv["framework"] == framework) & (csv["precision"] == "tf32")
               & (csv["method"] == method) & csv["kernel"].isna()]
    best = rows.groupby("shape")["value_s"].min()
    return {int(s.split("x")[0]): 2 * int(s.split("x")[0]) ** 3 / t / 1e12
            for s, t in best.items()}


def _chapter_sizes(csv: pd.DataFrame, readme: str) -> None:
    text = " ".join(readme.split())
    torch = _tflops(csv, "torch", "kernel_time")
    assert f"PyTorch TF32 kernel {torch[8192]:.0f} TFLOP/s at 8192²" in text
    assert f"({100 * torch[8192] / 494.5:.1f}% of the 494.5 dense peak)" in text
    burn = [v for n, v in _tflops(csv, "burn", "device_time_queued").items() if n >= 4096]
    assert f"burn cuda {min(burn):.0f}-{max(burn):.0f} TFLOP/s at 4096²-8192²" in text


# ---- docs/results/h200/README.md (re-made 2026-12-02) -----------------------------------------


def _remade_headline(csv: pd.DataFrame, readme: str) -> None:
    """The headline is the report's own ratios.csv row (burn / PyTorch TF32, ncu / ncu)."""
    ratios = pd.read_csv(RESULTS / "h200" / "report" / "ratios.csv")
    row = ratios[(ratios["method"] == "kernel time (ncu / ncu)")
                 & (ratios["candidate"] == "burn cuda [tf32]")].iloc[0]
    text = " ".join(readme.split())
    assert f"{row['median ratio']} (median ratio, ncu / ncu, 95% interval " \
        f"{row['median ratio 95% CI']})" in text


def _remade_stops(csv: pd.DataFrame, readme: str) -> None:
    counts = csv["stop_reason"].value_counts()
    text = " ".join(readme.split())
    for reason in ("target met", "noise floor", "time budget"):
        assert f"{counts[reason]} {'rows ' if reason == 'target met' else ''}`{reason}`" in text


def _remade_flushed(csv: pd.DataFrame, readme: str) -> None:
    m = csv[(csv["experiment"] == "methods") & (csv["method"] == "kernel_time")
            & (csv["stat"] == "median") & (csv["framework"] == "torch")
            & (csv["precision"] == "fp32") & csv["kernel"].isna()]
    def mean(profiler: str) -> float:
        return float(np.exp(np.log(m[m["profiler"] == profiler]["value_s"].astype(float)).mean()))
    assert f"+{100 * (mean('ncu_flushed') / mean('ncu') - 1):.1f}%" in readme


def _remade_proofs(csv: pd.DataFrame, readme: str) -> None:
    """burn's proof: every measured run 20 of 20, every profile run 0 of 20."""
    proof = csv[(csv["framework"] == "burn") & (csv["stat"] == "queued_waited")
                & (csv["experiment"] == "methods")]
    profiled = proof["profile_of"].notna() & (proof["profile_of"] != "")
    measured, under_ncu = proof[~profiled], proof[profiled]
    assert len(measured) and (measured["value_s"].astype(float) == 20).all()
    assert len(under_ncu) and (under_ncu["value_s"].astype(float) == 0).all()
    assert (proof["runs"].astype(int) == 20).all()
    assert "20 of 20 in its measured runs, 0 of 20 under ncu" in " ".join(readme.split())


def _remade_energy(csv: pd.DataFrame, readme: str) -> None:
    """The energy table: PyTorch's rows have an idle power in the stated range, burn's none."""
    energy = pd.read_csv(RESULTS / "h200" / "report" / "energy.csv")
    torch = energy[energy["framework"].str.startswith("PyTorch")]
    burn = energy[energy["framework"].str.startswith("burn")]
    assert len(torch) and torch["idle W"].between(122, 128).all()
    assert len(burn) and burn["idle W"].isna().all() and burn["net J"].isna().all()
    text = " ".join(readme.split())
    assert "idle 122-128 W" in text and "burn's rows have no idle or net figure" in text


# ---- docs/results/cpu-aa-2026-12-03/README.md (an A/A test on the 2-core box) -------------


def _aa_verdicts(csv: pd.DataFrame, readme: str) -> None:
    """The verdict counts, the inconclusive figures' basis and smallest p, the single values'
    spread: each as the README states it, from the kept compare.csv."""
    counts = csv["verdict"].value_counts()
    text = " ".join(readme.split())
    assert (f"0 same, {counts.get('faster', 0)} faster, {counts.get('slower', 0)} slower, "
            f"{counts['inconclusive']} inconclusive, {counts['no verdict (one value)']} no "
            "verdict (one value)") in text.replace("**", "").replace("Verdicts: ", "")
    assert counts.get("faster", 0) == counts.get("slower", 0) == counts.get("same", 0) == 0
    inconclusive = csv[csv["verdict"] == "inconclusive"]
    assert set(inconclusive["basis"]) == {"processes 3/3", "processes 3/3, reps 5/5"}
    assert f"smallest raw p-value among them is {inconclusive['p_value'].min():.3f}" in text
    assert (inconclusive["p_holm"] == 1).all()
    one = csv[csv["verdict"] == "no verdict (one value)"]
    apart = np.abs(np.log(one["ratio"].astype(float)))
    assert f"{(apart > np.log(1.05)).sum()} of them differ by more than 5%" in text
    assert f"median ratio {np.exp(apart.median()):.2f}" in text
    assert f"at most {np.exp(apart.max()):.1f}×" in text


# ---- docs/results/h200-aa-2026-12-03/README.md (the default methods A/A on the H200) -------


def _counts_line(counts: pd.Series) -> str:
    """compare's verdict counts as its READMEs quote them."""
    return (f"{counts.get('same', 0)} same, {counts.get('faster', 0)} faster, "
            f"{counts.get('slower', 0)} slower, {counts.get('inconclusive', 0)} inconclusive, "
            f"{counts.get('no verdict (one value)', 0)} no verdict (one value)")


def _h200_aa_verdicts(csv: pd.DataFrame, readme: str) -> None:
    """Counts, the `same` figures and their ratios, the inconclusive ones' smallest p."""
    text = " ".join(readme.split())
    verdicts = csv[csv["verdict"].fillna("") != ""]
    counts = verdicts["verdict"].value_counts()
    assert _counts_line(counts) in text
    assert counts.get("faster", 0) == counts.get("slower", 0) == 0
    same = verdicts[verdicts["verdict"] == "same"]
    assert all("kernel time" in f or "queued" in f for f in same["figure"])
    ratios = same["ratio"].astype(float)
    assert f"within {ratios.min():.3f}-{ratios.max():.3f}" in text
    inconclusive = verdicts[verdicts["verdict"] == "inconclusive"]
    assert f"smallest raw p-value among them is {inconclusive['p_value'].min():.3f}" in text
    assert {"jax cuda [FP32] warm cache kernel time",
            "jax cuda [arithmetic unknown] warm cache kernel time"} <= set(same["figure"])


# ---- docs/results/h200-sizes-ncu-2026-12-03/README.md (burn's curve against ncu) -----------


def _seconds(cell: str) -> float:
    number, unit = re.fullmatch(r"([0-9.]+)(ns|µs|ms|s)", cell).groups()
    return float(number) * {"ns": 1e-9, "µs": 1e-6, "ms": 1e-3, "s": 1.0}[unit]


def _sizes_ncu_agreement(csv: pd.DataFrame, readme: str) -> None:
    """The table's cells and ratios, the 2.6% bound, 256²'s failed proof, the FP32 peak line."""
    worst = 0.0
    for _, r in csv.iterrows():
        cells = _row(readme, r["size"])
        assert cells[:2] == [r["device time queued"], r["kernel time"]], r["size"]
        quotient = _seconds(r["device time queued"]) / _seconds(r["kernel time"])
        if r["size"] == "256x256":
            assert cells[2] == "proof failed" and quotient > 10
            continue
        assert cells[2] == f"{quotient:.3f}"
        worst = max(worst, abs(quotient - 1))
    assert f"within {100 * worst:.1f}%" in " ".join(readme.split())
    report = (RESULTS / "h200-sizes-ncu-2026-12-03" / "report" / "report.md").read_text()
    assert "start event waited in 0 of 10 runs" in report
    rate = 2 * 4096**3 / _seconds(csv.set_index("size").loc["4096x4096", "kernel time"]) / 1e12
    assert f"{rate:.1f} TFLOP/s at 4096², above the H200's FP32" in " ".join(readme.split())
    assert f"burn cuda 4096x4096 at {rate:.1f} TFLOP/s, above NVIDIA H200 SXM's FP32" in report


# ---- docs/results/h200-aa-first-call-2026-12-03/README.md (first calls, A/A on one card) ----


def _h200_aa_first_calls(csv: pd.DataFrame, readme: str) -> None:
    """Counts, the three `slower` JAX CPU figures with their intervals, JAX CPU's range, the
    `same` range."""
    text = " ".join(readme.split())
    verdicts = csv[csv["verdict"].fillna("") != ""]
    counts = verdicts["verdict"].value_counts()
    assert _counts_line(counts) in text
    called = counts.get("faster", 0) + counts["slower"]
    assert f"{called} of {len(verdicts)} figures called" in text and called <= 0.05 * len(verdicts)
    for _, r in verdicts[verdicts["verdict"] == "slower"].iterrows():
        assert r["figure"].startswith("jax cpu 16 threads warm cache")
        what = r["figure"].removeprefix("jax cpu 16 threads warm cache ")
        assert (f"{what} {r['ratio']:.2f}× [{r['ci_low']:.2f}-{r['ci_high']:.2f}]") in text
    jax_cpu = verdicts[verdicts["figure"].str.startswith("jax cpu")]["ratio"].astype(float)
    assert f"B's {len(jax_cpu)} JAX CPU figures reads {jax_cpu.min():.2f}-{jax_cpu.max():.2f}×" \
        in text
    same = verdicts[verdicts["verdict"] == "same"]["ratio"].astype(float)
    assert f"B/A within {same.min():.3f}-{same.max():.3f}" in text


# ---- docs/results/cpu-sizes-2026-12-04/README.md (the CPU size curve of this box) ---------


def _cpu_sizes_at_1024(csv: pd.DataFrame, readme: str) -> None:
    """Each target's 1024² row of its own sizes CSV, and PyTorch's 768² dip between 512² and
    1024² (the one-process caution)."""
    report = RESULTS / "cpu-sizes-2026-12-04" / "report"
    for name, target in (("pytorch_cpu_2_threads", "PyTorch cpu, 2 threads"),
                         ("burn_flex_x86_v4_2_threads", "burn flex+x86-v4, 2 threads"),
                         ("burn_flex_2_threads", "burn flex, 2 threads"),
                         ("burn_flex_template_1_thread", "burn flex(template), 1 thread")):
        rows = pd.read_csv(report / f"sizes_{name}.csv", dtype=str).set_index("size")
        at = rows.loc["1024x1024"]
        assert _row(readme, target) == [at["with sync"], at["TFLOP/s"], at["% of peak"]]
    torch = csv.set_index("size")["% of peak"]
    text = " ".join(readme.split())
    assert (f"768² point reads {torch['768x768']} between {torch['512x512']} at 512² and "
            f"{torch['1024x1024']} at 1024²") in text


# ---- docs/results/h100-compile-2026-12-06/README.md (torch.compile and CUDA graphs) ---------


def _compile_clocks(csv: pd.DataFrame, readme: str) -> None:
    """The medians at 1024² that the README's CUDA graph and compile lines give, per mode."""
    m = csv[(csv["experiment"] == "compile-methods") & (csv["stat"] == "median")
            & (csv["role"] == "measure") & csv["kernel"].isna()]
    def us(mode: str, method: str) -> float:
        rows = m[(m["exec_mode"].fillna("eager") == mode) & (m["method"] == method)]
        assert len(rows) == 1, (mode, method, len(rows))
        return float(rows["value_s"].iloc[0]) * 1e6
    text = " ".join(readme.split())
    assert (f"eager {us('eager', 'with_sync'):.1f} µs with sync, device time "
            f"{us('eager', 'device_time'):.1f}, kernel time (CUPTI) "
            f"{us('eager', 'kernel_time'):.1f} µs") in text
    assert (f"Graph replay: {us('cudagraph', 'with_sync'):.1f} µs with sync, device time "
            f"{us('cudagraph', 'device_time'):.1f}, kernel {us('cudagraph', 'kernel_time'):.1f}"
            ) in text
    assert f"{us('compile', 'with_sync'):.1f} µs with sync" in text
    assert f"with sync at {us('compile:max-autotune', 'with_sync'):.0f} µs" in text
    assert f"in kernel time ({us('compile:max-autotune', 'kernel_time'):.1f} µs)" in text


class Claims(NamedTuple):
    readme: Path
    checks: tuple[Check, ...]
    csv: str = "dataset.csv"  # the folder's CSV the checks read


CLAIMS: dict[str, Claims] = {
    "h200": Claims(RESULTS / "h200" / "README.md",
                   (_remade_headline, _remade_stops, _remade_flushed, _remade_proofs,
                    _remade_energy)),
    # the sweep of 2026-12-01 (docs/results/h200 until it was re-made on 2026-12-02)
    "h200-2026-12-01": Claims(RESULTS / "h200-2026-12-01" / "README.md", (
        _h200_clock_table, _h200_cold_order, _h200_accuracy,
                                            _h200_headline)),
    "h200-2026-12-02-chapter": Claims(
        RESULTS / "h200-2026-12-02-chapter" / "README.md",
        (_chapter_kernel_ratios, _chapter_jax_accuracy, _chapter_first_call_breakdown,
         _chapter_sizes)),
    "cpu-aa-2026-12-03": Claims(RESULTS / "cpu-aa-2026-12-03" / "README.md", (_aa_verdicts,),
                                csv="compare.csv"),
    "h200-aa-2026-12-03": Claims(RESULTS / "h200-aa-2026-12-03" / "README.md",
                                 (_h200_aa_verdicts,), csv="compare/compare.csv"),
    "cpu-sizes-2026-12-04": Claims(
        RESULTS / "cpu-sizes-2026-12-04" / "README.md", (_cpu_sizes_at_1024,),
        csv="report/sizes_pytorch_cpu_2_threads.csv"),
    "h200-aa-first-call-2026-12-03": Claims(
        RESULTS / "h200-aa-first-call-2026-12-03" / "README.md", (_h200_aa_first_calls,),
        csv="compare/compare.csv"),
    "h200-sizes-ncu-2026-12-03": Claims(
        RESULTS / "h200-sizes-ncu-2026-12-03" / "README.md", (_sizes_ncu_agreement,),
        csv="report/sizes_burn_cuda.csv"),
    "h100-compile-2026-12-06": Claims(
        RESULTS / "h100-compile-2026-12-06" / "README.md", (_compile_clocks,)),
}
UNCHECKED = {
    "h200-2026-11-30": "the first H200 sweep (store format 1), kept as it was; its README "
                       "states what was wrong in it, not figures to hold",
}


@pytest.fixture(scope="module")
def csvs() -> dict[str, pd.DataFrame]:
    return {}


@pytest.mark.parametrize("folder, check", [(f, c) for f, claims in CLAIMS.items()
                                           for c in claims.checks],
                         ids=lambda v: v if isinstance(v, str) else v.__name__.strip("_"))
def test_readme_claim_holds_in_its_own_csv(folder: str, check: Check,
                                           csvs: dict[str, pd.DataFrame]) -> None:
    if folder not in csvs:
        csvs[folder] = pd.read_csv(RESULTS / folder / CLAIMS[folder].csv, low_memory=False)
    check(csvs[folder], CLAIMS[folder].readme.read_text(encoding="utf-8"))


def test_every_results_folder_is_claimed_or_excused() -> None:
    folders = {p.parent.name for p in RESULTS.glob("*/*.csv")
               if (p.parent / "README.md").is_file() or p.parent.name in CLAIMS}
    assert folders - set(CLAIMS) - set(UNCHECKED) == set(), "a README with CSVs and no claims"
    assert set(CLAIMS) | set(UNCHECKED) <= {p.name for p in RESULTS.iterdir()}
