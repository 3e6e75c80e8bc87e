"""bench_py's evidence lines: the SM clock at each timed block's start and end
(`# sm clock`, a fake pynvml: no GPU here), the kernel that computed an accuracy product
(`# kernel ... accuracy kernel time (cupti)`) and torch's inputs in burn's [-1, 1)."""

from __future__ import annotations

import sys
from pathlib import Path
from types import ModuleType, SimpleNamespace

import pandas as pd
import pytest

from orchestrator.data import parse
from orchestrator.report import tables

from .test_bench_py import _load_program, _torch_or_skip

_load_program()  # bench_py/ on sys.path
from bench_core import bench, facts, kernels, smclock  # noqa: E402
from bench_core import energy as bench_energy  # noqa: E402


class _ClockNvml(ModuleType):
    """pynvml's calls the clock makes: one GPU whose SM clock follows `clocks`."""

    NVML_CLOCK_SM = 1

    def __init__(self, clocks: list[int | Exception]) -> None:
        super().__init__("pynvml")
        self.clocks = list(clocks)
        self.calls: list[str] = []

    def nvmlInit(self) -> None:
        self.calls.append("init")

    def nvmlShutdown(self) -> None:
        self.calls.append("shutdown")

    def nvmlDeviceGetCount(self) -> int:
        return 1

    def nvmlDeviceGetHandleByIndex(self, index: int) -> int:
        return index

    def nvmlDeviceGetUUID(self, handle: int) -> str:
        return "GPU-aaaaaaaa-0000"

    def nvmlDeviceGetClockInfo(self, handle: int, kind: int) -> int:
        assert kind == self.NVML_CLOCK_SM
        value = self.clocks.pop(0)
        if isinstance(value, Exception):
            raise value
        return value


def _uuid(monkeypatch: pytest.MonkeyPatch) -> None:
    import torch

    monkeypatch.setattr(torch.cuda, "get_device_properties",
                        lambda i: SimpleNamespace(uuid="aaaaaaaa-0000"))


