"""Environment variables that change what a run measures: the one list, each with its source.

A run's environment is explicit (run/runner.py passes only PATH, HOME, locale and the like, then
the experiment's `env`), so whatever of these a run had came from the experiments file and is in
its definition. The dataset carries them per run in the column `measure_env`
(`NAME=VALUE; ...`, in this list's order) and the report warns once per variable and value,
naming what it changes and where that is documented. A name ending in `*` is a prefix (every
`CUBECL_*` variable). `PROOF_BREAKERS` are the variables known to defeat a program's printed
proof (the queued window's `start event waited` line): the report names them beside the failed
proof rather than the method's premise.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import NamedTuple


class Variable(NamedTuple):
    name: str  # exact name, or a prefix ending in '*'
    changes: str  # what it changes in the measurement
    source: str  # where the library documents it


_CUDA_ENV = ("CUDA Programming Guide, appendix 'CUDA Environment Variables' "
             "(docs.nvidia.com/cuda/cuda-programming-guide/05-appendices/environment-variables.html)")
_TORCH_CUDA_ENV = ("PyTorch docs, 'CUDA Environment Variables' "
                   "(docs.pytorch.org/docs/stable/cuda_environment_variables.html)")
_MKL_GUIDE = "Intel oneMKL Developer Guide for Linux"

VARIABLES: tuple[Variable, ...] = (
    Variable("CUDA_LAUNCH_BLOCKING",
             "every kernel launch waits for the kernel: no asynchronous launch, so no-sync and "
             "queued device-time figures time a blocked host, not a queue", _CUDA_ENV),
    Variable("CUDA_DEVICE_MAX_CONNECTIONS",
             "the number of hardware work queues streams map to (concurrency between streams)",
             _CUDA_ENV),
    Variable("CUDA_MODULE_LOADING",
             "lazy or eager loading of kernels: where the first call's module load falls",
             _CUDA_ENV),
    Variable("CUDA_FORCE_PTX_JIT",
             "kernels JIT-compiled from PTX instead of the shipped binaries (first calls)",
             _CUDA_ENV),
    Variable("CUDA_CACHE_DISABLE", "the driver's JIT cache off: every JIT compile is cold",
             _CUDA_ENV),
    Variable("NVIDIA_TF32_OVERRIDE",
             "0 forbids TF32 in cuBLAS and cuDNN whatever the program asks: the arithmetic",
             "cuBLAS docs, cublasSetMathMode / 'cublasMath_t' (docs.nvidia.com/cuda/cublas)"),
    Variable("TORCH_ALLOW_TF32_CUBLAS_OVERRIDE",
             "1 forces TF32 for f32 matmuls, overriding the program's precision setting",
             _TORCH_CUDA_ENV),
    Variable("CUBLAS_WORKSPACE_CONFIG",
             "cuBLAS's workspace size and count: which algorithms cuBLAS may pick",
             "cuBLAS docs, 'Results reproducibility'; " + _TORCH_CUDA_ENV),
    Variable("TORCH_CUBLAS_WORKSPACE_CACHE", "whether ATen keeps cuBLAS workspaces per stream",
             _TORCH_CUDA_ENV),
    Variable("PYTORCH_NO_CUDA_MEMORY_CACHING",
             "1 turns off torch's caching allocator: every tensor is a cudaMalloc/cudaFree",
             _TORCH_CUDA_ENV),
    Variable("PYTORCH_CUDA_ALLOC_CONF", "torch's CUDA allocator behaviour",
             _TORCH_CUDA_ENV),
    Variable("PYTORCH_ALLOC_CONF", "torch's allocator behaviour", _TORCH_CUDA_ENV),
    Variable("TORCH_BLAS_PREFER_CUBLASLT", "cuBLASLt instead of cuBLAS for matmuls",
             _TORCH_CUDA_ENV),
    Variable("MKL_CBWR",
             "oneMKL's conditional numerical reproducibility: the code path (and results) "
             "pinned to an older instruction set",
             _MKL_GUIDE + ", 'Setting the Environment Variable for Conditional Numerical "
             "Reproducibility'"),
    Variable("MKL_ENABLE_INSTRUCTIONS",
             "the newest instruction set oneMKL dispatches to (e.g. AVX2 on an AVX-512 CPU)",
             _MKL_GUIDE + ", 'Instruction Set Specific Dispatching on Intel Architectures'"),
    Variable("MKL_NUM_THREADS",
             "oneMKL's threads; torch's --threads (set_num_threads) sets them again at start, "
             "but MKL calls made before that use this", _MKL_GUIDE + ", 'Techniques to Set "
             "the Number of Threads'; PyTorch docs, 'CPU threading and TorchScript inference'"),
    Variable("MKL_DYNAMIC", "oneMKL may use fewer threads than asked",
             _MKL_GUIDE + ", 'MKL_DYNAMIC'"),
    Variable("OMP_NUM_THREADS",
             "OpenMP's threads: torch's intra-op pool unless --threads sets it; the orchestrator "
             "sets it with --threads, an experiment's value wins over that",
             "OpenMP specification, 'Environment Variables'; PyTorch docs, 'CPU threading and "
             "TorchScript inference'"),
    Variable("OMP_PROC_BIND", "OpenMP thread binding: which cores the threads run on",
             "OpenMP specification, 'Environment Variables'"),
    Variable("OMP_PLACES", "OpenMP thread places", "OpenMP specification, 'Environment Variables'"),
    Variable("OMP_WAIT_POLICY", "whether idle OpenMP threads spin or sleep (time between calls)",
             "OpenMP specification, 'Environment Variables'"),
    Variable("KMP_AFFINITY", "Intel OpenMP thread affinity",
             "Intel oneAPI DPC++/C++ Compiler docs, 'Thread Affinity Interface'"),
    Variable("KMP_BLOCKTIME", "how long Intel OpenMP threads spin after a parallel region",
             "Intel oneAPI DPC++/C++ Compiler docs, 'Supported Environment Variables'"),
    Variable("GOMP_CPU_AFFINITY", "GNU OpenMP thread affinity",
             "GCC libgomp manual, 'GOMP_CPU_AFFINITY'"),
    Variable("OPENBLAS_NUM_THREADS", "OpenBLAS's threads", "OpenBLAS README, 'Setting the "
             "number of threads using environment variables'"),
    Variable("ATEN_CPU_CAPABILITY",
             "the vector code path of ATen's CPU kernels (default, avx2, avx512, ...)",
             "PyTorch source, aten/src/ATen/native/DispatchStub.cpp (read at start); "
             "torch.backends.cpu.get_cpu_capability"),
    Variable("DNNL_MAX_CPU_ISA", "the newest instruction set oneDNN's kernels use",
             "oneDNN docs, 'CPU Dispatcher Control'"),
    Variable("ONEDNN_MAX_CPU_ISA", "the newest instruction set oneDNN's kernels use",
             "oneDNN docs, 'CPU Dispatcher Control'"),
    Variable("DNNL_DEFAULT_FPMATH_MODE", "oneDNN's implicit down-conversion of f32 math",
             "oneDNN docs, 'Primitive Attributes: floating-point math mode'"),
    Variable("ONEDNN_DEFAULT_FPMATH_MODE", "oneDNN's implicit down-conversion of f32 math",
             "oneDNN docs, 'Primitive Attributes: floating-point math mode'"),
    Variable("RAYON_NUM_THREADS",
             "burn's CPU threads; the orchestrator sets it from `threads`, an experiment's "
             "value wins over that", "rayon docs, ThreadPoolBuilder::num_threads"),
    Variable("XLA_FLAGS", "XLA's compiler options (autotuning, fusion, GPU flags)",
             "OpenXLA docs, 'XLA Flags Guidance'"),
    Variable("XLA_PYTHON_CLIENT_PREALLOCATE", "JAX's GPU memory preallocation",
             "JAX docs, 'GPU memory allocation'"),
    Variable("JAX_DEFAULT_MATMUL_PRECISION", "the precision of JAX's f32 matmuls (TF32 or not)",
             "JAX docs, jax.default_matmul_precision"),
    Variable("CUBECL_*",
             "cubecl's runtime settings (autotune level, compilation and profiling options): "
             "what burn's GPU backends run and how they tune it",
             "cubecl docs, GlobalConfig (cubecl.toml and its CUBECL_ environment overrides)"),
)

# The variables known to defeat the queued window's proof (bench_py's `start event waited`):
# a blocking launch returns only when the kernel is done, so the spin kernel is over before the
# start event is even queued.
PROOF_BREAKERS = ("CUDA_LAUNCH_BLOCKING",)


def variable(name: str) -> Variable | None:
    """The list's entry for `name`: exact, else the first prefix it starts with."""
    for entry in VARIABLES:
        if entry.name == name or (entry.name.endswith("*") and name.startswith(entry.name[:-1])):
            return entry
    return None


