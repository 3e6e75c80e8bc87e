"""Run one benchmark process: explicit environment, chosen folder, cache action, timeout.

The orchestrator does nothing while a measured program runs: output goes to files (no pipe to
drain, no thread), and the parent only waits. A crash, a non-zero exit, a signal, a timeout
(the whole process group is killed), empty, partial or over-long output becomes a failed record
with the stderr tail, never an exception that stops the sweep.
"""

from __future__ import annotations

import contextlib
import os
import select
import shutil
import signal
import subprocess
import tempfile
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from orchestrator import signals
from orchestrator.errors import CacheSafetyError
from orchestrator.run.cache import CacheState, cache_dir_for, config_override, remove_cache
from orchestrator.run.machine import Load
from orchestrator.spec.plan import RunDef

# What a measured process inherits from the orchestrator's environment; everything else is set
# explicitly per run, so nothing leaks from one run (or from the user's shell) into the next.
PASS_THROUGH = ("PATH", "HOME", "USER", "LOGNAME", "LANG", "LC_ALL", "LC_CTYPE", "TMPDIR",
                "TERM", "LD_LIBRARY_PATH", "DYLD_LIBRARY_PATH", "CUDA_PATH", "CUDA_HOME",
                "CUDA_VISIBLE_DEVICES", "NVIDIA_VISIBLE_DEVICES", "SYSTEMROOT")
TORCH_THREAD_VARS = ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS",
                     "VECLIB_MAXIMUM_THREADS", "NUMEXPR_NUM_THREADS")
OUTPUT_CAP = 32 * 1024 * 1024  # bytes of stdout/stderr kept per run
STDERR_TAIL = 2000


@dataclass
class Outcome:
    """What one process did."""

    returncode: int | None
    timed_out: bool
    wall_s: float
    stdout: bytes
    stderr: bytes
    truncated: bool = False

    def failure(self, timeout_s: float) -> str | None:
        if self.timed_out:
            return f"timed out after {timeout_s:g} s (process group killed)"
        if self.returncode is None:
            return "did not start"
        if self.returncode < 0:
            try:
                name = signal.Signals(-self.returncode).name
            except ValueError:
                name = str(-self.returncode)
            return f"killed by signal {name}"
        if self.returncode != 0:
            return f"exited with status {self.returncode}"
        if self.truncated:  # the figures after the cut are lost: the run cannot be trusted
            return f"output cut at {OUTPUT_CAP} bytes (the rest is lost)"
        if not self.stdout.strip():
            return "printed nothing"
        if not self.stdout.endswith(b"\n"):
            return "output ends in a partial line"
        return None


@dataclass
class RunRecord:
    """Everything kept about one run, measured or not."""

    run: RunDef
    role: str = "measure"  # measure | priming
    status: str = "ok"  # ok | failed | skipped
    reason: str = ""
    started_at: float = 0.0
    ended_at: float = 0.0
    wall_s: float | None = None
    returncode: int | None = None
    load_before: dict[str, float] | None = None
    load_after: dict[str, float] | None = None
    gate: dict[str, Any] | None = None
    argv: list[str] = field(default_factory=list)
    env: dict[str, str] = field(default_factory=dict)
    cwd: str = ""
    cache: dict[str, Any] | None = None
    stdout: bytes = b""
    stderr: bytes = b""
    artifacts: dict[str, bytes] = field(default_factory=dict)
    expect_failure: bool = False

    @property
    def run_id(self) -> str:
        return self.run.run_id + ("-prime" if self.role == "priming" else "")

    def stderr_tail(self) -> str:
        return self.stderr[-STDERR_TAIL:].decode("utf-8", "replace").strip()


@dataclass(frozen=True)
class RunContext:
    project: Path
    python: str
    scratch: Path  # where accuracy runs write their arrays before they go into the store
    binaries: dict[str, Path]  # build name -> binary


def program_cwd(run: RunDef, project: Path) -> Path:
    """burn's cache depends on the folder a program starts in: each crate's own folder."""
    if run.program == "burn":
        return project / "bench_rust" / str(run.crate)
    return project


