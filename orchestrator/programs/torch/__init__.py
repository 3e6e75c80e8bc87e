"""PyTorch: bench_py/exec_gpu.py, run by the sweep's Python.

It takes `--threads` and the BLAS libraries' thread variables and `--precision fp32|tf32`
(TF32 on CUDA only), prints `torch VERSION, threads N`, `torch BLAS_INFO=...` and
`torch precision fp32|tf32` headers, times with CUDA/MPS events (`cuda.Event time`), and on the
CPU is the reference every build's accuracy is compared with.

`exec` (the run's axis) picks how the matmul runs: eager (no flag, the chapter's), `compile`,
`compile:MODE` (torch.compile; cpu and cuda) or `cudagraph` (cuda): `--exec MODE`, and the
`torch exec MODE[, cache DIR]` header. A compiled mode in a cache sweep gets `--cache-dir` for
Inductor's and Triton's caches (programs/torch/cache.py: cold and warm proven from them), and
saves (cold first process) or loads (`cache: [mega]`) the mega-cache blob of them.
"""

from __future__ import annotations

import platform
import re
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, ClassVar

from orchestrator.programs.base import FactRow, Paths, Program, join, python_facts, stdout_of
from orchestrator.programs.naming import Naming
from orchestrator.programs.torch import cache
from orchestrator.programs.torch.measure_env import VARIABLES as MEASURE_ENV
from orchestrator.records import Header, RunDef

_HEADER = re.compile(r"torch ([0-9][^\s,]*)(?:, threads ([0-9]{1,9}))?")
_BLAS_HEADER = re.compile(r"torch BLAS_INFO=(\S*)")
_PRECISION_HEADER = re.compile(r"torch precision (fp32|tf32)(?: \((.*)\))?")
_EXEC_HEADER = re.compile(r"torch exec (\S+)(?:, cache (.+))?")
_EVENT_TIME = re.compile(r"[a-z]+\.Event time")  # torch.mps / cuda / xpu .Event
_FACTS = (
    "import json,torch,re;"
    "cfg=torch.__config__.show();m=re.search(r'BLAS_INFO=([^,\\s]+)',cfg);"
    "print(json.dumps({'version':torch.__version__,'cuda':torch.version.cuda,"
    "'blas':m.group(1) if m else None,'threads':torch.get_num_threads()}))"
)
_IMPORTABLE = "import importlib.util,sys; sys.exit(importlib.util.find_spec('torch') is None)"
# torch's own answer: is its MPS backend compiled in, and does this Mac's GPU take it
MPS_PROBE = "import torch; m = torch.backends.mps; print(m.is_built(), m.is_available())"
Runner = Callable[[list[str]], "str | None"]  # a command's stdout, None when it fails


