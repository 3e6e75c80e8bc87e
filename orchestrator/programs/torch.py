"""PyTorch: bench_py/exec_gpu.py, run by the sweep's Python.

It takes `--threads` and the BLAS libraries' thread variables and `--precision fp32|tf32`
(TF32 on CUDA only), prints `torch VERSION, threads N`, `torch BLAS_INFO=...` and
`torch precision fp32|tf32` headers, times with CUDA/MPS events (`cuda.Event time`), and on the
CPU is the reference every build's accuracy is compared with.
"""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path
from typing import Any, ClassVar

from orchestrator.data.records import Header, RunDef
from orchestrator.programs.base import Paths, Program

_HEADER = re.compile(r"torch ([0-9][^\s,]*)(?:, threads ([0-9]{1,9}))?")
_BLAS_HEADER = re.compile(r"torch BLAS_INFO=(\S*)")
_PRECISION_HEADER = re.compile(r"torch precision (fp32|tf32)(?: \((.*)\))?")
_EVENT_TIME = re.compile(r"[a-z]+\.Event time")  # torch.mps / cuda / xpu .Event
_FACTS = (
    "import json,torch,re;"
    "cfg=torch.__config__.show();m=re.search(r'BLAS_INFO=([^,\\s]+)',cfg);"
    "print(json.dumps({'version':torch.__version__,'cuda':torch.version.cuda,"
    "'blas':m.group(1) if m else None,'threads':torch.get_num_threads()}))"
)
_IMPORTABLE = "import importlib.util,sys; sys.exit(importlib.util.find_spec('torch') is None)"


class Torch(Program):
    name = "torch"
    title = "PyTorch"
    aliases = ("pytorch",)
    devices = ("cpu", "cuda", "mps", "auto")
    # its own CUDA_CACHE_PATH too: precompiled SASS, so it should stay empty (recorded)
    driver_cache_devices = ("cuda", "auto")
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
    labels: ClassVar[dict[str, str]] = {"mps": "mps", "xpu": "xpu"}
    reference_device = "cpu"
    # TF32 exists only on CUDA (Ampere and later); CPU and MPS compute f32 matmuls in f32
    precisions: ClassVar[dict[str, tuple[str, ...]]] = {
        "cuda": ("fp32", "tf32"), "cpu": ("fp32",), "mps": ("fp32",), "auto": ("fp32",)}

    def command(self, run: RunDef, paths: Paths) -> list[str]:
        return [paths.python, str(paths.project / "bench_py" / "exec_gpu.py")]

    def method_of(self, text: str) -> str | None:
        found = self.methods.get(text)
        return "device_time" if found is None and _EVENT_TIME.fullmatch(text) else found

    def parse_header(self, line: str, line_no: int) -> Header | None:
        if (match := _BLAS_HEADER.fullmatch(line)) is not None:  # a torch program's 2nd header
            return Header("torch_blas", None, None, (), match.group(1), line_no)
        if (match := _PRECISION_HEADER.fullmatch(line)) is not None:
            return Header("torch_precision", None, None, (), None, line_no, match.group(1))
        if (match := _HEADER.fullmatch(line)) is not None:
            version, threads = match.groups()
            return Header("torch", version, None if threads is None else int(threads), (), None,
                          line_no)
        return None

    def capabilities(self, python: str) -> dict[str, str | None]:
        try:
            done = subprocess.run([python, "-c", _IMPORTABLE], capture_output=True, timeout=60)
            found = done.returncode == 0
        except (OSError, subprocess.TimeoutExpired):
            found = False
        return {"torch": None if found else f"PyTorch is not installed for {python}"}

    def facts(self, project: Path, python: str) -> dict[str, Any]:
        """Version, CUDA, BLAS and default threads of the torch the runs will import."""
        try:
            done = subprocess.run([python, "-c", _FACTS], capture_output=True, text=True,
                                  timeout=120, check=False)
        except (OSError, subprocess.TimeoutExpired):
            return {}
        out = done.stdout.strip() if done.returncode == 0 else ""
        try:
            return dict(json.loads(out.splitlines()[-1])) if out else {}
        except ValueError:
            return {}
