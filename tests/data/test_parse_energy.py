"""The energy line (`LABEL SHAPE OP energy (nvml): J J, N runs, DUR`) on the programs' real
CUDA output from the H200 (tests/data/h200/)."""

from __future__ import annotations

from pathlib import Path

import pytest

from orchestrator.data.parse import parse_text

H200 = Path(__file__).parent / "h200"


@pytest.mark.parametrize(("log", "framework", "joules", "runs", "seconds"), [
    ("torch_cuda_fp32.log", "torch", 1105.207, 35200, 2.001),
    ("torch_cuda_tf32.log", "torch", 739.883, 99300, 2.002),
    ("burn_cuda_energy.log", "burn", 944.982, 44500, 2.004),
])
def test_energy_line_of_each_program(log: str, framework: str, joules: float, runs: int,
                                     seconds: float) -> None:
    parsed = parse_text((H200 / log).read_text())
    assert parsed.unknown == []
    energy = {f.stat: f for f in parsed.figures if f.method == "energy"}
    assert set(energy) == {"joules", "seconds"}
    assert energy["joules"].value == joules and energy["seconds"].value == pytest.approx(seconds)
    for figure in energy.values():
        assert (figure.framework, figure.label, figure.device, figure.shape, figure.op) == \
            (framework, "cuda", "cuda", "1024x1024", "matmul")
        assert figure.runs == runs and figure.method_text == "energy (nvml)"


def test_a_damaged_energy_line_is_unknown_not_a_figure() -> None:
    parsed = parse_text("cuda 1024x1024 matmul energy (nvml): many J, 20 runs, 1.0s\n"
                        "cuda 1024x1024 matmul energy (nvml): 41.250 J, 20000 runs\n")
    assert [n for n, _ in parsed.unknown] == [1, 2] and parsed.figures == []
