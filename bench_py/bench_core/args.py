"""The command line (docs/LINES.md, "Common arguments of both programs"), parsed by argparse with
a usage error turned into one ``error: ...`` line and exit status 2; the twin of
``bench-core/src/args.rs``. The value types (``positive_int``, ``shape``, ``seconds``) are
shared with ``exec_jax.py``. ``check_extras`` refuses, before any device work, what the options
beyond the chapter cannot do.
"""

from __future__ import annotations

import argparse
import math
import re
from pathlib import Path
from typing import NoReturn

from . import BenchError
from . import format as fmt
from .compiled import EXECS

DEVICES = ("cpu", "cuda", "mps", "auto")
MODES = ("mm", "warm", "accuracy")
PRECISIONS = ("fp32", "tf32")
DEFAULT_SHAPE = {"mm": (1024, 1024), "accuracy": (256, 256)}


class _Parser(argparse.ArgumentParser):
    """argparse, but a usage error is one ``error: ...`` line and exit status 2."""

    def error(self, message: str) -> NoReturn:
        raise BenchError(message, code=2)


def positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got {text!r}")
    return value


def shape(text: str) -> tuple[int, int]:
    match = re.fullmatch(r"\s*(\d+)\s*[xX]\s*(\d+)\s*", text)
    if not match or int(match.group(1)) < 1 or int(match.group(2)) < 1:
        raise argparse.ArgumentTypeError(
            f"expected MxN with M, N >= 1 (e.g. 1024x1024), got {text!r}"
        )
    return int(match.group(1)), int(match.group(2))


def seconds(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected seconds >= 0, got {text!r}") from None
    if not math.isfinite(value) or value < 0:
        raise argparse.ArgumentTypeError(f"expected seconds >= 0, got {text!r}")
    return value


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog="exec_gpu.py",
        description=(
            "Time an f32 matmul in PyTorch (no sync, with sync, device events, read-back, "
            "torch.utils.benchmark.Timer), or dump a deterministic matmul for the accuracy "
            "comparison. Output lines follow docs/LINES.md."
        ),
    )
    parser.add_argument(
        "--device",
        choices=DEVICES,
        default="auto",
        help="cpu, cuda, mps, or auto: the accelerator torch finds, else cpu (default auto)",
    )
    parser.add_argument(
        "--mode",
        choices=MODES,
        default="mm",
        help="mm: timing methods; accuracy: write a.npy, b.npy, c.npy; warm is burn only",
    )
    parser.add_argument(
        "--shape",
        type=shape,
        default=None,
        metavar="MxN",
        help="a is [M, N], b is [N, M] (default 1024x1024; accuracy: 256x256)",
    )
    parser.add_argument(
        "--reps",
        type=positive_int,
        default=20,
        metavar="N",
        help="timed runs per method (default 20)",
    )
    parser.add_argument(
        "--samples",
        action="store_true",
        help="after each summary line print a '# samples' line with every run, in seconds",
    )
    parser.add_argument(
        "--out",
        type=Path,
        default=None,
        metavar="DIR",
        help="accuracy mode (required there): folder for a.npy, b.npy, c.npy",
    )
    parser.add_argument(
        "--threads",
        type=positive_int,
        default=None,
        metavar="N",
        help="torch.set_num_threads(N) before anything else (default: torch's own choice)",
    )
    parser.add_argument(
        "--precision",
        choices=PRECISIONS,
        default="fp32",
        help="f32 matmul arithmetic: fp32 (TF32 off, default) or tf32 (TF32 allowed; cuda only)",
    )
    parser.add_argument(
        "--exec",
        dest="exec_mode",
        choices=EXECS,
        default="eager",
        help="how the matmul runs: eager (default), compile[:MODE] (torch.compile, Inductor; "
        "cpu and cuda) or cudagraph (one captured a @ b replayed; cuda)",
    )
    parser.add_argument(
        "--cache-dir",
        type=Path,
        default=None,
        metavar="DIR",
        help="compiled modes: Inductor's cache in DIR/inductor, Triton's in DIR/triton "
        "(TORCHINDUCTOR_CACHE_DIR, TRITON_CACHE_DIR; default: torch's own folders)",
    )
    for verb, when in (("load", "before the first compile (a pickle: read only from a "
                                "file and folder of this user that no one else may write)"),
                       ("save", "after the first call")):
        parser.add_argument(
            f"--{verb}-cache-artifacts",
            type=Path,
            default=None,
            metavar="FILE",
            help=f"compiled modes: {verb} torch.compile's mega-cache (every compile cache as "
            f"one blob, torch.compiler.{verb}_cache_artifacts) {when}",
        )
    parser.add_argument(
        "--energy",
        type=seconds,
        default=0.0,
        metavar="SECONDS",
        help="after everything, matmuls back to back for at least SECONDS, energy from NVML "
        "(cuda with pynvml; default 0: no energy block)",
    )
    parser.add_argument(
        "--profile-window",
        action="store_true",
        help="cuda, mm mode: one more block of --reps back-to-back matmuls between "
        "cudaProfilerStart and cudaProfilerStop, for a profiler started with "
        "--profile-from-start off (Nsight Compute: the orchestrator's profile runs)",
    )
    parser.add_argument(
        "--dump-kernels",
        type=Path,
        default=None,
        metavar="FILE",
        help="cuda, mm mode: write the kernel-time block's profiler device events as JSON "
        "(to capture a test fixture)",
    )
    return parser


def tf32_refusal(found: str) -> str:
    return f"--precision tf32 needs a CUDA device ({found}; TF32 is a CUDA tensor-core mode)"


def check_extras(args: argparse.Namespace) -> None:
    """Refuse, before any device work, what the options beyond the chapter cannot do."""
    if args.precision == "tf32" and args.device in ("cpu", "mps"):
        raise BenchError(tf32_refusal(f"got --device {args.device}"), code=2)
    for given, option in ((args.cache_dir, "--cache-dir"),
                          (args.load_cache_artifacts, "--load-cache-artifacts"),
                          (args.save_cache_artifacts, "--save-cache-artifacts")):
        if given is not None and not args.exec_mode.startswith("compile"):
            raise BenchError(f"{option} is for the compiled modes (got --exec "
                             f"{args.exec_mode})", code=2)
    dump = args.dump_kernels
    if dump is not None and not dump.resolve().parent.is_dir():
        folder = dump.resolve().parent
        raise BenchError(f"--dump-kernels {dump}: folder {folder} does not exist", code=2)
    if args.mode == "accuracy":
        for given, option in ((args.energy > 0, "--energy"), (dump is not None, "--dump-kernels"),
                              (args.profile_window, "--profile-window"),
                              (args.load_cache_artifacts is not None, "--load-cache-artifacts"),
                              (args.save_cache_artifacts is not None, "--save-cache-artifacts")):
            if given:
                fmt.note(f"{option} applies to --mode mm only; ignored in accuracy mode")