class Torch(Program):
    name = "torch"
    place = 1
    title = "PyTorch"
    aliases = ("pytorch",)
    naming = Naming(plot_marker="o",
                    plot_colors={"cpu": "#1f77b4", "cuda": "#17becf", "mps": "#6baed6"})
    devices = ("cpu", "cuda", "mps", "auto")
    device_needs: ClassVar[dict[str, tuple[str, ...]]] = {
        "cuda": ("torch", "cuda"), "mps": ("torch", "mps"), "cpu": ("torch",),
        "auto": ("torch",)}
    thread_vars = ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS",
                   "VECLIB_MAXIMUM_THREADS", "NUMEXPR_NUM_THREADS")
    thread_flag = True
    methods: ClassVar[dict[str, str]] = {"+ sum().item()": "readback",
                                         "benchmark.Timer": "timer",
                                         "cuda.Event time (queued)": "device_time_queued",
                                         "kernel time (cupti)": "kernel_time"}
    # torch.compile's modes (Inductor: C++ on the CPU, Triton on CUDA) and CUDA graph replay
    _COMPILED = ("compile", "compile:max-autotune", "compile:max-autotune-no-cudagraphs",
                 "compile:reduce-overhead")
    exec_modes: ClassVar[dict[str, tuple[str, ...]]] = {
        "cpu": ("eager", *_COMPILED), "cuda": ("eager", *_COMPILED, "cudagraph"),
        "mps": ("eager",), "auto": ("eager",)}
    accepts = ("exec",)  # its modes reach bench_py as `--exec MODE`
    caches = cache.TorchCaches(
        exec_modes=_COMPILED, home=("bench_py", "target", "torch-compile-cache"),
        prime_warm=True,  # one folder for every mode and shape (programs/torch/cache.py)
        artifacts=True,  # torch.compile's mega-cache: `cache: [mega]` (programs/torch/cache.py)
        env=cache.CACHE_ENV,
        # its own CUDA_CACHE_PATH too: precompiled SASS, so it should stay empty (recorded)
        driver_devices=("cuda", "auto"),
        driver_why=("PyTorch's CUDA kernels are precompiled SASS: the driver JIT cache should "
                    "stay empty (recorded to show it)"))
    measure_env = MEASURE_ENV
    labels: ClassVar[dict[str, str]] = {"mps": "mps", "xpu": "xpu"}
    reference_device = "cpu"
    # TF32 exists only on CUDA (Ampere and later); CPU and MPS compute f32 matmuls in f32
    precisions: ClassVar[dict[str, tuple[str, ...]]] = {
        "cuda": ("fp32", "tf32"), "cpu": ("fp32",), "mps": ("fp32",), "auto": ("fp32",)}
    provides = ("torch",)

    def command(self, run: RunDef, paths: Paths) -> list[str]:
        return [paths.python, str(paths.project / "bench_py" / "exec_gpu.py")]

    def argv(self, run: RunDef, paths: Paths, out_dir: Path | None) -> list[str]:
        """The contract's argv (`--exec` included); a compiled mode, the folder of Inductor's
        and Triton's caches (in a cache series the orchestrator empties or primes it; outside
        one it is as the last run left it, but never torch's default folders in /tmp and ~)."""
        argv = super().argv(run, paths, out_dir)
        if self.caches.cached(run.device, run.params.get("exec")):
            argv += self.caches.argv(run, paths.project.joinpath(*self.caches.home))
        return argv

    def method_of(self, text: str) -> str | None:
        found = self.methods.get(text)
        return "device_time" if found is None and _EVENT_TIME.fullmatch(text) else found

    def parse_header(self, line: str, line_no: int) -> Header | None:
        if (match := _BLAS_HEADER.fullmatch(line)) is not None:  # a torch program's 2nd header
            return Header("torch_blas", None, None, line_no, facts={"blas": match.group(1)})
        if (match := _PRECISION_HEADER.fullmatch(line)) is not None:
            return Header("torch_precision", None, None, line_no, match.group(1))
        if (match := _EXEC_HEADER.fullmatch(line)) is not None:  # a mode other than eager
            return Header("torch_exec", None, None, line_no,
                          facts={"exec": match.group(1), "cache": match.group(2)})
        if (match := _HEADER.fullmatch(line)) is not None:
            version, threads = match.groups()
            return Header("torch", version, None if threads is None else int(threads), line_no)
        return None

    def fact_rows(self) -> list[FactRow]:
        """Version (header, else facts), the CUDA it was built for and its BLAS."""
        return [FactRow("torch", self.header_version, always=True),
                FactRow("torch CUDA", _fact("cuda"), in_line=False),
                FactRow("torch BLAS", _blas, in_line=False)]

    def source_facts(self, host: dict[str, Any]) -> list[tuple[str, Any]]:
        return [("torch", (host.get("torch") or {}).get("version"))]

    def capabilities(self, python: str, system: str | None = None,
                     run: Runner | None = None) -> dict[str, str | None]:
        """`torch` (importable by `python`) and `mps` (torch's own answer); `system` and `run`
        (a command's stdout, None when it fails) are this machine's unless a test gives them."""
        run = run or stdout_of
        found = run([python, "-c", _IMPORTABLE]) is not None
        return {"torch": None if found else f"PyTorch is not installed for {python}",
                "mps": _mps(python, system or platform.system(), found, run)}

    def facts(self, project: Path, python: str) -> dict[str, Any]:
        """Version, CUDA, BLAS and default threads of the torch the runs will import."""
        return python_facts(python, _FACTS)


def _fact(key: str) -> Callable[[Sequence[Header], dict[str, Any]], str | None]:
    return lambda headers, host: (host.get("torch") or {}).get(key)


def _blas(headers: Sequence[Header], host: dict[str, Any]) -> str | None:
    printed = join(h.facts.get("blas") for h in headers if h.kind == "torch_blas")
    return printed or (host.get("torch") or {}).get("blas")


def _mps(python: str, system: str, torch_found: bool, run: Runner) -> str | None:
    """None when torch says MPS is available, else why not. Only macOS builds of torch have
    an MPS backend, so elsewhere torch is not imported to ask (seconds on every plan)."""
    if system != "Darwin":
        return f"needs Apple silicon with MPS (this is {system})"
    if not torch_found:
        return f"needs PyTorch to tell whether MPS works (not installed for {python})"
    out = run([python, "-c", MPS_PROBE])
    answer = (out or "").split()[-2:]
    if answer == ["True", "True"]:
        return None
    if answer == ["True", "False"]:
        return ("torch has MPS but says it is not available here "
                "(torch.backends.mps.is_available() is False: macOS 12.3+ and a Metal GPU)")
    if answer == ["False", "False"]:
        return "this torch was built without MPS (torch.backends.mps.is_built() is False)"
    return f"could not ask torch whether MPS works ({python} -c '{MPS_PROBE}' failed)"
