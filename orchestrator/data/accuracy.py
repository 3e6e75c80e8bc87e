"""Do all builds compute the same numbers? Compare the dumped arrays, not the programs' claims.

Each accuracy run dumps a, b and c = a @ b as float32 `.npy`. The reference for a build is the
float64 product of that build's own f32 inputs, so a build whose sin/cos differ is not blamed for
its sums; inputs that differ from torch cpu's are reported apart.

`infer_precision` says which arithmetic a build used where its program cannot tell (burn on a
cubecl device): its error is set against the float64 product of its inputs rounded to TF32
(round to nearest even, 10 mantissa bits, as the tensor cores' conversion does; truncation
and round-half-away both miss the H200's burn cuda arrays by far more than f32 rounding, see
tests/data/test_precision_inference.py) and against numpy's own f32 product.
"""

from __future__ import annotations

import io
import math
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Literal

import numpy as np

from orchestrator import programs
from orchestrator.data.parse import wrote_label


def _reference() -> str | None:
    """'torch cpu': the program and device the registry names as the reference."""
    found = programs.reference()
    return f"{found[0].name} {found[1]}" if found else None


@dataclass(frozen=True)
class Arrays:
    name: str  # 'torch cpu', 'burn flex(template)', ...
    run_id: str
    a: np.ndarray
    b: np.ndarray
    c: np.ndarray


@dataclass(frozen=True)
class Comparison:
    name: str
    run_id: str
    shape: str
    max_err_f64_ref: float
    max_diff_torch_cpu: float | None
    max_abs_ref: float
    inputs_match_torch_cpu: bool | None
    bitwise_group: int  # builds with equal group numbers have bit-for-bit equal c


# An .npy header is 128 bytes for the programs' arrays; numpy caps it at 10000 bytes by default.
NPY_HEAD = 16 * 1024
# The largest accuracy array read whatever the run's shape says: 8192x8192 float64, far above
# the chapter's 256x256 float32 (a store from before the runner bounded what it kept).
ARRAY_CAP = 8 * 8192 * 8192


def npy_problem(name: str, head: bytes, size: int, shape: str | None) -> str | None:
    """Why a stored `.npy` (its first bytes `head`, `size` bytes in all) is not an accuracy
    array of a run of `shape` ('MxN'), read from the header before any array is: a 2-D float
    array of the run's [M, N] (a), [N, M] (b) or [M, M] (c), at most ARRAY_CAP bytes, exactly
    as long as its header says. None when it is one."""
    try:
        fp = io.BytesIO(head)
        version = np.lib.format.read_magic(fp)
        read = {(1, 0): np.lib.format.read_array_header_1_0,
                (2, 0): np.lib.format.read_array_header_2_0}.get(version)
        if read is None:
            return f"{name}: .npy format {version[0]}.{version[1]}, not an array numpy saves"
        dims, _fortran, dtype = read(fp)
    except (ValueError, EOFError, SyntaxError, TypeError) as exc:
        return f"{name}: not an .npy array ({str(exc).splitlines()[0][:80]})"
    if dtype.kind != "f" or len(dims) != 2:
        return f"{name}: a {len(dims)}-D {dtype} array, not a 2-D float matrix"
    expected = _expected_shape(name, shape)
    if expected is not None and tuple(dims) != expected:
        return (f"{name}: a {dims[0]}x{dims[1]} array, not the {expected[0]}x{expected[1]} of "
                f"this {shape} run")
    nbytes = math.prod(dims) * dtype.itemsize
    if nbytes > ARRAY_CAP:
        return f"{name}: {nbytes} bytes of array, over the {ARRAY_CAP} read at most"
    if size != fp.tell() + nbytes:
        return f"{name}: {size} bytes stored, its header says {fp.tell() + nbytes}"
    return None


def _expected_shape(name: str, shape: str | None) -> tuple[int, int] | None:
    """a [M, N], b [N, M], c [M, M] of a run of shape 'MxN'; None when unknown."""
    try:
        m, n = (int(v) for v in str(shape).split("x"))
    except ValueError:
        return None
    return {"a.npy": (m, n), "b.npy": (n, m), "c.npy": (m, m)}.get(name)


def load_npy(data: bytes) -> np.ndarray:
    """The array of a stored `.npy` that `npy_problem` passed."""
    return np.load(io.BytesIO(data), allow_pickle=False)


def build_name(framework: str, stdout: str, fallback: str) -> str:
    """'burn flex(template)' from the program's own 'accuracy: wrote' line."""
    labels = (wrote_label(line) for line in stdout.splitlines())
    return f"{framework} {next((label for label in labels if label), fallback)}"


def compare(entries: list[Arrays]) -> list[Comparison]:
    """One comparison per build; torch cpu (if present) is the cross-build reference."""
    wanted = _reference()
    reference = next((e for e in entries if e.name == wanted), None)
    groups: list[np.ndarray] = []
    out = []
    for e in entries:
        ref = e.a.astype(np.float64) @ e.b.astype(np.float64)
        group = next((i for i, c in enumerate(groups)
                      if c.shape == e.c.shape and np.array_equal(c.view(np.uint32),
                                                                 e.c.view(np.uint32))), None)
        if group is None:
            groups.append(e.c)
            group = len(groups) - 1
        same_shape = reference is not None and reference.c.shape == e.c.shape
        out.append(Comparison(
            name=e.name, run_id=e.run_id, shape=f"{e.a.shape[0]}x{e.a.shape[1]}",
            max_err_f64_ref=float(np.max(np.abs(e.c.astype(np.float64) - ref))),
            max_diff_torch_cpu=float(np.max(np.abs(e.c.astype(np.float64) -
                                                   reference.c.astype(np.float64))))
            if same_shape and reference is not None else None,
            max_abs_ref=float(np.max(np.abs(ref))),
            inputs_match_torch_cpu=(bool(np.array_equal(e.a, reference.a) and
                                         np.array_equal(e.b, reference.b))
                                    if same_shape and reference is not None else None),
            bitwise_group=group,
        ))
    return out