def found(env: Mapping[str, str] | Iterable[tuple[str, str]]) -> list[tuple[str, str, Variable]]:
    """(name, value, entry) of every listed variable in `env`, in the list's order."""
    pairs = dict(env.items() if isinstance(env, Mapping) else env)
    order = {entry.name: i for i, entry in enumerate(VARIABLES)}
    hits = [(name, value, entry) for name, value in pairs.items()
            if (entry := variable(name)) is not None]
    return sorted(hits, key=lambda hit: (order[hit[2].name], hit[0]))


def column(env: Mapping[str, str] | Iterable[tuple[str, str]]) -> str:
    """The dataset's `measure_env`: `NAME=VALUE; ...` of the listed variables, '' if none.
    A value's own `;` is written `\\;` and its `\\` as `\\\\`, so a value holding "; "
    (`XLA_FLAGS="--a; --b"`) reads back as one value, not two variables."""
    return "; ".join(f"{name}={_escape(value)}" for name, value, _ in found(env))


def _escape(value: str) -> str:
    return value.replace("\\", "\\\\").replace(";", "\\;")


def parse_column(text: object) -> list[tuple[str, str]]:
    """`measure_env` back into (name, value) pairs ('' or NaN: none): split at the `; ` no
    backslash escapes, each value unescaped."""
    if not isinstance(text, str) or not text:
        return []
    parts, part, chars = [], [], iter(text)
    for char in chars:
        if char == "\\":
            part.append(next(chars, ""))  # an escaped `;` or `\\`: the value's own
        elif char == ";":
            parts.append("".join(part))
            part = []
        else:
            part.append(char)
    parts.append("".join(part))
    pairs = []
    for item in parts:
        name, _, value = item.removeprefix(" ").partition("=")
        if name:
            pairs.append((name, value))
    return pairs


def pairs_text(text: object) -> list[str]:
    """`NAME=VALUE` of each variable in a `measure_env` cell, values unescaped."""
    return [f"{name}={value}" for name, value in parse_column(text)]


def breaks_proof(text: object) -> list[str]:
    """`NAME=VALUE` of the PROOF_BREAKERS in a `measure_env` cell (set and not '0')."""
    return [f"{name}={value}" for name, value in parse_column(text)
            if name in PROOF_BREAKERS and value.strip() not in ("", "0")]