@pytest.mark.torch
def test_sm_clock_lines_parse_into_block_start_and_end(
        monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    _torch_or_skip()
    _uuid(monkeypatch)
    nvml = _ClockNvml([1980, 1755])
    clock = smclock.open_clock("cuda", 0, nvml)
    start, end = clock.read(), clock.read()
    smclock.clock_line("cuda", "1024x1024", "with sync", start, end)
    clock.close()
    out = capsys.readouterr().out
    assert out == "# sm clock cuda 1024x1024 matmul with sync: start 1980 MHz, end 1755 MHz\n"
    assert nvml.calls == ["init", "shutdown"]
    parsed = parse.parse_text(out)
    assert not parsed.unknown
    assert [(f.method, f.stat, f.value, f.method_text) for f in parsed.figures] == [
        ("sm_clock", "block_start", 1980.0, "with sync"),
        ("sm_clock", "block_end", 1755.0, "with sync")]


@pytest.mark.torch
def test_an_nvml_that_stops_answering_ends_the_lines_not_the_run(
        monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    _torch_or_skip()
    _uuid(monkeypatch)
    clock = smclock.open_clock("cuda", 0, _ClockNvml([1980, RuntimeError("GPU is lost"), 1980]))
    assert clock.read() == 1980
    assert clock.read() is None and clock.read() is None  # never asked again
    smclock.clock_line("cuda", "8x8", "with sync", 1980, None)
    assert capsys.readouterr().out == ""


def test_no_clock_off_cuda_and_a_note_without_pynvml(
        monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    assert smclock.open_clock("cpu", 0).read() is None
    monkeypatch.setitem(sys.modules, "pynvml", None)  # import fails
    assert smclock.open_clock("cuda", 0).read() is None
    err = capsys.readouterr().err
    assert err.startswith("note: pynvml") and "no `# sm clock` lines" in err


@pytest.mark.torch
def test_cpu_run_prints_no_clock_line_and_inputs_are_in_minus_one_to_one(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The real mm mode on the CPU (no NVML there), and the inputs' distribution (burn's)."""
    _torch_or_skip()
    import torch

    seen: dict[str, torch.Tensor] = {}
    original = torch.Tensor.uniform_

    def spy(self: torch.Tensor, low: float = 0.0, high: float = 1.0) -> torch.Tensor:
        out = original(self, low, high)
        seen[f"t{len(seen)}"] = out
        return out

    torch.Tensor.uniform_ = spy  # type: ignore[method-assign]
    try:
        dev = facts.resolve_device("cpu")
        bench.run_mm(dev, 64, 32, 2, False)
    finally:
        torch.Tensor.uniform_ = original  # type: ignore[method-assign]
    out = capsys.readouterr().out
    assert "# sm clock" not in out
    a, b = seen["t0"], seen["t1"]
    assert a.shape == (64, 32) and b.shape == (32, 64)
    for t in (a, b):
        assert float(t.min()) >= -1.0 and float(t.max()) < 1.0 and float(t.min()) < -0.5


@pytest.mark.torch
# asked for CUDA activities with no GPU, the real torch.profiler says so (a UserWarning): this
# test's own situation, on a CPU box only; the product and the note are what it checks
@pytest.mark.filterwarnings("ignore:CUDA is not available, disabling CUDA profiling:UserWarning")
def test_accuracy_product_names_its_kernels_or_says_why_not(
        monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    """The real torch.profiler asked for CUDA activities with no GPU: the product is still
    computed and the missing kernel is a note; given the events a GPU records, one line per
    kernel, parsed into `accuracy_kernel` figures."""
    _torch_or_skip()
    import torch

    if torch.cuda.is_available():
        pytest.skip("this machine has a CUDA GPU")
    monkeypatch.setattr(kernels, "cuda_index", lambda tensor: 0)
    dev = facts.Device("cuda", torch.device("cpu"), lambda: None, is_accelerator=True)
    a, b = torch.rand(8, 4), torch.rand(4, 8)
    c = kernels.accuracy_product(dev, a, b)
    assert torch.equal(c, a @ b)
    out, err = capsys.readouterr()
    assert out == "" and "accuracy kernel time (cupti)" in err
    # what a GPU's profiler gives (the kernel the H200 ran at 256², from its methods capture)
    name = "sm80_xmma_gemm_f32f32_f32f32_f32_nn_n_tilesize32x32x8_stage3_warpsize1x2x1_ffma"
    import contextlib

    import torch.profiler

    monkeypatch.setattr(torch.profiler, "profile", lambda **kw: contextlib.nullcontext())
    monkeypatch.setattr(kernels, "kernel_events", lambda prof, index: [
        {"name": name, "start_us": 10.0, "duration_us": 7.5, "device": "cuda:0",
         "kind": "kernel"}])
    kernels.accuracy_product(dev, a, b)
    out = capsys.readouterr().out
    assert out == (f"# kernel cuda 8x4 matmul accuracy kernel time (cupti): 1 launches, "
                   f"min 7.500µs median 7.500µs: {name}\n")
    figures = parse.parse_text(out).figures
    assert {(f.method, f.stat, f.profiler, f.kernel) for f in figures} == {
        ("accuracy_kernel", "kernel_min", "cupti", name),
        ("accuracy_kernel", "kernel_median", "cupti", name)}


def test_the_accuracy_table_shows_the_kernel_of_each_product() -> None:
    base = {"framework": "torch", "label": "cuda", "shape": "256x256", "precision": "fp32",
            "precision_source": "printed", "kernel": ""}
    fig = pd.DataFrame([
        {**base, "method": "accuracy", "stat": "max_err_f64_ref", "value_s": 2.1e-6},
        {**base, "method": "accuracy_kernel", "stat": "kernel_min", "value_s": 7.5e-6,
         "kernel": "sm80_xmma_gemm_f32f32_ffma"},
        {**base, "method": "accuracy_kernel", "stat": "kernel_median", "value_s": 7.5e-6,
         "kernel": "sm80_xmma_gemm_f32f32_ffma"},
        {**base, "label": "cpu", "method": "accuracy", "stat": "max_err_f64_ref",
         "value_s": 1.9e-6}])
    shown = tables.accuracy_table(tables.accuracy_rows(fig)).frame
    assert dict(zip(shown["build"], shown["kernel"], strict=True)) == {
        "torch cuda": "sm80_xmma_gemm_f32f32_ffma", "torch cpu": ""}


def test_energy_module_keeps_its_nvml_handle_name_for_the_clock() -> None:
    assert smclock.open_clock.__module__ == "bench_core.smclock"
    assert callable(bench_energy.nvml_handle)


class _BusNvml(_ClockNvml):
    """The same GPU found by PCI bus id (how JAX's device is matched: no torch UUID)."""

    def nvmlDeviceGetHandleByPciBusId(self, bus_id: bytes) -> int:
        self.calls.append(f"bus {bus_id.decode()}")
        return 7


def test_jax_finds_its_nvml_device_by_the_drivers_pci_bus_id(
        capsys: pytest.CaptureFixture[str]) -> None:
    nvml = _BusNvml([1755, 1980])
    clock = smclock.open_clock(
        "cuda", 0, nvml, find=lambda lib: smclock.bus_id_handle(lib, "0000:19:00.0", "cuda:0"))
    assert (clock.read(), clock.read()) == (1755, 1980)
    clock.close()
    assert nvml.calls == ["init", "bus 0000:19:00.0", "shutdown"]
    assert capsys.readouterr().err == ""
    # no bus id from the driver: NVML's device 0, said once
    assert smclock.bus_id_handle(_BusNvml([]), None, "cuda:0") == 0
    assert "no PCI bus id" in capsys.readouterr().err
    # this box has no CUDA driver: the bus id is unknown, never an exception
    if not Path("/dev/nvidia0").exists():
        assert smclock.cuda_pci_bus_id(0) is None


def _exec_jax() -> ModuleType:
    import importlib.util

    path = Path(__file__).resolve().parents[1] / "bench_py" / "exec_jax.py"
    spec = importlib.util.spec_from_file_location("exec_jax_under_test", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


@pytest.mark.slow  # the real JAX (imported here: a second or two, then a compile)
def test_jax_prints_a_clock_line_after_each_timed_block(
        capsys: pytest.CaptureFixture[str]) -> None:
    """The real JAX program's mm blocks on the CPU with a clock that reads (NVML has no CPU
    clock: off CUDA the program opens none, without a note), each `# sm clock` line after its
    block's summary and parsed as a JAX `sm_clock` figure of that block."""
    jax = pytest.importorskip("jax")
    program = _exec_jax()
    dev = program.Device(jax, "cpu")
    assert program.open_clock(dev).read() is None and capsys.readouterr().err == ""
    a, b = program.device_init(jax, dev, 32, 16)
    f = program.first_call(jax, dev, a, b, "default")
    reads = iter([1980, 1980, 1980, 1410])
    args = SimpleNamespace(reps=2, samples=False, profile_window=False, dump_kernels=None)
    program._timed_blocks(jax, dev, args, (a, b, f), "32x16",
                          smclock.SmClock(lambda: next(reads)))
    lines = capsys.readouterr().out.splitlines()[3:]  # after device init and the first call
    assert [line.split(",")[0].split(":")[0] for line in lines] == [
        "cpu 32x16 matmul no sync", "cpu 32x16 matmul with sync",
        "# sm clock cpu 32x16 matmul no sync", "# sm clock cpu 32x16 matmul with sync",
        "cpu 32x16 matmul + sum().item()", "# sm clock cpu 32x16 matmul + sum().item()"]
    assert lines[-1].endswith(": start 1980 MHz, end 1410 MHz")
    parsed = parse.parse_text("jax 0.10.2\n" + "\n".join(lines))
    clocks = [(f.framework, f.method_text, f.stat, f.value) for f in parsed.figures
              if f.method == "sm_clock"]
    assert clocks[-2:] == [("jax", "+ sum().item()", "block_start", 1980.0),
                           ("jax", "+ sum().item()", "block_end", 1410.0)]
    assert len(clocks) == 6
