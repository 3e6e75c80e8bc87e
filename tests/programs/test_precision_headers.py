"""Both programs' precision header lines, parsed from the real H200 logs (docs/LINES.md)."""

from __future__ import annotations

import pytest

from orchestrator import programs
from orchestrator.data.parse import parse_text

from ..conftest import PROJECT

H200 = PROJECT / "tests" / "data" / "h200"


@pytest.mark.parametrize(("log", "kind", "precision"), [
    ("torch_cuda_fp32.log", "torch_precision", "fp32"),
    ("torch_cuda_tf32.log", "torch_precision", "tf32"),
    ("burn_cuda_energy.log", "burn_precision", "unknown"),
])
def test_the_real_logs_say_their_arithmetic(log: str, kind: str, precision: str) -> None:
    parsed = parse_text((H200 / log).read_text())
    found = [(h.kind, h.precision, h.line_no) for h in parsed.headers if h.precision]
    assert found == [(kind, precision, 3 if kind == "torch_precision" else 2)]
    assert not [text for _, text in parsed.unknown if "precision" in text]


@pytest.mark.parametrize(("line", "precision"), [
    ("burn precision fp32", "fp32"),
    ("burn precision unknown", "unknown"),
    ("burn precision unknown (cubecl enables TF32 tensor cores on sm >= 80)", "unknown"),
    ("burn precision bf16", None),
])
def test_burn_header_forms(line: str, precision: str | None) -> None:
    header = programs.get("burn").parse_header(line, 2)
    assert (header.precision if header else None) == precision


@pytest.mark.parametrize(("line", "precision"), [
    ("torch precision fp32", "fp32"), ("torch precision tf32", "tf32"),
    ("torch precision unknown", None), ("torch precision", None),
])
def test_torch_header_forms(line: str, precision: str | None) -> None:
    header = programs.get("torch").parse_header(line, 3)
    assert (header.precision if header else None) == precision
    if header is not None:
        assert header.kind == "torch_precision" and header.version is None
