"""JAX: bench_py/exec_jax.py, run by the sweep's Python (the machine's own JAX on a GPU box).

It takes `--threads N` (XLA's CPU pool, NPROC; confirmed by the `jax VERSION, threads N` header),
`--precision default|highest` (on cuda the default may be TF32: the header says `unknown` and
the accuracy arrays decide) and, in a cache sweep, `--cache-dir` for its persistent compilation
cache, kept in `bench_py/target/jax-cache` (cold: emptied and proven empty; warm: proven by the
entries it holds, programs/jax/cache.py). Headers: `jax VERSION, threads N`,
`jax precision fp32|unknown (why)`, `jax cache DIR, min compile time S s, min entry size B B`.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any, ClassVar

from orchestrator.programs.base import Paths, Program, python_facts, stdout_of
from orchestrator.programs.jax import cache
from orchestrator.programs.measure import Variable
from orchestrator.programs.naming import Naming
from orchestrator.records import CacheState, Header, RunDef

_HEADER = re.compile(r"jax ([0-9][^\s,]*)(?:, threads ([0-9]{1,9}))?")
_PRECISION_HEADER = re.compile(r"jax precision (fp32|tf32|unknown)(?: \((.*)\))?")
_CACHE_HEADER = re.compile(r"jax cache (?:off|.+, min compile time \S+ s, min entry size \d+ B)")
_FACTS = ("import json,jax;d=jax.devices();print(json.dumps({'version':jax.__version__,"
          "'backend':jax.default_backend(),'devices':[x.device_kind for x in d]}))")
_IMPORTABLE = "import importlib.util,sys; sys.exit(importlib.util.find_spec('jax') is None)"


# what changes a JAX run's measurement: XLA's options, its allocator, its matmul arithmetic
MEASURE_ENV = (
    Variable("XLA_FLAGS", "XLA's compiler options (autotuning, fusion, GPU flags)",
             "OpenXLA docs, 'XLA Flags Guidance'"),
    Variable("XLA_PYTHON_CLIENT_PREALLOCATE", "JAX's GPU memory preallocation",
             "JAX docs, 'GPU memory allocation'"),
    Variable("JAX_DEFAULT_MATMUL_PRECISION", "the precision of JAX's f32 matmuls (TF32 or not)",
             "JAX docs, jax.default_matmul_precision"),
)


class Jax(Program):
    name = "jax"
    place = 3
    measure_env = MEASURE_ENV
    title = "JAX"
    naming = Naming(plot_marker="^", plot_colors={"cpu": "#2ca02c", "cuda": "#98df8a"})
    devices = ("cpu", "cuda")
    device_needs: ClassVar[dict[str, tuple[str, ...]]] = {"cpu": ("jax",), "cuda": ("jax", "cuda")}
    # XLA compiles to SASS itself (ptxas/nvJitLink), so the driver's JIT cache should stay
    # empty, as for torch: each series gets its own folder, recorded
    caches = cache.JaxCaches(devices=("cpu", "cuda"), home=("bench_py", "target", "jax-cache"),
                             driver_devices=("cuda",), env=cache.CACHE_ENV)
    env_values = cache.ENV_VALUES
    modes = ("mm", "warm", "accuracy")
    thread_flag = True
    provides = ("jax",)
    async_cpu = True  # jax_cpu_enable_async_dispatch: the CPU returns before the work is done
    precisions: ClassVar[dict[str, tuple[str, ...]]] = {
        "cpu": ("default", "highest"), "cuda": ("default", "highest")}
    # the accuracy product's op, as XLA's compiled module names it (stat `kernel_ops`)
    methods: ClassVar[dict[str, str]] = {"accuracy kernel (xla)": "accuracy_kernel"}

    def command(self, run: RunDef, paths: Paths) -> list[str]:
        return [paths.python, str(paths.project / "bench_py" / "exec_jax.py")]

    def argv(self, run: RunDef, paths: Paths, out_dir: Path | None) -> list[str]:
        """The contract's argv; in a cache sweep, the persistent cache's folder."""
        argv = super().argv(run, paths, out_dir)
        if run.cache != CacheState.NONE:
            argv += ["--cache-dir", str(paths.project.joinpath(*self.caches.home))]
        return argv

    def parse_header(self, line: str, line_no: int) -> Header | None:
        if (found := _PRECISION_HEADER.fullmatch(line)) is not None:
            return Header("jax_precision", None, None, line_no, found.group(1))
        if _CACHE_HEADER.fullmatch(line) is not None:
            return Header("jax_cache", None, None, line_no)
        if (found := _HEADER.fullmatch(line)) is not None:
            version, threads = found.groups()
            return Header("jax", version, None if threads is None else int(threads), line_no)
        return None

    def capabilities(self, python: str) -> dict[str, str | None]:
        """`jax`: importable by the Python the runs use."""
        found = stdout_of([python, "-c", _IMPORTABLE]) is not None
        return {"jax": None if found else f"JAX is not installed for {python}"}

    def facts(self, project: Path, python: str) -> dict[str, Any]:
        """Version, default backend and device kinds of the JAX the runs will import."""
        return python_facts(python, _FACTS)
