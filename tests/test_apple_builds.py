"""The chapter's Apple builds compile here: `cargo check` of the Metal device
(`exec-gpu --features metal`, bench-core's `metal` cfg branches included) and of gemm's Apple AMX
kernels (`exec-amx --features apple-amx`) on Linux, so CI fails when either code path stops
compiling; and what `accelerate` does under `cargo check` on a non-Apple target.

The checks share the real builds' target folder in the user's build cache (it outlives a clone:
a second clone or CI run checks warm): a warm check re-checks only the workspace crates
(seconds), a cold one compiles the dependencies' metadata (minutes; bench_rust/README.md gives
the figures).
"""

from __future__ import annotations

import re
import shutil
import subprocess
import sys

import pytest

from .conftest import PROJECT, USER_BUILD_CACHE

TARGET = USER_BUILD_CACHE / "cargo-target"
# A cold check of exec-gpu --features metal took about 4 minutes on the 2-core build box.
TIMEOUT_S = 1800

pytestmark = pytest.mark.cargo

# `--message-format short`: `path:line:col: error[E0425]: ...` or `error: ...`.
ERROR = re.compile(r"^(?:\S+:\d+:\d+: )?error(?:\[E\d+\])?: ")


def first_error(stderr: str) -> str:
    """cargo's first error line (the cause; the last one is often only `could not compile`)."""
    errors = [line for line in stderr.splitlines() if ERROR.match(line)]
    return errors[0] if errors else stderr.strip()[-2000:]


def cargo_check(crate: str, feature: str) -> subprocess.CompletedProcess[str]:
    cargo = shutil.which("cargo")
    assert cargo is not None, "cargo is not on PATH (these tests need the real toolchain)"
    return subprocess.run(
        # -v: cargo names every unit, `Fresh` ones too, so a warm check shows it reached `crate`.
        [cargo, "check", "-v", "--release", "--message-format", "short", "-p", crate,
         "--features", feature, "--target-dir", str(TARGET)],
        cwd=PROJECT / "bench_rust", capture_output=True, text=True, timeout=TIMEOUT_S,
        check=False)


@pytest.mark.parametrize(("crate", "feature"), [("exec-gpu", "metal"), ("exec-amx", "apple-amx")])
def test_apple_build_compiles(crate: str, feature: str) -> None:
    done = cargo_check(crate, feature)
    assert done.returncode == 0, (
        f"cargo check -p {crate} --features {feature} failed: {first_error(done.stderr)}")
    # The check really covered the workspace crates with the feature's code (bench-core's cfg
    # branches), not only dependencies.
    for unit in (crate, "bench-core"):
        assert re.search(rf"^\s*(Checking|Fresh) {unit} v", done.stderr, re.M), done.stderr[-2000:]


@pytest.mark.skipif(sys.platform == "darwin", reason="on macOS the accelerate build links")
def test_accelerate_check_fails_off_apple() -> None:
    """`accelerate` brings accelerate-src, whose build script asks rustc for
    `-l framework=Accelerate`; rustc refuses that kind on a non-Apple target while parsing its
    options, before any code generation, so even `cargo check` fails (no linking involved)."""
    done = cargo_check("exec-amx", "accelerate")
    assert done.returncode != 0, "cargo check --features accelerate passed on a non-Apple target"
    err = first_error(done.stderr)
    assert "library kind `framework` is only supported on Apple targets" in err, err
    assert "accelerate-src" in done.stderr, done.stderr[-2000:]
