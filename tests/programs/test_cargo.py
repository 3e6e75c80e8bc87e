"""Builds: binaries from cargo's JSON, one folder per feature set, no rebuild when up to date."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from orchestrator.experiments.config import Build
from orchestrator.programs.burn.cargo import Builder, build_key, source_hash

from ..conftest import CPU_BUILDS, PROJECT, USER_BUILD_CACHE

FAKE_CARGO = """#!{python}
import json, os, sys
args = sys.argv[1:]
log = os.path.join(os.path.dirname(sys.argv[0]), "calls.log")
open(log, "a").write(" ".join(args) + "\\n")
crate = args[args.index("-p") + 1]
features = args[args.index("--features") + 1] if "--features" in args else ""
if "broken" in features:
    sys.stderr.write("   Compiling x v0.1.0\\n")
    sys.stderr.write("error[E0425]: cannot find value `y`\\n  --> a.rs:1\\n")
    sys.exit(101)
target = args[args.index("--target-dir") + 1]
exe = os.path.join(target, "release", crate)
os.makedirs(os.path.dirname(exe), exist_ok=True)
open(exe, "w").write("binary built with features=" + features)
other = {{"reason": "compiler-artifact", "target": {{"name": "other"}}, "executable": None}}
print(json.dumps(other))
print(json.dumps({{"reason": "compiler-artifact", "target": {{"name": crate}}, "executable": exe}}))
print(json.dumps({{"reason": "build-finished", "success": True}}))
"""


@pytest.fixture
def fake_project(tmp_path: Path) -> tuple[Path, Path]:
    project = tmp_path / "project"
    shutil.copytree(PROJECT / "bench_rust", project / "bench_rust",
                    ignore=shutil.ignore_patterns("target"))
    cargo = tmp_path / "cargo"
    cargo.write_text(FAKE_CARGO.format(python=sys.executable))
    cargo.chmod(0o755)
    return project, cargo


def test_feature_sets_get_their_own_binary_and_fresh_builds_skip_cargo(fake_project) -> None:
    project, cargo = fake_project
    builder = Builder(project, cargo=str(cargo))
    cuda = Build(crate="exec-gpu", features=("cuda",))
    plain = Build(crate="exec-gpu")
    a, b = builder.build("cuda", cuda), builder.build("default", plain)
    assert a.status == b.status == "ok" and not a.fresh and not b.fresh
    assert a.binary == project / "build" / "bin" / "exec-gpu+cuda" / "exec-gpu"
    assert b.binary == project / "build" / "bin" / "exec-gpu" / "exec-gpu"
    assert a.binary.read_text() == "binary built with features=cuda"
    assert b.binary.read_text() == "binary built with features="
    calls = (cargo.parent / "calls.log").read_text().splitlines()
    assert calls[0].startswith("build --release -p exec-gpu --target-dir ")
    assert calls[0].endswith("--features cuda")
    again = Builder(project, cargo=str(cargo)).build("cuda", cuda)
    assert again.fresh and again.binary == a.binary
    assert len((cargo.parent / "calls.log").read_text().splitlines()) == 2


def test_a_source_change_rebuilds(fake_project) -> None:
    project, cargo = fake_project
    build = Build(crate="exec-cpu")
    Builder(project, cargo=str(cargo)).build("t", build)
    lib = next((project / "bench_rust").rglob("*.rs"))
    lib.write_text(lib.read_text() + "\n// touched\n")
    result = Builder(project, cargo=str(cargo)).build("t", build)
    assert not result.fresh


def test_failed_build_keeps_cargos_error(fake_project) -> None:
    project, cargo = fake_project
    # model_construct: the config would refuse an unknown feature before cargo ever saw it
    build = Build.model_construct(crate="exec-amx", features=("broken",), requires=(),
                                  expect_failure=False, env={}, note="")
    result = Builder(project, cargo=str(cargo)).build("broken", build)
    assert result.status == "failed" and result.binary is None
    assert result.error.startswith("error[E0425]: cannot find value `y`")
    assert "Compiling" in result.log


def test_no_cargo_and_no_binary_says_what_to_do(fake_project) -> None:
    project, _cargo = fake_project
    builder = Builder(project, cargo=None)
    builder.cargo = None
    result = builder.build("t", Build(crate="exec-cpu"))
    assert result.status == "failed"
    assert "cargo not found" in result.error and "build/bin" in result.error


def test_binaries_built_elsewhere_run_without_cargo(fake_project) -> None:
    project, cargo = fake_project
    Builder(project, cargo=str(cargo)).build("t", Build(crate="exec-cpu"))
    no_cargo = Builder(project, cargo=None)
    no_cargo.cargo = None
    result = no_cargo.build("t", Build(crate="exec-cpu"))
    assert result.status == "ok" and result.fresh


def test_source_hash_ignores_target_folder(tmp_path: Path) -> None:
    rust = tmp_path / "bench_rust"
    (rust / "target").mkdir(parents=True)
    (rust / "Cargo.toml").write_text("[workspace]")
    first = source_hash(rust)
    (rust / "target" / "junk").write_text("x")
    assert source_hash(rust) == first
    (rust / "Cargo.lock").write_text("lock")
    assert source_hash(rust) != first


@pytest.mark.cargo
def test_real_cargo_builds_the_cpu_crates(burn_builds) -> None:
    for name, build in CPU_BUILDS.items():
        result = burn_builds[name]
        assert result.binary is not None and result.binary.exists()
        assert result.binary.parent.name == build_key(build)
        stamp = json.loads((result.binary.parent / "stamp.json").read_text())
        assert stamp["crate"] == build.crate
    again = Builder(PROJECT).build("template", CPU_BUILDS["template"])
    assert again.fresh


@pytest.mark.cargo
def test_rust_unit_tests_pass(burn_builds) -> None:
    """bench-core's own tests: duration format, arguments, .npy writer, durations.tsv fresh.
    Same features as exec-cpu, so they reuse its compiled dependencies in the build cache."""
    done = subprocess.run(
        ["cargo", "test", "--release", "-q", "-p", "bench-core", "--features", "std,flex",
         "--target-dir", str(USER_BUILD_CACHE / "cargo-target")],
        cwd=PROJECT / "bench_rust", capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    assert "test result: ok" in done.stdout


def test_a_stopped_build_ends_cargos_whole_group(tmp_path: Path,
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    """Ctrl-C (here SIGUSR1 raising KeyboardInterrupt once cargo's child is up) must end the
    child cargo started, not only cargo."""
    import os
    import signal
    import threading
    import time

    from orchestrator.programs.burn.cargo import run_group

    pid_file = tmp_path / "rustc.pid"
    script = (f"import subprocess, time\nchild = subprocess.Popen(['sleep', '300'])\n"
              f"open({str(pid_file)!r}, 'w').write(str(child.pid))\ntime.sleep(300)\n")

    def interrupt(_signum: int, _frame: object) -> None:
        raise KeyboardInterrupt

    def once_started() -> None:
        while not (pid_file.exists() and pid_file.read_text()):
            time.sleep(0.01)
        os.kill(os.getpid(), signal.SIGUSR1)

    previous = signal.signal(signal.SIGUSR1, interrupt)
    try:
        threading.Thread(target=once_started, daemon=True).start()
        with pytest.raises(KeyboardInterrupt):
            run_group([sys.executable, "-c", script], tmp_path, dict(os.environ))
    finally:
        signal.signal(signal.SIGUSR1, previous)
    child = int(pid_file.read_text())
    for _ in range(500):  # SIGKILL is delivered at once; the zombie waits for its reaper
        status = Path(f"/proc/{child}/status")
        if not status.exists() or "\nState:\tZ" in status.read_text():
            break
        time.sleep(0.01)
    else:
        pytest.fail("cargo's child outlived the interrupted build")
