"""The one list of measurement-changing environment variables, assembled from the registry:
the CUDA driver's and cuBLAS's, then each program's own (`Program.measure_env`)."""

from __future__ import annotations

from typing import ClassVar

from orchestrator import programs
from orchestrator.data import measure_env
from orchestrator.data.parse import parse_text
from orchestrator.programs import Paths, Program
from orchestrator.programs.measure import Variable
from orchestrator.records import RunDef


def test_the_documented_variables_are_listed_with_a_source() -> None:
    for name in ("CUDA_LAUNCH_BLOCKING", "NVIDIA_TF32_OVERRIDE", "TORCH_ALLOW_TF32_CUBLAS_OVERRIDE",
                 "CUBLAS_WORKSPACE_CONFIG", "PYTORCH_NO_CUDA_MEMORY_CACHING",
                 "CUDA_DEVICE_MAX_CONNECTIONS", "MKL_CBWR", "MKL_ENABLE_INSTRUCTIONS",
                 "ATEN_CPU_CAPABILITY", "DNNL_MAX_CPU_ISA", "OMP_NUM_THREADS", "MKL_NUM_THREADS",
                 "XLA_FLAGS", "CUBECL_AUTOTUNE_LEVEL"):
        entry = measure_env.variable(name)
        assert entry is not None, name
        assert entry.source and entry.changes
    assert measure_env.variable("HOME") is None
    assert len({v.name for v in measure_env.variables()}) == len(measure_env.variables())


class Quartz(Program):
    """A stand-in framework with a variable of its own."""

    name = "quartz"
    title = "Quartz"
    devices = ("cpu",)
    measure_env: ClassVar[tuple[Variable, ...]] = (
        Variable("QUARTZ_TILE", "the tile size its matmul uses", "Quartz docs"),)

    def command(self, run: RunDef, paths: Paths) -> list[str]:
        return [paths.python]


def test_each_framework_lists_its_own_variables_in_its_folder() -> None:
    """A framework's variables are its Program's: torch's MKL_CBWR, burn's CUBECL_*, JAX's
    XLA_FLAGS; a new framework's reach the list (and the dataset's column) from its folder
    alone, in a registry of its own; the default list never has them."""
    owner = {v.name: p.name for p in programs.default_registry().programs for v in p.measure_env}
    assert (owner["MKL_CBWR"], owner["CUBECL_*"], owner["XLA_FLAGS"]) == ("torch", "burn", "jax")
    assert "CUDA_LAUNCH_BLOCKING" not in owner  # the driver's: no one framework's
    with programs.use(programs.default_registry().with_programs(Quartz())):
        assert measure_env.variable("QUARTZ_TILE") == Quartz.measure_env[0]
        assert measure_env.column({"QUARTZ_TILE": "64", "MKL_CBWR": "AVX2"}) == (
            "MKL_CBWR=AVX2; QUARTZ_TILE=64")
    assert measure_env.variable("QUARTZ_TILE") is None


def test_column_keeps_the_list_order_and_round_trips() -> None:
    env = {"MKL_CBWR": "AVX2", "HOME": "/x", "CUDA_LAUNCH_BLOCKING": "1",
           "CUBECL_AUTOTUNE_LEVEL": "full"}
    cell = measure_env.column(env)
    assert cell == "CUDA_LAUNCH_BLOCKING=1; MKL_CBWR=AVX2; CUBECL_AUTOTUNE_LEVEL=full"
    assert measure_env.parse_column(cell) == [("CUDA_LAUNCH_BLOCKING", "1"), ("MKL_CBWR", "AVX2"),
                                              ("CUBECL_AUTOTUNE_LEVEL", "full")]
    assert measure_env.breaks_proof(cell) == ["CUDA_LAUNCH_BLOCKING=1"]
    assert measure_env.breaks_proof("CUDA_LAUNCH_BLOCKING=0") == []
    assert measure_env.parse_column(float("nan")) == []


def test_the_queued_proof_line_parses_and_a_foreign_count_does_not() -> None:
    ok = parse_text("cuda 256x256 matmul cuda.Event time (queued): start event waited in 0 of "
                    "20 runs\n")
    assert [(f.method, f.stat, f.value, f.runs) for f in ok.figures] == [
        ("device_time_queued", "queued_waited", 0.0, 20)]
    bad = parse_text("cuda 256x256 matmul cuda.Event time (queued): start event waited in 21 of "
                     "20 runs\ncuda 256x256 matmul cuda.Event time: start event waited in 1 of "
                     "2 runs\n")
    assert not bad.figures and len(bad.unknown) == 2


def test_a_value_holding_the_separator_reads_back_as_one_value() -> None:
    """`; ` inside a value (an XLA_FLAGS list, a path with `;`) is escaped, so
    the cell splits into the variables it holds, not more; a backslash survives too."""
    env = {"XLA_FLAGS": "--xla_a=1; --xla_b=2", "MKL_CBWR": "AVX2", "OMP_PLACES": "a\\;b"}
    cell = measure_env.column(env)
    assert measure_env.parse_column(cell) == [
        (name, env[name]) for name, _ in measure_env.parse_column(cell)]
    assert sorted(measure_env.parse_column(cell)) == sorted(env.items())
    assert measure_env.pairs_text(cell) == [f"{n}={v}" for n, v in measure_env.parse_column(cell)]
    # a cell written before the escape (no backslash in it) reads as it did
    assert measure_env.parse_column("CUDA_LAUNCH_BLOCKING=1; MKL_CBWR=AVX2") == [
        ("CUDA_LAUNCH_BLOCKING", "1"), ("MKL_CBWR", "AVX2")]
