"""Environment variables that change what a run measures: their entry type, and the ones of
no one framework (the CUDA driver's, cuBLAS's).

Each framework's own list is its Program's `measure_env` (programs/<framework>/); the one list
the dataset and the report read is assembled from the registry (data/measure_env.py). A name
ending in `*` is a prefix (every `CUBECL_*` variable).
"""

from __future__ import annotations

from typing import NamedTuple


class Variable(NamedTuple):
    name: str  # exact name, or a prefix ending in '*'
    changes: str  # what it changes in the measurement
    source: str  # where the library documents it


CUDA_ENV = ("CUDA Programming Guide, appendix 'CUDA Environment Variables' "
            "(docs.nvidia.com/cuda/cuda-programming-guide/05-appendices/environment-variables.html)")
TORCH_CUDA_ENV = ("PyTorch docs, 'CUDA Environment Variables' "
                   "(docs.pytorch.org/docs/stable/cuda_environment_variables.html)")

# the CUDA driver's and cuBLAS's: whichever program runs on CUDA
SHARED: tuple[Variable, ...] = (
    Variable("CUDA_LAUNCH_BLOCKING",
             "every kernel launch waits for the kernel: no asynchronous launch, so no-sync and "
             "queued device-time figures time a blocked host, not a queue", CUDA_ENV),
    Variable("CUDA_DEVICE_MAX_CONNECTIONS",
             "the number of hardware work queues streams map to (concurrency between streams)",
             CUDA_ENV),
    Variable("CUDA_MODULE_LOADING",
             "lazy or eager loading of kernels: where the first call's module load falls",
             CUDA_ENV),
    Variable("CUDA_FORCE_PTX_JIT",
             "kernels JIT-compiled from PTX instead of the shipped binaries (first calls)",
             CUDA_ENV),
    Variable("CUDA_CACHE_DISABLE", "the driver's JIT cache off: every JIT compile is cold",
             CUDA_ENV),
    Variable("NVIDIA_TF32_OVERRIDE",
             "0 forbids TF32 in cuBLAS and cuDNN whatever the program asks: the arithmetic",
             "cuBLAS docs, cublasSetMathMode / 'cublasMath_t' (docs.nvidia.com/cuda/cublas)"),
    Variable("CUBLAS_WORKSPACE_CONFIG",
             "cuBLAS's workspace size and count: which algorithms cuBLAS may pick",
             "cuBLAS docs, 'Results reproducibility'; " + TORCH_CUDA_ENV),
)