# Above this many times numpy's f32 error a result is no longer "at f32 level"; a TF32 result's
# error is ~1000x more, so the margin costs nothing and absorbs another summation order.
FP32_MARGIN = 10.0
_TF32_DROP = 13  # f32 has 23 mantissa bits, TF32 10: the low 13 go


def round_tf32(x: np.ndarray) -> np.ndarray:
    """f32 values rounded to TF32 (10 mantissa bits), to nearest with ties to even, as f32."""
    bits = np.ascontiguousarray(x, dtype=np.float32).view(np.uint32).astype(np.uint64)
    half = (1 << (_TF32_DROP - 1)) - 1
    bits = (bits + half + ((bits >> _TF32_DROP) & 1)) >> _TF32_DROP << _TF32_DROP
    return bits.astype(np.uint32).view(np.float32)


def round_tf32_away(x: np.ndarray) -> np.ndarray:
    """f32 values rounded to TF32 to nearest with ties away from zero (PTX `cvt.rna.tf32.f32`):
    XLA's conversion (JAX on the H200: its default-precision product is this one to f32
    rounding, 7.9e-7, while ties-to-even misses by one TF32 step, 4.9e-4, on 1.4% of the
    elements: docs/results/h200-2026-12-02), where cuBLAS's own (torch, burn) ties to even."""
    bits = np.ascontiguousarray(x, dtype=np.float32).view(np.uint32).astype(np.uint64)
    bits = (bits + (1 << (_TF32_DROP - 1))) >> _TF32_DROP << _TF32_DROP
    return bits.astype(np.uint32).view(np.float32)


def truncate_tf32(x: np.ndarray) -> np.ndarray:
    """f32 values with the low 13 mantissa bits cut (the other conversion a GPU might use)."""
    bits = np.ascontiguousarray(x, dtype=np.float32).view(np.uint32)
    return (bits & np.uint32(~((1 << _TF32_DROP) - 1) & 0xFFFFFFFF)).view(np.float32)


@dataclass(frozen=True)
class Inference:
    """A build's arithmetic as its arrays show it, with the figures that show it."""

    precision: Literal["fp32", "tf32", ""]  # '': neither explains the error
    max_err: float  # max|c - f64 ref|
    tf32_err: float  # max|TF32-rounded-inputs product - f64 ref|: what TF32 alone costs
    fp32_err: float  # max|numpy f32 product - f64 ref|: what f32 rounding costs
    from_tf32: float  # max|c - TF32-rounded-inputs product|: f32-level if c is TF32

    def evidence(self) -> str:
        """'max err 7.72e-3 = TF32 rounding of the inputs 7.72e-3', for the report."""
        return evidence(self.precision, self.max_err, self.tf32_err, self.fp32_err)


def short(value: float) -> str:
    """7.72e-3: three digits, the exponent without padding."""
    mantissa, exponent = f"{value:.2e}".split("e")
    return f"{mantissa}e{int(exponent)}"


def evidence(precision: str, max_err: float, tf32_err: float, fp32_err: float) -> str:
    """Why the arrays say fp32 or tf32 (or neither), in the figures that say it."""
    if precision == "tf32":
        return f"max err {short(max_err)} = TF32 rounding of the inputs {short(tf32_err)}"
    if precision == "fp32":
        return (f"max err {short(max_err)} at f32 level {short(fp32_err)}; TF32 would give "
                f"{short(tf32_err)}")
    return (f"max err {short(max_err)} is neither f32 ({short(fp32_err)}) nor TF32 rounding "
            f"({short(tf32_err)})")


_ROUNDINGS = {"even": (round_tf32,), "away": (round_tf32_away,), "truncate": (truncate_tf32,),
              "nearest": (round_tf32, round_tf32_away)}  # either tie rule of to-nearest


def infer_precision(a: np.ndarray, b: np.ndarray, c: np.ndarray,
                    rounding: str = "nearest") -> Inference:
    """fp32, tf32 or '' for a product c of a and b. TF32 is claimed only when c is, to f32
    rounding, the product of the TF32-rounded inputs and that is far above f32's own error.
    `rounding`: the f32 -> TF32 conversion; 'nearest' tries ties to even, then ties away (the
    first that shows TF32 tells; else the ties-to-even figures)."""
    found = [_infer(a, b, c, to) for to in _ROUNDINGS[rounding]]
    return next((f for f in found if f.precision == "tf32"), found[0])


def _infer(a: np.ndarray, b: np.ndarray, c: np.ndarray,
           to_tf32: Callable[[np.ndarray], np.ndarray]) -> Inference:
    ref = a.astype(np.float64) @ b.astype(np.float64)
    tf32 = to_tf32(a).astype(np.float64) @ to_tf32(b).astype(np.float64)
    f32 = (a.astype(np.float32) @ b.astype(np.float32)).astype(np.float64)
    c64 = c.astype(np.float64)
    inf = Inference("", float(np.max(np.abs(c64 - ref))), float(np.max(np.abs(tf32 - ref))),
                    float(np.max(np.abs(f32 - ref))), float(np.max(np.abs(c64 - tf32))))
    level = FP32_MARGIN * max(inf.fp32_err, np.finfo(np.float32).tiny)
    distinct = inf.tf32_err > FP32_MARGIN * level  # inputs TF32 can round at all
    if inf.max_err <= level:
        return replace(inf, precision="fp32")
    if distinct and inf.from_tf32 <= level:
        return replace(inf, precision="tf32")
    return inf