def program_env(run: RunDef, base: dict[str, str] | None = None) -> dict[str, str]:
    source = os.environ if base is None else base
    env = {k: source[k] for k in PASS_THROUGH if k in source}
    if run.threads is not None:
        if run.program == "burn":
            env["RAYON_NUM_THREADS"] = str(run.threads)
        else:
            env.update(dict.fromkeys(TORCH_THREAD_VARS, str(run.threads)))
    env["PYTHONUNBUFFERED"] = "1"
    env.update(dict(run.env))
    return env


def program_argv(run: RunDef, ctx: RunContext, out_dir: Path | None) -> list[str]:
    if run.program == "torch":
        argv = [ctx.python, str(ctx.project / "bench_py" / "exec_gpu.py")]
    else:
        argv = [str(ctx.binaries[str(run.build)])]
    argv += ["--device", run.device, "--mode", run.mode, "--shape", run.shape_text,
             "--reps", str(run.reps)]
    if run.program == "torch" and run.threads is not None:
        argv += ["--threads", str(run.threads)]
    if run.warmup:
        argv += ["--warmup", run.warmup, "--timed-runs", str(run.timed_runs)]
    if run.samples:
        argv.append("--samples")
    if out_dir is not None:
        argv += ["--out", str(out_dir)]
    return argv


def spawn(argv: list[str], env: dict[str, str], cwd: Path, timeout_s: float) -> Outcome:
    """Run a process in its own group with output to files; kill the group on timeout/Ctrl-C."""
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        start = time.perf_counter()
        with signals.deferred() as noted:
            try:
                proc: subprocess.Popen[bytes] | None = subprocess.Popen(
                    argv, cwd=cwd, env=env, stdin=subprocess.DEVNULL, stdout=out, stderr=err,
                    start_new_session=True)
            except OSError as exc:
                proc, error = None, f"cannot start {argv[0]}: {exc}"
        if noted:  # Ctrl-C while it started: acted on now that its group is known
            if proc is not None:
                _kill_group(proc)
            raise KeyboardInterrupt
        if proc is None:
            return Outcome(None, False, 0.0, b"", error.encode())
        timed_out = False
        try:
            timed_out = not _wait_exit(proc, timeout_s)
        finally:
            wall = time.perf_counter() - start
            _kill_group(proc)  # also reaps children a finished program left behind
        outcome = []
        for fh in (out, err):
            fh.seek(0)
            # read what is there: read(n) allocates n bytes up front (32 MiB, every run)
            data = fh.read(min(os.fstat(fh.fileno()).st_size, OUTPUT_CAP + 1))
            outcome.append((data[:OUTPUT_CAP], len(data) > OUTPUT_CAP))
    (stdout, cut_out), (stderr, cut_err) = outcome
    return Outcome(proc.returncode, timed_out, wall, stdout, stderr, cut_out or cut_err)


def _wait_exit(proc: subprocess.Popen[bytes], timeout_s: float) -> bool:
    """Sleep in the kernel until `proc` exits (True) or `timeout_s` passes (False).

    `Popen.wait(timeout)` polls: it wakes up to 20 times a second while the program runs and
    notices the exit up to 50 ms late, which both disturbs the measured program and inflates
    `wall_s`. A pidfd (Linux) or a kqueue exit event (macOS) wakes us exactly once, at the exit.
    """
    if hasattr(os, "pidfd_open"):
        try:
            fd = os.pidfd_open(proc.pid)
        except OSError:  # a kernel without pidfds (< 5.3): poll the old way
            return _poll_exit(proc, timeout_s)
        try:
            poller = select.poll()
            poller.register(fd, select.POLLIN)
            if not poller.poll(min(timeout_s * 1000, 2**31 - 1)):  # ms, as poll() takes
                return False
        finally:
            os.close(fd)
    elif hasattr(select, "kqueue"):
        queue = select.kqueue()
        try:
            event = select.kevent(proc.pid, select.KQ_FILTER_PROC,
                                  select.KQ_EV_ADD | select.KQ_EV_ONESHOT, select.KQ_NOTE_EXIT)
            if not queue.control([event], 1, timeout_s):
                return False
        except ProcessLookupError:  # it exited before the event was added
            pass
        finally:
            queue.close()
    else:
        return _poll_exit(proc, timeout_s)
    proc.wait()  # it has exited: this only reaps it
    return True


