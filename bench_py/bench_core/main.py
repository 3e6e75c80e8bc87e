"""From the command line to a mode, and from a failure to an exit status: 0 on success; an
expected failure prints one line ``error: ...`` on stderr and exits 2 for bad arguments, 1 for
anything else (no such device, a torch runtime error, a write error). The twin of
``main_with_args`` in ``bench-core/src/lib.rs``.
"""

from __future__ import annotations

from collections.abc import Sequence

from . import BenchError, args, bench, compiled, facts, guarded, megacache
from . import format as fmt


def _run(argv: Sequence[str] | None) -> None:
    given = args.build_parser().parse_args(argv)
    if given.mode == "warm":
        raise BenchError("--mode warm is burn only (the torch program has mm and accuracy)", code=2)
    if given.mode == "accuracy" and given.out is None:
        raise BenchError("--mode accuracy needs --out DIR", code=2)
    m, n = given.shape or args.DEFAULT_SHAPE[given.mode]
    args.check_extras(given)
    # the blob is read (and refused where another user could have written it) before torch
    artifacts = megacache.Artifacts.of(given.load_cache_artifacts, given.save_cache_artifacts)

    if given.cache_dir is not None:  # before torch is imported: Inductor and Triton read these
        compiled.set_cache_dir(given.cache_dir)
    try:
        import numpy  # noqa: F401  (checked here so a missing numpy is one clear line)
        import torch
    except ImportError as exc:
        raise BenchError(f"cannot import {exc.name or 'a dependency'}: {exc}") from None

    if given.threads is not None:
        torch.set_num_threads(given.threads)
    dev = facts.resolve_device(given.device)
    compiled.check(given.exec_mode, dev.label)
    precision = "fp32"
    if dev.label == "cuda":
        facts.set_precision(given.precision)
        precision = facts.cuda_matmul_precision()
    elif given.precision == "tf32":  # --device auto found no CUDA device
        raise BenchError(args.tf32_refusal(f"--device auto found {dev.label}"), code=2)

    facts.print_headers(precision)
    if given.exec_mode != compiled.EAGER:  # eager prints what it always printed
        fmt.emit(compiled.exec_header(given.exec_mode, given.cache_dir))
    if given.mode == "mm":
        extras = bench.Extras(given.dump_kernels, given.energy, precision, given.profile_window,
                              given.exec_mode, artifacts)
        bench.run_mm(dev, m, n, given.reps, given.samples, extras)
    else:
        bench.run_accuracy(dev, m, n, given.out, given.exec_mode)


def main(argv: Sequence[str] | None = None) -> int:
    # torch runtime errors (device, memory) and file writes are expected failures too
    return guarded(_run, argv, (RuntimeError, OSError))
