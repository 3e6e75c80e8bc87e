"""One run: environment, folder, and every way a program can misbehave (fake programs)."""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

import pytest

from orchestrator.experiments.plan import RunDef
from orchestrator.run import process
from orchestrator.run.runner import RunContext, _fresh_dir, execute, program_argv, program_env

from ..conftest import PROJECT, dead_within

GOOD_LINES = (
    "burn 0.22.1, features [std, flex], rayon threads 1\\n"
    "flex: device init 1.000ms\\n"
    "flex 8x8 matmul with sync, 3 runs: min 1.000µs median 2.000µs\\n"
)


def fake(tmp_path: Path, body: str) -> Path:
    """An executable that stands in for a benchmark binary."""
    path = tmp_path / "fake-bench"
    path.write_text(f"#!{sys.executable}\nimport os, sys, time, signal, subprocess\n{body}\n")
    path.chmod(0o755)
    return path


def run_fake(tmp_path: Path, body: str, timeout_s: float = 20, **kw: object):
    run = RunDef(experiment="t", program="burn", device="flex", mode="mm", shape=(8, 8), reps=3,
                 build="fake", crate="exec-cpu", timeout_s=timeout_s, **kw)
    ctx = RunContext(PROJECT, sys.executable, tmp_path / "scratch", {"fake": fake(tmp_path, body)})
    return execute(run, ctx)


def test_good_program_is_ok_and_everything_is_kept(tmp_path: Path) -> None:
    rec = run_fake(tmp_path, f"sys.stdout.write('{GOOD_LINES}')\nsys.stderr.write('note\\n')",
                   threads=3)
    assert rec.status == "ok", rec.reason
    assert rec.stdout.decode().startswith("burn 0.22.1")
    assert rec.stderr == b"note\n"
    assert rec.env["RAYON_NUM_THREADS"] == "3"
    assert rec.cwd == str(PROJECT / "bench_rust" / "exec-cpu")
    assert rec.load_before is not None and "load1" in rec.load_before
    assert rec.wall_s is not None and rec.wall_s > 0


@pytest.mark.parametrize(("body", "reason"), [
    ("sys.stdout.write('partial'); sys.exit(0)", "output ends in a partial line"),
    ("print('half a line', end=''); sys.stdout.flush(); os.abort()", "killed by signal SIGABRT"),
    ("sys.stderr.write('boom\\n'); sys.exit(3)", "exited with status 3: boom"),
    ("os.kill(os.getpid(), signal.SIGSEGV)", "killed by signal SIGSEGV"),
    ("pass", "printed nothing"),
])
def test_faults_are_failed_records(tmp_path: Path, body: str, reason: str) -> None:
    rec = run_fake(tmp_path, body)
    assert rec.status == "failed"
    assert rec.reason.startswith(reason), rec.reason


def test_invalid_utf8_is_kept_verbatim(tmp_path: Path) -> None:
    rec = run_fake(tmp_path, "sys.stdout.buffer.write(b'\\xff\\xfe bad bytes\\n' * 3)")
    assert rec.status == "ok"  # the sweep decides later that it printed no figure
    assert rec.stdout == b"\xff\xfe bad bytes\n" * 3


