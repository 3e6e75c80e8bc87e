"""What a kernel's name says of its arithmetic (data/kernel_names.py), on the names the H200 ran:
the captures in tests/data/h200 and the kernels of the stores in docs/results."""

from __future__ import annotations

import pytest

from orchestrator.data import kernel_names
from orchestrator.data.parse import parse_text

from ..conftest import DATA

H200 = DATA / "h200"


def _kernels(path: str) -> list[str]:
    parsed = parse_text((H200 / path).read_text(encoding="utf-8"))
    return list(dict.fromkeys(f.kernel for f in parsed.figures if f.stat == "kernel_min"))


@pytest.mark.parametrize(("capture", "says"), [
    # JAX 0.11.2, 2026-12-03: cuBLASLt's TF32 kernel at the default precision, its SIMT sgemm
    # and the split-K reduce at `highest`; a Triton gemm fusion at 256² (XLA's own names)
    ("2026-12-03/jax-mm-1024-default.out", ["tf32"]),
    ("2026-12-03/jax-mm-1024-highest.out", ["fp32", None]),
    ("2026-12-03/jax-acc-256-default.out", [None, None]),
    # torch 2.11 with TF32 off and on (bench_py, 2026-12-01)
    ("torch_cuda_fp32.log", ["fp32"]),
    ("torch_cuda_tf32.log", ["tf32"]),
])
def test_the_captured_kernels_say_what_they_computed(capture: str, says: list[str | None]) -> None:
    assert [kernel_names.says(name) for name in _kernels(capture)] == says


@pytest.mark.parametrize(("name", "says"), [
    # CUTLASS's TF32 tensor-op gemm torch ran with TF32 on at some sizes (docs/results/h200)
    ("void cutlass::Kernel2<cutlass_80_tensorop_s1688gemm_64x64_32x6_nn_align4>"
     "(cutlass_80_tensorop_s1688gemm_64x64_32x6_nn_align4::Params)", "tf32"),
    # Nsight Compute's form: the name, then the launch shape
    ("sm80_xmma_gemm_f32f32_f32f32_f32_nn_n_tilesize64x64x8_stage3_warpsize1x4x1_ffma_aligna4_"
     "alignc4_execute_kernel__5x_cublas [grid (16, 16, 1) block (128, 1, 1)]", "fp32"),
    # burn/cubecl's own matmul: its storage types, not the math the tensor cores ran
    ("matmul_entry_lhs_f32_lhs_size_1_rhs_f32_rhs_size_1_acc_f32_acc_size_4_1f084696 "
     "[grid (128, 4, 1) block (32, 8, 1)]", None),
    ("Memset (Device)", None),
    ("gemm_fusion_dot", None),
])
def test_names_of_the_stores(name: str, says: str | None) -> None:
    assert kernel_names.says(name) == says


def test_every_kernel_that_says_must_agree() -> None:
    simt, reduce = _kernels("2026-12-03/jax-mm-1024-highest.out")
    (tf32,) = _kernels("2026-12-03/jax-mm-1024-default.out")
    assert kernel_names.of_kernels([reduce, simt, simt]) == kernel_names.Told("fp32", simt)
    assert kernel_names.of_kernels([tf32, reduce]) == kernel_names.Told("tf32", tf32)
    assert kernel_names.of_kernels([simt, tf32]) is None  # two arithmetics: neither
    assert kernel_names.of_kernels([reduce, "gemm_fusion_dot"]) is None  # nothing said
    assert kernel_names.of_kernels([]) is None
    assert kernel_names.kernel_column(f"{tf32} [grid (128, 1, 1) block (384, 1, 1)]") == tf32