def _poll_exit(proc: subprocess.Popen[bytes], timeout_s: float) -> bool:
    try:
        proc.wait(timeout=timeout_s)
    except subprocess.TimeoutExpired:
        return False
    return True


def _kill_group(proc: subprocess.Popen[bytes]) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(proc.pid, signal.SIGKILL)
    with contextlib.suppress(subprocess.TimeoutExpired):
        proc.wait(timeout=10)


def wait_quiet(max_load1: float | None, max_wait_s: float, poll_s: float) -> dict[str, Any]:
    """Wait until the 1-minute load is under `max_load1` (bounded); record what happened."""
    start = time.monotonic()
    load = Load.now()
    while max_load1 is not None and load.load1 > max_load1 and \
            time.monotonic() - start < max_wait_s:
        time.sleep(poll_s)
        load = Load.now()
    loaded = max_load1 is not None and load.load1 > max_load1
    return {"max_load1": max_load1, "waited_s": round(time.monotonic() - start, 3),
            "load1": load.load1, "went_ahead_loaded": loaded}


def prepare_cache(run: RunDef, project: Path) -> dict[str, Any] | None:
    """Apply the run's cache action; the record says what was removed. Raises CacheSafetyError."""
    if run.program != "burn" or run.cache == "none":
        return None
    cwd = program_cwd(run, project)
    override = config_override(cwd)
    if override is not None:
        raise CacheSafetyError(f"{override} may move burn's cache; remove it for cache sweeps")
    path = cache_dir_for(cwd)
    info: dict[str, Any] = {"path": str(path), "action": run.cache_action}
    if run.cache_action == "delete":
        info["removed"] = asdict(remove_cache(path, project / "bench_rust"))
    info["before"] = asdict(CacheState.of(path))
    return info


def _fresh_dir(path: Path) -> str | None:
    """Empty `path` for a program's arrays; why not, when the results disk refuses."""
    try:
        shutil.rmtree(path, ignore_errors=True)
        path.mkdir(parents=True)
    except OSError as exc:
        return f"cannot make scratch folder {path}: {exc.strerror}"
    return None


def execute(run: RunDef, ctx: RunContext, role: str = "measure",
            gate: dict[str, Any] | None = None) -> RunRecord:
    """Run one program to the end and return its record (never raises for program faults)."""
    record = RunRecord(run=run, role=role, gate=gate, cwd=str(program_cwd(run, ctx.project)))
    try:
        record.cache = prepare_cache(run, ctx.project) if role == "measure" else None
    except CacheSafetyError as exc:
        record.status, record.reason = "failed", str(exc)
        return record
    out_dir = ctx.scratch / record.run_id if run.mode == "accuracy" else None
    problem = _fresh_dir(out_dir) if out_dir is not None else None
    if problem is not None:
        record.status, record.reason = "failed", problem
        return record
    record.argv = program_argv(run, ctx, out_dir)
    record.env = program_env(run)
    record.load_before = asdict(Load.now())
    record.started_at = time.time()
    outcome = spawn(record.argv, record.env, Path(record.cwd), run.timeout_s)
    record.ended_at = time.time()
    record.load_after = asdict(Load.now())
    record.wall_s, record.returncode = outcome.wall_s, outcome.returncode
    record.stdout, record.stderr = outcome.stdout, outcome.stderr
    if record.cache is not None:
        after = CacheState.of(Path(record.cache["path"]))
        before = CacheState(**record.cache["before"])
        record.cache["after"] = asdict(after)
        record.cache["wrote"] = after.written_since(before)
    failure = outcome.failure(run.timeout_s)
    if out_dir is not None:
        record.artifacts = {p.name: p.read_bytes() for p in sorted(out_dir.glob("*.npy"))}
        shutil.rmtree(out_dir, ignore_errors=True)
        if failure is None and not record.artifacts:
            failure = "wrote no .npy arrays"
    if failure is not None:
        tail = record.stderr_tail()
        record.status = "failed"
        record.reason = failure + (f": {tail.splitlines()[-1]}" if tail else "")
    return record
