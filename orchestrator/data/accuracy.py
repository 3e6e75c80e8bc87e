"""Do all builds compute the same numbers? Compare the dumped arrays, not the programs' claims.

Each accuracy run dumps a, b and c = a @ b as float32 `.npy`. The reference for a build is the
float64 product of that build's own f32 inputs, so a build whose sin/cos differ is not blamed for
its sums; inputs that differ from torch cpu's are reported apart.
"""

from __future__ import annotations

import io
from dataclasses import dataclass

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


def load_npy(data: bytes) -> np.ndarray:
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
