"""compare pairs figures by the arithmetic as run: a TF32 target whose kernels ran
FP32 (what `NVIDIA_TF32_OVERRIDE=0` does under torch's `allow_tf32`) is not judged against a
TF32 run; the row names the disputed side and what disagreed. Stores made of the H200's real
torch output (tests/data/h200), one header line changed to provoke the case."""

from __future__ import annotations

from pathlib import Path

from orchestrator.cli import main
from orchestrator.report.compare import verdicts as compare
from orchestrator.report.compare.verdicts import load_side

from .test_arithmetic_kernels import LOGS, _store, _torch


def _sides(tmp_path: Path) -> tuple[Path, Path]:
    fp32 = (LOGS / "torch_cuda_fp32.log").read_text()
    tf32 = (LOGS / "torch_cuda_tf32.log").read_text()
    # the TF32 target with TF32 turned off under it: it prints tf32, its kernel is FP32's
    overridden = fp32.replace("torch precision fp32\n", "torch precision tf32\n")
    assert overridden != fp32
    _store(tmp_path / "a", [(_torch(None), fp32, {}), (_torch("tf32"), tf32, {})])
    _store(tmp_path / "c", [(_torch(None), fp32, {}), (_torch("tf32"), overridden, {})])
    return tmp_path / "a", tmp_path / "c"


def test_a_disputed_side_is_named_and_not_judged(tmp_path: Path) -> None:
    a, c = _sides(tmp_path)
    result = compare.compare(load_side(str(a)), load_side(str(c)))
    kernel = [r for r in result.rows if "kernel time" in r.figure and r.stat == "median"]
    judged = [r for r in kernel if r.verdict]
    apart = [r for r in kernel if r.apart]
    # FP32 against FP32: judged (the same capture on both sides)
    assert [r.figure for r in judged] == ["torch cuda kernel time"], kernel
    (row,) = apart
    assert row.figure == "torch cuda TF32/DISPUTED kernel time"
    assert row.apart == ("precision tf32 vs disputed, B's arithmetic disputed: printed tf32, "
                         "kernel name fp32")
    assert row.verdict == "" and row.ratio is not None  # shown, with its ratio, not judged


def test_the_command_says_it_in_its_outputs(tmp_path: Path) -> None:
    a, c = _sides(tmp_path)
    assert main(["compare", str(a), str(c), "--out", str(tmp_path / "out")]) == 0
    text = (tmp_path / "out" / "compare.md").read_text(encoding="utf-8")
    assert "B's arithmetic disputed: printed tf32, kernel name fp32" in text
    assert "TF32 kernel time" not in text.replace("TF32/DISPUTED", "")
