"""PyTorch's measurement-changing environment variables (its Program's `measure_env`): its
CUDA allocator and cuBLAS switches, and the CPU libraries it runs on (oneMKL, OpenMP, OpenBLAS,
ATen's dispatch, oneDNN).
"""

from __future__ import annotations

from orchestrator.programs.measure import TORCH_CUDA_ENV, Variable

_MKL_GUIDE = "Intel oneMKL Developer Guide for Linux"

VARIABLES: tuple[Variable, ...] = (
    Variable("TORCH_ALLOW_TF32_CUBLAS_OVERRIDE",
             "1 forces TF32 for f32 matmuls, overriding the program's precision setting",
             TORCH_CUDA_ENV),
    Variable("TORCH_CUBLAS_WORKSPACE_CACHE", "whether ATen keeps cuBLAS workspaces per stream",
             TORCH_CUDA_ENV),
    Variable("PYTORCH_NO_CUDA_MEMORY_CACHING",
             "1 turns off torch's caching allocator: every tensor is a cudaMalloc/cudaFree",
             TORCH_CUDA_ENV),
    Variable("PYTORCH_CUDA_ALLOC_CONF", "torch's CUDA allocator behaviour",
             TORCH_CUDA_ENV),
    Variable("PYTORCH_ALLOC_CONF", "torch's allocator behaviour", TORCH_CUDA_ENV),
    Variable("TORCH_BLAS_PREFER_CUBLASLT", "cuBLASLt instead of cuBLAS for matmuls",
             TORCH_CUDA_ENV),
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
)
