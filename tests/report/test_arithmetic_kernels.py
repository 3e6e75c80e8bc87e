"""The arithmetic a run's kernels' names say (data/kernel_names.py), in the dataset and the
report: a source where nothing else tells, a finding where it disagrees with what the run
claims. Stores made of the H200's real output (tests/data/h200); the disagreeing ones change
one claim of it (a header line, an accuracy run's arrays) to provoke the fault."""

from __future__ import annotations

import io
from pathlib import Path

import numpy as np
import pandas as pd

from orchestrator.data import accuracy, dataset, kernel_names, precision
from orchestrator.data.parse import parse_text
from orchestrator.data.store import Store
from orchestrator.records import RunDef, RunRecord
from orchestrator.report import arithmetic_checks, tables
from orchestrator.report import writer as report
from orchestrator.report.findings import Kind

from ..conftest import PROJECT
from .test_arithmetic import _h200_arrays as _arrays

LOGS = PROJECT / "tests" / "data" / "h200"
JAX = LOGS / "2026-12-03"
TORCH_CUDA_ACCURACY = "0e8969a400be835e"  # h200-2026-11-30's torch cuda, TF32 off (fp32)
TF32_KERNEL = ("sm90_xmma_gemm_f32f32_tf32f32_f32_nn_n_tilesize64x128x32_warpgroupsize1x1x1_"
               "execute_segment_k_off_kernel__5x_cublas")


def _store(folder: Path, runs: list[tuple[RunDef, str, dict[str, bytes]]]) -> pd.DataFrame:
    store = Store(folder)
    with store.writing():
        sweep, _ = store.begin_sweep(PROJECT / "experiments.yaml", {}, [], True)
        for i, (run, out, arrays) in enumerate(runs):
            rec = RunRecord(run=run, stdout=out.encode(), started_at=float(i), artifacts=arrays)
            store.record_run(sweep, rec, parse_text(out))
        store.end_sweep(sweep, "done")
    return tables.prepare(dataset.load(folder))


def _torch(claim: str) -> RunDef:
    return RunDef("methods", "torch", "cuda", "mm", (1024, 1024), 20, precision=claim)


def _jax_mm() -> tuple[RunDef, str, dict[str, bytes]]:
    return (RunDef("methods", "jax", "cuda", "mm", (1024, 1024), 20),
            (JAX / "jax-mm-1024-default.out").read_text(), {})


def _disputed(fig: pd.DataFrame) -> list[str]:
    return [f for f in arithmetic_checks.disagreements(fig) if f.kind is Kind.ARITHMETIC_DISPUTED]


def test_agreeing_claims_give_no_finding_and_jax_default_is_tf32_by_its_kernel(
        tmp_path: Path) -> None:
    """torch's printed fp32 / tf32 each ran a kernel of that arithmetic; JAX's default printed
    `unknown` and ran cuBLAS's TF32 kernel: TF32, said how, no dispute."""
    fig = _store(tmp_path / "results", [
        (_torch("fp32"), (LOGS / "torch_cuda_fp32.log").read_text(), {}),
        (_torch("tf32"), (LOGS / "torch_cuda_tf32.log").read_text(), {}),
        _jax_mm()])
    assert _disputed(fig) == []
    jax = fig[fig["framework"] == "jax"]
    got = set(zip(jax["precision"], jax["precision_source"], strict=True))
    assert got == {("tf32", "kernel name")}
    (note,) = arithmetic_checks.kernel_name_notes(fig)
    assert note == (f"JAX cuda [tf32] 1024x1024: TF32 by the name of the kernel it ran "
                    f"(`{TF32_KERNEL}`, 1 run); its program did not print its arithmetic, and "
                    "no accuracy run of its build tells it.")
    report.write(dataset.load(tmp_path / "results"), tmp_path / "report")
    text = (tmp_path / "report" / "report.md").read_text()
    assert f"- {note}" in text and "**arithmetic disputed**" not in text


def test_a_run_that_claims_fp32_but_ran_a_tf32_kernel_is_disputed(tmp_path: Path) -> None:
    """torch's TF32 capture with its header changed to say fp32: the program claims FP32, its
    kernel is cuBLAS's TF32 one. The claim is not what ran: the arithmetic is disputed (issue
    40: the arithmetic as run decides; a printed setting its kernels contradict is said), the
    run a label of its own, and the report says they disagree."""
    lying = (LOGS / "torch_cuda_tf32.log").read_text().replace(
        "torch precision tf32\n", "torch precision fp32\n")
    assert "torch precision fp32\n" in lying and TF32_KERNEL in lying
    fig = _store(tmp_path / "results", [(_torch("fp32"), lying, {})])
    assert set(fig["precision"]) == {""}
    assert set(fig["precision_source"]) == {"disputed: printed fp32, kernel name tf32"}
    assert precision.dispute("disputed: printed fp32, kernel name tf32") == (
        "printed", "fp32", "tf32")
    (finding,) = _disputed(fig)
    assert finding == (
        f"**arithmetic disputed**: PyTorch cuda [arithmetic disputed] 1024x1024 (1 run): its "
        f"program printed FP32, the name of the kernel it ran says TF32 (`{TF32_KERNEL}`); its "
        "arithmetic is left disputed: compared with neither.")
    report.write(dataset.load(tmp_path / "results"), tmp_path / "report")
    assert f"- {finding}" in (tmp_path / "report" / "report.md").read_text()


def test_an_accuracy_run_and_a_kernel_that_disagree_leave_the_arithmetic_unknown(
        tmp_path: Path) -> None:
    """JAX's default at 256² (a Triton fusion: its name says nothing) given FP32 arrays (torch's
    with TF32 off, from the H200) as its accuracy run; its 1024² run ran the TF32 kernel.
    Neither wins: unknown, both sources said, and a finding."""
    acc_out = (JAX / "jax-acc-256-default.out").read_text()
    fig = _store(tmp_path / "results", [
        (RunDef("accuracy", "jax", "cuda", "accuracy", (256, 256), 20), acc_out,
         _arrays(TORCH_CUDA_ACCURACY)),
        _jax_mm()])
    mm = fig[(fig["framework"] == "jax") & (fig["shape"] == "1024x1024")]
    assert set(mm["precision"]) == {""}
    assert set(mm["precision_source"]) == {"disputed: inferred at 256x256 fp32, kernel name tf32"}
    assert precision.dispute("disputed: inferred at 256x256 fp32, kernel name tf32") == (
        "inferred at 256x256", "fp32", "tf32")
    (finding,) = _disputed(fig)
    assert finding == (
        "**arithmetic disputed**: JAX cuda [arithmetic disputed] 1024x1024 (1 run): its "
        "accuracy run says FP32 (inferred at 256x256), the name of the kernel it ran says TF32 "
        f"(`{TF32_KERNEL}`); its arithmetic is left disputed: compared with neither.")
    assert arithmetic_checks.kernel_name_notes(fig) == []


def test_the_accuracy_arrays_used_are_fp32() -> None:
    arrays = {k: np.load(io.BytesIO(v)) for k, v in _arrays(TORCH_CUDA_ACCURACY).items()}
    found = accuracy.infer_precision(arrays["a.npy"], arrays["b.npy"], arrays["c.npy"])
    assert found.precision == "fp32"
    assert kernel_names.says(TF32_KERNEL) == "tf32"