def test_huge_output_is_capped_not_fatal(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(process, "OUTPUT_CAP", 1_000_000)
    rec = run_fake(tmp_path, "for _ in range(5000): sys.stdout.write('x' * 999 + '\\n')")
    assert len(rec.stdout) == 1_000_000
    assert rec.status == "failed"  # what came after the cut (figures too) is lost
    assert rec.reason.startswith("output cut at 1000000 bytes")


def test_unwritable_scratch_is_a_failed_accuracy_run(tmp_path: Path) -> None:
    (tmp_path / "file").write_text("the results disk is not a folder here")
    run = RunDef(experiment="a", program="burn", device="flex", mode="accuracy", shape=(8, 8),
                 reps=1, build="fake", crate="exec-cpu")
    ctx = RunContext(PROJECT, sys.executable, tmp_path / "file" / "scratch",
                     {"fake": fake(tmp_path, "print('never started')")})
    rec = execute(run, ctx)
    assert rec.status == "failed" and rec.reason.startswith("cannot make scratch folder")


def test_hang_kills_the_whole_process_group(tmp_path: Path) -> None:
    pid_file = tmp_path / "child.pid"
    body = (f"child = subprocess.Popen(['sleep', '300'])\n"
            f"open({str(pid_file)!r}, 'w').write(str(child.pid))\n"
            "print('started', flush=True)\ntime.sleep(300)")
    start = time.monotonic()
    rec = run_fake(tmp_path, body, timeout_s=2)
    assert time.monotonic() - start < 30
    assert rec.status == "failed" and rec.reason.startswith("timed out after 2 s")
    assert rec.stdout == b"started\n"
    child = int(pid_file.read_text())
    assert dead_within(child), "the program's child survived the timeout"


def _dead(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/status").read_text()
    except FileNotFoundError:
        return True
    return "\nState:\tZ" in state  # killed, waiting for init to reap it


def test_environment_is_explicit(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENBLAS_CORETYPE", "Haswell")
    monkeypatch.setenv("RAYON_NUM_THREADS", "99")
    torch_run = RunDef(experiment="t", program="torch", device="cpu", mode="mm", shape=(8, 8),
                       reps=3, threads=2, env=(("CUBECL_AUTOTUNE_LEVEL", "minimal"),))
    env = program_env(torch_run)
    assert "OPENBLAS_CORETYPE" not in env and "RAYON_NUM_THREADS" not in env
    assert env["OMP_NUM_THREADS"] == env["MKL_NUM_THREADS"] == "2"
    assert env["CUBECL_AUTOTUNE_LEVEL"] == "minimal"
    assert env["PATH"] == os.environ["PATH"]
    burn_run = RunDef(experiment="t", program="burn", device="flex", mode="mm", shape=(8, 8),
                      reps=3, build="b", crate="exec-cpu")
    assert "RAYON_NUM_THREADS" not in program_env(burn_run)  # not asked: burn's own default


def test_argv_of_each_mode() -> None:
    ctx = RunContext(PROJECT, "/py", Path("/scratch"), {"cuda": Path("/bin/exec-gpu")})
    warm = RunDef(experiment="w", program="burn", device="cuda", mode="warm", shape=(64, 32),
                  reps=20, build="cuda", crate="exec-gpu", warmup="kept", timed_runs=3)
    assert program_argv(warm, ctx, None) == [
        "/bin/exec-gpu", "--device", "cuda", "--mode", "warm", "--shape", "64x32", "--reps",
        "20", "--warmup", "kept", "--timed-runs", "3", "--samples"]
    acc = RunDef(experiment="a", program="torch", device="cpu", mode="accuracy",
                 shape=(256, 256), reps=1, threads=1, samples=False)
    assert program_argv(acc, ctx, Path("/out")) == [
        "/py", str(PROJECT / "bench_py" / "exec_gpu.py"), "--device", "cpu", "--mode",
        "accuracy", "--shape", "256x256", "--reps", "1", "--threads", "1", "--out", "/out",
        "--precision", "fp32"]  # torch always says its arithmetic (the default: TF32 off)
    tf32 = RunDef(experiment="m", program="torch", device="cuda", mode="mm", shape=(64, 64),
                  reps=2, samples=False, precision="tf32")
    assert program_argv(tf32, ctx, None)[-2:] == ["--precision", "tf32"]


def test_quiet_gate_waits_bounded_and_records_it() -> None:
    from orchestrator.run.runner import wait_quiet

    loaded = wait_quiet(max_load1=1e-9, max_wait_s=0.3, poll_s=0.1)  # never this quiet
    assert loaded["went_ahead_loaded"] is True and 0.3 <= loaded["waited_s"] < 5
    off = wait_quiet(max_load1=None, max_wait_s=300, poll_s=5)
    assert off["went_ahead_loaded"] is False and off["waited_s"] < 1
    assert off["load1"] >= 0


@pytest.mark.parametrize("linked", ["scratch", "run"])
def test_a_scratch_folder_that_is_a_symlink_is_refused_and_its_target_kept(
        tmp_path: Path, linked: str) -> None:
    """Emptying <results>/scratch/<run> through a symlink would delete what it points to."""
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / "precious.txt").write_text("a user's file\n")
    scratch = tmp_path / "results" / "scratch"
    if linked == "scratch":
        scratch.parent.mkdir()
        scratch.symlink_to(elsewhere)
        run = scratch / "precious.txt"
    else:
        scratch.mkdir(parents=True)
        run = scratch / "run"
        run.symlink_to(elsewhere)
    reason = _fresh_dir(run)
    assert reason is not None and "is a symlink" in reason
    assert (elsewhere / "precious.txt").read_text() == "a user's file\n"
    assert _fresh_dir(tmp_path / "results" / "plain" / "run") is None  # an ordinary folder
