"""What a matmul kernel's name says of its f32 arithmetic (fp32 or TF32): a source of a run's
arithmetic (data/precision.py) beside its program's header and its build's accuracy run.

cuBLAS and CUTLASS name their kernels by their math, and the profilers (CUPTI, Nsight Compute)
give those names as they ran (`kernel_time` and `accuracy_kernel` figures, column `kernel`):

* cuBLAS's `sm90_xmma_gemm_f32f32_tf32f32_f32_…`: f32 operands in memory, TF32 into the tensor
  cores (the H200's default-precision matmuls of torch and JAX);
* cuBLAS's `sm80_xmma_gemm_f32f32_f32f32_f32_…ffma…` and CUTLASS's `cutlass_80_simt_sgemm_…`:
  f32 into FFMA (SIMT), FP32 (torch's `fp32`, JAX's `highest`);
* CUTLASS's `cutlass_80_tensorop_s1688gemm_<tiles>…`: f32 on the tensor cores' 16x8x8 TF32
  instruction (torch's `tf32` at some shapes).

Every other name tells nothing: burn/cubecl's own kernels (`matmul_entry_lhs_f32_…_acc_f32…`
name their storage types, not the math the tensor cores ran), XLA's Triton fusions
(`gemm_fusion_dot`), cuBLAS's split-K reduce, a memset. Each form above is one the H200 ran
(tests/data/h200, docs/results).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

_SAYS = (
    (re.compile(r"\bsm\d+_xmma_gemm_f32f32_tf32f32_"), "tf32"),
    (re.compile(r"\bsm\d+_xmma_gemm_f32f32_f32f32_.*_ffma_"), "fp32"),
    (re.compile(r"\bcutlass_\d+_simt_sgemm_"), "fp32"),
    (re.compile(r"\bcutlass_\d+_tensorop_s1688gemm_\d"), "tf32"),
)
SOURCE = "kernel name"  # the precision_source of an arithmetic a kernel's name gave


def says(name: str) -> str | None:
    """'tf32' or 'fp32' where the kernel's name says its arithmetic, None where it does not."""
    for pattern, precision in _SAYS:
        if pattern.search(name):
            return precision
    return None


@dataclass(frozen=True)
class Told:
    """The arithmetic a matmul's kernels say, and the first kernel whose name says it."""

    precision: str
    kernel: str


def of_kernels(names: Iterable[str]) -> Told | None:
    """The arithmetic every kernel of a matmul that says one agrees on; None where none says
    one, or two say different ones."""
    told = [(said, name) for name in dict.fromkeys(names) if (said := says(name))]
    if not told or len({said for said, _ in told}) > 1:
        return None
    return Told(*told[0])


def kernel_column(name: str) -> str:
    """A kernel's name without Nsight Compute's launch shape (`NAME [grid (…) block (…)]`)."""
    return re.sub(r" \[grid \(.*\) block \(.*\)\]$", "", name)
