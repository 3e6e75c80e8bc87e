"""Fault suite: every way a sweep can go wrong, provoked for real through the command line.

Each case runs `python -m orchestrator ...` as a subprocess (or `cli.main` in-process where a
subprocess adds nothing) and checks what a user would see: the exit code, one clear line on
stderr, and a results store that still opens and has lost nothing finished.

The measured programs are stand-ins: `run --python FAKE` makes the orchestrator start
`FAKE bench_py/exec_gpu.py ...` for torch targets, and FAKE misbehaves as the experiment's `env`
tells it (FAULT=crash, hang, ...). Its state (pid files, the 'hold' switch that keeps a run in
flight until the test lets it go) lives beside the script, so the experiments file, and with it
every run id, is the same wherever the test runs.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import random
import shutil
import signal
import sqlite3
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from orchestrator.cli import main
from orchestrator.data.parse import parse_text
from orchestrator.experiments.config import Build
from orchestrator.programs.burn.cargo import Builder
from orchestrator.run import process

from .conftest import PROJECT, dead_within
from .experiments.test_config import GOOD as CONFIG_GOOD

FAKE = r'''
import os, signal, subprocess, sys, time
from pathlib import Path

if sys.argv[1:2] == ["-c"]:
    sys.exit(0)  # the orchestrator's probes: "torch imports here", no facts to report
state = Path(sys.argv[0]).resolve().parent
fault = os.environ.get("FAULT", "ok")


def publish(folder, text):
    """Write state/folder/PID whole or not at all: the test polls for it and reads it at once,
    so it must never see the file created but not yet written."""
    scratch = state / f".{folder}-{os.getpid()}"
    scratch.write_text(text)
    os.replace(scratch, state / folder / str(os.getpid()))


publish("pids", fault)
index = len(list((state / "pids").iterdir()))
out = sys.stdout.buffer
GOOD = ("cpu: device init 1.000ms\n"
        "cpu 8x8 matmul with sync, 3 runs: min 1.000\u00b5s median 2.000\u00b5s\n").encode()
sys.stderr.write(f"fake: {fault} starting\n")
sys.stderr.flush()


def grandchild():
    child = subprocess.Popen(["sleep", "300"])
    publish("children", str(child.pid))


def ok():
    hold = state / "hold"
    if hold.exists() and hold.read_text() == str(index):
        grandchild()
        while hold.exists():
            time.sleep(0.01)
    values = " ".join(["1e-06"] * int(os.environ.get("SAMPLES", "3")))
    out.write(GOOD + f"# samples cpu 8x8 matmul with sync: {values}\n".encode())


def crash():
    out.write(b"cpu: device init 1.000ms\n")
    out.flush()
    raise RuntimeError("boom")


def exit3():
    sys.stderr.write("fatal: out of device memory\n")
    sys.exit(3)


def kill(sig):
    out.write(b"cpu 8x8 matmul with sy")
    out.flush()
    os.kill(os.getpid(), sig)


def hang():
    grandchild()
    out.write(b"started\n")
    out.flush()
    time.sleep(300)


def arrays():
    # an accuracy run: the arrays go where --out says, relative to *this* process's folder
    folder = Path(sys.argv[sys.argv.index("--out") + 1]).resolve()
    for name in ("a", "b", "c"):
        (folder / f"{name}.npy").write_bytes(b"\x93NUMPY stand-in")
    out.write(f"# wrote {folder}\n".encode())


FAULTS = {
    "ok": ok, "arrays": arrays, "crash": crash, "exit3": exit3, "hang": hang,
    "sigkill": lambda: kill(signal.SIGKILL), "segv": lambda: kill(signal.SIGSEGV),
    "silent": lambda: None,
    "partial": lambda: out.write(GOOD + b"cpu 8x8 matmul no sync, 3 ru"),
    "badutf8": lambda: out.write(b"\xff\xfe\x80 not text\n" * 3 + b"cpu: init 1.0\xffms\n"),
    "huge": lambda: out.write(GOOD + (b"x" * 1023 + b"\n") * int(os.environ["HUGE_KIB"])),
    "lines": lambda: out.write(os.environ["LINES"].encode()),  # prints what the test gives
}
FAULTS[fault]()
'''
TORCH_CPU = [{"program": "torch", "device": "cpu"}]
# Six runs, one of them failed: what an interrupted sweep must end with after `run` again.
RESUMABLE = {
    "version": 1,
    "defaults": {"shape": [8, 8], "reps": 3, "timeout_s": 60, "env": {"SAMPLES": "20000"}},
    "experiments": {
        "first": {"mode": "mm", "threads": [1, 2], "targets": TORCH_CPU},
        "broken": {"mode": "mm", "env": {"FAULT": "exit3"}, "targets": TORCH_CPU},
        "second": {"mode": "mm", "threads": [1, 2, 3], "targets": TORCH_CPU},
    },
}


# helpers --------------------------------------------------------------------------------------
# The orchestrator started as a terminal's foreground job is: pytest started in the background by
# a shell without job control ignores SIGINT, and an ignored signal is inherited, so the
# orchestrator would never see the Ctrl-C these tests send. SIGINT's default and any rlimits are
# set by a tiny Python that then execs the orchestrator (the same pid and command line), not by
# a preexec_fn: that runs Python in a child forked from this process, threaded once a test
# before has imported JAX (which warns of the deadlock it risks, a warning per start).
_LAUNCH = """import os, resource, signal, sys
signal.signal(signal.SIGINT, signal.SIG_DFL)
for name, value in (item.split("=") for item in sys.argv[1].split(",") if item):
    resource.setrlimit(getattr(resource, "RLIMIT_" + name), (int(value), int(value)))
os.execv(sys.argv[2], sys.argv[2:])
"""


def orchestrator(*args: str | Path, cwd: Path = PROJECT, env: dict[str, str] | None = None,
                 memory_mib: int | None = None, rlimits: dict[str, int] | None = None,
                 **popen: Any) -> subprocess.Popen[str]:
    """`python -m orchestrator ARGS` started in the background, stdout and stderr piped;
    `memory_mib` caps its address space (for the cases that provoke unbounded work), `rlimits`
    sets others (resource's names without RLIMIT_: {"FSIZE": bytes})."""
    limits = dict(rlimits or {})
    if memory_mib is not None:  # a runaway fails there, not this machine
        limits["AS"] = memory_mib * 2**20
    argv = [sys.executable, "-I", "-S", "-c", _LAUNCH,
            ",".join(f"{name}={value}" for name, value in limits.items()),
            sys.executable, "-m", "orchestrator", *map(str, args)]
    return subprocess.Popen(argv, cwd=cwd, env=env, text=True, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, **popen)


def cli(*args: str | Path, timeout: float = 120, **kw: Any) -> tuple[int, str]:
    """Run the orchestrator to its end: (exit code, stderr)."""
    proc = orchestrator(*args, **kw)
    _out, err = proc.communicate(timeout=timeout)
    assert "Traceback" not in err, err
    return proc.returncode, err


def in_process(*args: str | Path) -> tuple[int, str]:
    """`cli.main(ARGS)` in this process: (exit code, stderr). For the reading commands (report,
    export, parse, compare) where a subprocess adds only start-up time; never for `run`, whose
    signal handling and process ledger belong to a process of its own. An exception escaping
    main is the traceback a user would see: the test fails with it."""
    err, sigterm = io.StringIO(), signal.getsignal(signal.SIGTERM)
    try:
        with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
            code = main([str(a) for a in args])
    finally:
        signal.signal(signal.SIGTERM, sigterm)  # main's own handler, for a process of its own
    return code, err.getvalue()


def write_yaml(path: Path, doc: dict[str, Any]) -> Path:
    path.write_text(yaml.safe_dump(doc, sort_keys=False), encoding="utf-8")
    return path


def runs_of(results: Path) -> dict[str, dict[str, Any]]:
    """Every run row of the store, by run id (read with plain sqlite3, not the orchestrator)."""
    with contextlib.closing(sqlite3.connect(results / "results.sqlite")) as db:
        db.row_factory = sqlite3.Row
        return {r["run_id"]: dict(r) for r in db.execute("SELECT * FROM runs")}


def statuses(results: Path) -> dict[str, str]:
    return {run_id: row["status"] for run_id, row in runs_of(results).items()}


def dead(pid: int) -> bool:
    if Path("/proc/self").exists():  # Linux: a zombie is dead, it only waits for init to reap it
        try:
            return "\nState:\tZ" in Path(f"/proc/{pid}/status").read_text()
        except FileNotFoundError:
            return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    return False


def wait_for(check: Callable[[], bool], what: str, timeout: float = 30) -> None:
    end = time.monotonic() + timeout
    while not check():
        assert time.monotonic() < end, f"timed out waiting for {what}"
        time.sleep(0.01)


class Fake:
    """The stand-in program and its state folder."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.path = folder / "fake-python"
        for sub in ("pids", "children"):
            (folder / sub).mkdir(parents=True)
        self.path.write_text(f"#!{sys.executable}\n{FAKE}", encoding="utf-8")
        self.path.chmod(0o755)

    def pids(self) -> list[int]:
        return [int(p.name) for p in (self.folder / "pids").iterdir()]

    def child_of(self, pid: int) -> int | None:
        path = self.folder / "children" / str(pid)
        return int(path.read_text()) if path.exists() else None

    def hold(self, index: int | None) -> None:
        """Keep the index-th fake process (counted from 1 over this module) running."""
        hold = self.folder / "hold"
        if index is None:
            hold.unlink(missing_ok=True)
        else:
            hold.write_text(str(index))

    def kill_leftovers(self) -> None:
        """End fakes (and their sleeps) that a SIGKILLed orchestrator could not end."""
        for pid in self.pids() + [c for p in self.pids() if (c := self.child_of(p))]:
            with contextlib.suppress(FileNotFoundError, ProcessLookupError):
                cmdline = Path(f"/proc/{pid}/cmdline").read_bytes()
                if b"fake-python" in cmdline or cmdline.startswith(b"sleep"):
                    os.kill(pid, signal.SIGKILL)


@pytest.fixture(scope="module")
def fake(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Fake]:
    made = Fake(tmp_path_factory.mktemp("fake"))
    yield made
    made.hold(None)
    made.kill_leftovers()


Resumable = tuple[Path, dict[str, str]]  # the experiments file, run id -> status


@pytest.fixture(scope="module")
def resumable(tmp_path_factory: pytest.TempPathFactory, fake: Fake) -> Resumable:
    """The six-run file and the run ids and statuses of its uninterrupted sweep."""
    tmp = tmp_path_factory.mktemp("resumable")
    path = write_yaml(tmp / "resumable.yaml", RESUMABLE)
    code, err = cli("run", path, "--python", fake.path, "--results", tmp / "results", "--quiet")
    assert code == 1, err  # the 'broken' run failed, as it should
    reference = statuses(tmp / "results")
    assert sorted(reference.values()) == ["failed"] + ["ok"] * 5
    return path, reference


# bad input: one line, exit 2, nothing run --------------------------------------------------
# the config tests' valid file, with one thread count (the line numbers below count on it)
GOOD = CONFIG_GOOD.replace("threads: [1, auto]", "threads: [1]")


@pytest.mark.parametrize(("old", "new", "where", "words"), [
    ("device: cpu}", "device: cpu", "10", "YAML syntax error: expected ',' or '}', but got "
     "'{' (while parsing a flow mapping started at line 9)"),
    ("mode: mm", "mode: 'mm", "11", "YAML syntax error: found unexpected end of stream "
     "(while scanning a quoted scalar started at line 6)"),
    ("mode: mm", "mode: mm\n    reeps: 3", "7 at experiments.cpu.reeps", "unknown key"),
    ("threads: [1]", "threads: 2", "7 at experiments.cpu.threads", "expected a list (got 2)"),
    ("threads: [1]", "threads: [one]", "7 at experiments.cpu.threads[0]", "or 'auto'"),
    ("threads: [1]", "threads: []", "7 at experiments.cpu.threads", "empty sweep"),
    ("threads: [1]", "shapes: []", "7 at experiments.cpu.shapes", "empty sweep"),
    ("targets:", "cache: []\n    targets:", "8 at experiments.cpu.cache", "empty sweep"),
    ("exec-cpu}", "exec-gpu, features: [cuda12]}", "3 at builds.template",
     "has no feature 'cuda12' (known: cuda, metal, vulkan)"),
    ("exec-cpu", "exec-tpu", "3 at builds.template.crate", "'exec-cpu'"),
    ("device: cpu", "device: gpu", "9 at experiments.cpu.targets[0]",
     "unknown torch device 'gpu' (expected one of cpu, cuda, mps, auto)"),
    ("device: flex", "device: rocm", "10 at experiments.cpu.targets[1]",
     "unknown burn device 'rocm'"),
    ("build: template", "build: templat", "10 at experiments.cpu.targets[1].build",
     "unknown build 'templat' (known: template)"),
    ("      - {program: burn", "  cpu:\n    mode: mm\n    targets:\n      - {program: burn",
     "10 at experiments.cpu", "duplicate key 'cpu' (first at line 5)"),
])
def test_bad_experiments_file_is_one_line_and_runs_nothing(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], old: str, new: str, where: str,
        words: str) -> None:
    exp = tmp_path / "e.yaml"
    exp.write_text(GOOD.replace(old, new, 1), encoding="utf-8")
    results = tmp_path / "results"
    assert main(["run", str(exp), "--results", str(results)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1, err
    assert err.startswith(f"error: {exp}:{where}: "), err
    assert words in err
    assert not results.exists()


def test_missing_file_and_bad_arguments(tmp_path: Path,
                                        capsys: pytest.CaptureFixture[str]) -> None:
    results = tmp_path / "results"
    assert main(["run", str(tmp_path / "nope.yaml"), "--results", str(results)]) == 2
    assert capsys.readouterr().err == f"error: {tmp_path / 'nope.yaml'}: file not found\n"
    exp = tmp_path / "e.yaml"
    exp.write_text(GOOD, encoding="utf-8")
    assert main(["run", str(exp), "--only", "cpu", "gpu", "--results", str(results)]) == 2
    assert capsys.readouterr().err == (f"error: --only: no experiment named gpu in {exp} "
                                       "(known: cpu)\n")
    for argv in (["run", str(exp), "--bogus"], ["run", str(exp), "--python", "no-such-py"],
                 ["plan", str(exp), "--assume", "tpu"], ["frobnicate"]):
        with pytest.raises(SystemExit) as info:
            main(argv)
        assert info.value.code == 2, argv
        assert "error: " in capsys.readouterr().err.splitlines()[-1]
    assert not results.exists()


def test_bad_input_through_the_real_entry_point(tmp_path: Path) -> None:
    exp = tmp_path / "e.yaml"
    exp.write_text(GOOD.replace("mode: mm", "mode: fast"), encoding="utf-8")
    code, err = cli("run", exp, "--results", tmp_path / "results")
    assert (code, err.count("\n")) == (2, 1), err
    assert f"{exp}:6 at experiments.cpu.mode: expected 'mm', 'warm' or 'accuracy'" in err
    code, err = cli("run", exp, "--no-such-option")
    assert code == 2 and "unrecognized arguments: --no-such-option" in err
    assert not (tmp_path / "results").exists()


# programs that misbehave ----------------------------------------------------------------------
FAULT_CASES = {  # FAULT: (start of the recorded reason, the raw stdout kept)
    "crash": ("exited with status 1: RuntimeError: boom", b"cpu: device init 1.000ms\n"),
    "exit3": ("exited with status 3: fatal: out of device memory", b""),
    "sigkill": ("killed by signal SIGKILL: fake: sigkill starting", b"cpu 8x8 matmul with sy"),
    "segv": ("killed by signal SIGSEGV", b"cpu 8x8 matmul with sy"),
    "hang": ("timed out after 2 s (process group killed): fake: hang starting", b"started\n"),
    "silent": ("printed nothing: fake: silent starting", b""),
    "partial": ("output ends in a partial line", None),
    "badutf8": ("printed no figures (4 unknown lines): fake: badutf8 starting",
                b"\xff\xfe\x80 not text\n" * 3 + b"cpu: init 1.0\xffms\n"),
    "huge": (f"output cut at {process.OUTPUT_CAP} bytes (the rest is lost)", None),
}


def test_misbehaving_programs_are_failed_runs_and_the_sweep_goes_on(tmp_path: Path,
                                                                     fake: Fake) -> None:
    experiments = {name: {"mode": "mm", "env": {"FAULT": name}, "targets": TORCH_CPU}
                   for name in FAULT_CASES}
    experiments["hang"]["timeout_s"] = 2
    experiments["after"] = {"mode": "mm", "targets": TORCH_CPU}
    exp = write_yaml(tmp_path / "faults.yaml", {
        "version": 1, "defaults": {"shape": [8, 8], "reps": 3, "timeout_s": 60,
                                   "env": {"HUGE_KIB": str(process.OUTPUT_CAP // 1024 + 64)}},
        "experiments": experiments})
    before = set(fake.pids())
    code, err = cli("run", exp, "--python", fake.path, "--results", tmp_path / "results")
    assert code == 1, err
    runs = {r["experiment"]: r for r in runs_of(tmp_path / "results").values()}
    assert runs["after"]["status"] == "ok", runs["after"]["reason"]  # the sweep went on
    for name, (reason, stdout) in FAULT_CASES.items():
        run = runs[name]
        assert (run["status"], run["reason"][:len(reason)]) == ("failed", reason), name
        assert run["stderr"].startswith(f"fake: {name} starting\n".encode()), name
        if stdout is not None:
            assert run["stdout"] == stdout, name
        assert f"failed {name}: torch cpu mm 8x8: {reason}" in err
    assert len(runs["huge"]["stdout"]) == process.OUTPUT_CAP
    assert runs["partial"]["stdout"].endswith(b"\ncpu 8x8 matmul no sync, 3 ru")
    for pid in set(fake.pids()) - before:  # no program and no child of one outlived its run
        assert dead(pid), pid
        child = fake.child_of(pid)
        assert child is None or dead(child), f"the child of {pid} outlived it"


def test_relative_paths_are_taken_from_where_run_was_started(tmp_path: Path,
                                                             fake: Fake) -> None:
    """Programs start in other folders: `--results` and `--python` given relative to the
    user's folder must still mean that folder (the arrays of accuracy runs went astray)."""
    exp = write_yaml(tmp_path / "acc.yaml", {"version": 1, "experiments": {"accuracy": {
        "mode": "accuracy", "shapes": [[32, 32]], "env": {"FAULT": "arrays"},
        "targets": TORCH_CPU}}})
    python = os.path.relpath(fake.path, tmp_path)
    code, err = cli("run", exp.name, "--python", python, "--results", "res", cwd=tmp_path)
    assert code == 0, err
    [run] = runs_of(tmp_path / "res").values()
    assert run["stdout"].decode().startswith(f"# wrote {tmp_path / 'res' / 'scratch'}/")
    with contextlib.closing(sqlite3.connect(tmp_path / "res" / "results.sqlite")) as db:
        names = [n for (n,) in db.execute("SELECT name FROM artifacts ORDER BY name")]
    assert names == ["a.npy", "b.npy", "c.npy"]


# burn's cache: refused, recorded, nothing outside touched ---------------------------------
FAKE_BURN = """
from pathlib import Path
cache = Path.cwd().parent / "target" / "environment" / "autotune"  # cubecl's rule, here
cache.mkdir(parents=True, exist_ok=True)
(cache / "matmul.json").write_text("{}")
print("cuda: device init 1.000ms")
print("cuda 8x8 matmul with sync, 3 runs: min 1.000\\u00b5s median 2.000\\u00b5s")
"""
CACHE_BUILDS = {"gpu": Build(crate="exec-gpu", features=("cuda",)), "cpu": Build(crate="exec-cpu")}


ProjectCopy = tuple[Path, dict[str, str]]  # its root, the environment to run it in


@pytest.fixture
def project_copy(tmp_path: Path) -> ProjectCopy:
    """A copy of the project that believes it has an NVIDIA GPU; (root, environment)."""
    root = tmp_path / "project"
    for name in ("orchestrator", "bench_py"):
        shutil.copytree(PROJECT / name, root / name, ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copytree(PROJECT / "bench_rust", root / "bench_rust",
                    ignore=shutil.ignore_patterns("target"))
    shutil.copy(PROJECT / "experiments.yaml", root)
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    smi = bin_dir / "nvidia-smi"  # `nvidia-smi -L` lists a GPU: cuda runs are not skipped
    smi.write_text('#!/bin/sh\n[ "$1" = "-L" ] && echo "GPU 0: fake" && exit 0\nexit 1\n')
    smi.chmod(0o755)
    return root, {**os.environ, "PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}"}


def install_fake_burn(root: Path, tmp_path: Path) -> None:
    """Put a stand-in burn binary where an up-to-date build would be (so no cargo runs)."""
    program = tmp_path / "fake-burn"
    program.write_text(f"#!{sys.executable}\n{FAKE_BURN}", encoding="utf-8")
    program.chmod(0o755)
    builder = Builder(root)
    for build in CACHE_BUILDS.values():
        builder._install(build, program)
        assert builder.is_fresh(build)


def cache_sweep(root: Path, env: dict[str, str], cache: list[str], builds: list[str],
                python: Path) -> int:
    exp = write_yaml(root / "cache.yaml", {
        "version": 1, "defaults": {"shape": [8, 8], "reps": 3},
        "builds": {n: {"crate": b.crate, "features": list(b.features)}
                   for n, b in CACHE_BUILDS.items()},
        "experiments": {"first-call": {"mode": "mm", "cache": cache, "targets": [
            {"program": "burn", "build": n, "device": "cuda"} for n in builds]}}})
    # --python: the fake's probes answer at once; importing the real torch takes seconds
    code, err = cli("run", exp, "--results", root / "results", "--python", python, cwd=root,
                    env=env)
    assert "skipped" not in err, err
    return code


def files_under(folder: Path, leave_out: Path | None = None) -> dict[str, bytes]:
    return {str(p): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()
            and (leave_out is None or leave_out not in p.parents)}


def test_cache_config_file_refuses_cold_and_warm_runs(tmp_path: Path, project_copy: ProjectCopy,
                                                       fake: Fake) -> None:
    root, env = project_copy
    rust = root / "bench_rust"
    (rust / "exec-gpu" / "cubecl.toml").write_text("[autotune.cache]\nlocation = 'global'\n")
    (rust / "target" / "environment" / "autotune").mkdir(parents=True)
    (rust / "target" / "environment" / "autotune" / "stale.json").write_text("{}")
    (rust / "target" / "release-output.txt").write_text("cargo's, not the cache")
    install_fake_burn(root, tmp_path)
    cache = rust / "target" / "environment"
    kept = files_under(rust, leave_out=cache)
    assert cache_sweep(root, env, ["cold", "warm"], ["gpu", "cpu"], fake.path) == 1
    runs = {(json.loads(r["definition_json"])["build"], json.loads(r["definition_json"])["cache"],
             r["role"]): r for r in runs_of(root / "results").values()}
    # the cpu build's warm run after its cold one: cubecl's cache is warm, the shared driver
    # cache not yet, so a priming run (labelled warm) fills it first (run/driver_cache.py)
    assert sorted(runs) == [("cpu", "cold", "measure"), ("cpu", "warm", "measure"),
                            ("cpu", "warm", "priming"),
                            ("gpu", "cold", "measure"), ("gpu", "warm", "measure")]
    for state in ("cold", "warm"):  # exec-gpu's folder has the config file: refused, no priming
        run = runs["gpu", state, "measure"]
        assert run["status"] == "failed"
        assert run["reason"] == (f"{rust / 'exec-gpu' / 'cubecl.toml'} may move burn's cache; "
                                 "remove it for cache sweeps")
    cold, warm = runs["cpu", "cold", "measure"], runs["cpu", "warm", "measure"]
    record = json.loads(cold["cache_json"])
    assert cold["status"] == "ok" and record["removed"]["files"] == 1 and record["wrote"]
    assert warm["status"] == "ok" and json.loads(warm["cache_json"])["before"]["files"] == 1
    assert files_under(rust, leave_out=cache) == kept


def test_symlinked_target_deletes_nothing(tmp_path: Path, project_copy: ProjectCopy,
                                          fake: Fake) -> None:
    root, env = project_copy
    outside = tmp_path / "outside"
    (outside / "environment").mkdir(parents=True)
    (outside / "environment" / "precious").write_text("not burn's to delete")
    (root / "bench_rust" / "target").symlink_to(outside, target_is_directory=True)
    install_fake_burn(root, tmp_path)
    before = files_under(outside)
    assert cache_sweep(root, env, ["cold"], ["cpu"], fake.path) == 1
    [run] = runs_of(root / "results").values()
    assert run["status"] == "failed"
    assert run["reason"].endswith(f"{root / 'bench_rust' / 'target'} is a symlink")
    assert files_under(outside) == before


def test_no_cargo_toml_fails_the_cache_runs_not_the_sweep(tmp_path: Path,
                                                          project_copy: ProjectCopy,
                                                          fake: Fake) -> None:
    """Without a Cargo.toml above the crate cubecl would use a per-user cache: both cache
    actions (the warm run's priming check too) must refuse it run by run."""
    root, env = project_copy
    for cargo_toml in (root / "bench_rust").glob("**/Cargo.toml"):
        cargo_toml.unlink()
    install_fake_burn(root, tmp_path)
    exp = write_yaml(root / "cache.yaml", {
        "version": 1, "defaults": {"shape": [8, 8], "reps": 3},
        "builds": {"cpu": {"crate": "exec-cpu"}},
        "experiments": {
            "cached": {"mode": "mm", "cache": ["warm", "cold"],
                       "targets": [{"program": "burn", "build": "cpu", "device": "cuda"}]},
            "after": {"mode": "mm", "targets": TORCH_CPU}}})
    code, err = cli("run", exp, "--results", root / "results", "--python", fake.path, cwd=root,
                    env=env)
    assert code == 1, err
    runs = sorted((r["experiment"], r["status"]) for r in runs_of(root / "results").values())
    assert runs == [("after", "ok"), ("cached", "failed"), ("cached", "failed")]
    assert err.count(f"no Cargo.toml above {root / 'bench_rust' / 'exec-cpu'}") == 4  # 2 + summary


# interrupted sweeps resume to the same result -------------------------------------------
@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM])
def test_signal_kills_the_running_program_and_run_resumes(tmp_path: Path, fake: Fake,
                                                          resumable: Resumable, sig: int) -> None:
    exp, reference = resumable
    results = tmp_path / "results"
    before = set(fake.pids())
    fake.hold(len(before) + 2)  # the second run stays in flight
    proc = orchestrator("run", exp, "--python", fake.path, "--results", results,
                        start_new_session=True)
    held = held_run(fake, before)
    if sig == signal.SIGINT:
        os.killpg(proc.pid, sig)  # as Ctrl-C in a terminal: to the whole foreground group
    else:
        os.kill(proc.pid, sig)
    _out, err = proc.communicate(timeout=30)
    fake.hold(None)
    assert proc.returncode == 130, err
    assert err.splitlines()[-1].startswith("interrupted: ") and "Traceback" not in err
    assert "run the same command to resume" in err
    grandchild = fake.child_of(held)
    assert grandchild is not None and dead_within(held) and dead_within(grandchild)
    assert len(statuses(results)) == 1  # the first run was finished; the second is redone
    assert "interrupted: 1 finished runs of sweep " in err
    code, err = cli("run", exp, "--python", fake.path, "--results", results)
    assert code == 1 and "(resumed)" in err, err
    assert statuses(results) == reference


def check_store(results: Path) -> dict[str, str]:
    """The store opens, passes SQLite's check, and every run in it is whole."""
    with contextlib.closing(sqlite3.connect(results / "results.sqlite")) as db:
        assert db.execute("PRAGMA integrity_check").fetchall() == [("ok",)]
        counts = {(kind, run_id): n for kind in ("figures", "samples") for run_id, n in
                  db.execute(f"SELECT run_id, count(*) FROM {kind} GROUP BY run_id")}
    runs = runs_of(results)
    for run_id, run in runs.items():
        parsed = parse_text(run["stdout"].decode("utf-8", "replace"))
        assert counts.get(("figures", run_id), 0) == len(parsed.figures), run
        samples = sum(len(s.values) for s in parsed.samples)
        assert counts.get(("samples", run_id), 0) == samples, run
    return {run_id: run["status"] for run_id, run in runs.items()}


def first_run_started(fake: Fake, proc: subprocess.Popen[str]) -> None:
    started = len(fake.pids())
    wait_for(lambda: len(fake.pids()) > started or proc.poll() is not None, "a run")


def held_run(fake: Fake, before: set[int]) -> int:
    """The pid of the fake that the 'hold' switch keeps running (once it is running)."""
    wait_for(lambda: any(fake.child_of(p) for p in set(fake.pids()) - before), "the held run")
    return next(p for p in set(fake.pids()) - before if fake.child_of(p))


def wal_written(results: Path, proc: subprocess.Popen[str]) -> None:
    """Return the moment SQLite's write-ahead log changes: a run is being written."""
    wal = results / "results.sqlite-wal"

    def stamp() -> tuple[int, int]:
        try:
            st = wal.stat()
        except FileNotFoundError:
            return (0, 0)
        return (st.st_size, st.st_mtime_ns)

    before, end = stamp(), time.monotonic() + 30
    while stamp() == before and proc.poll() is None and time.monotonic() < end:
        pass  # no sleep: the write lasts milliseconds


# (signal, when): 'random' is 0-250 ms after a program starts, 'write' as a run is written
STOPS = [("SIGKILL", "random"), ("SIGKILL", "write"), ("SIGINT", "random"), ("SIGKILL", "write"),
         ("SIGTERM", "random"), ("SIGINT", "write"), ("SIGKILL", "random"), ("SIGTERM", "write")]


def stop_once(fake: Fake, exp: Path, results: Path, sig: str, when: str,
              rng: random.Random) -> str:
    """Start `run`, stop it with `sig` at `when`; its stderr. SIGINT goes to the whole process
    group, as Ctrl-C in a terminal does."""
    before = set(fake.pids())
    proc = orchestrator("run", exp, "--python", fake.path, "--results", results,
                        start_new_session=True)
    first_run_started(fake, proc)
    if when == "write":
        wal_written(results, proc)
    else:
        time.sleep(rng.uniform(0, 0.25))
    with contextlib.suppress(ProcessLookupError):
        if sig == "SIGINT":
            os.killpg(proc.pid, signal.SIGINT)
        else:
            os.kill(proc.pid, getattr(signal, sig))
    _out, err = proc.communicate(timeout=30)
    if sig == "SIGKILL":
        fake.kill_leftovers()  # nothing can end them: the orchestrator died at once
    else:
        assert proc.returncode in (130, 1) and "Traceback" not in err, err
        assert proc.returncode == 1 or err.splitlines()[-1].startswith("interrupted"), err
        assert all(dead(pid) for pid in set(fake.pids()) - before), "a program outlived it"
    return err


def test_stopped_at_random_moments_loses_nothing(tmp_path: Path, fake: Fake,
                                                 resumable: Resumable) -> None:
    exp, reference = resumable
    results = tmp_path / "results"
    rng = random.Random(4)  # fixed: a failure can be replayed
    finished: dict[str, str] = {}
    for attempt, (sig, when) in enumerate(STOPS):
        err = stop_once(fake, exp, results, sig, when, rng)
        # progress lines ('ok      ...', 'failed  ...') are printed once a run is saved
        done_lines = sum(line.startswith(("ok  ", "failed  ")) for line in err.splitlines())
        now = check_store(results)
        assert now.items() >= finished.items(), f"{attempt} {sig} lost a finished run"
        assert len(now) >= len(finished) + done_lines, f"{attempt} {sig}: printed, not saved"
        if sig != "SIGKILL" and "interrupted: " in err:
            assert f"interrupted: {len(now)} finished runs" in err, (attempt, err)
        finished = now
    code, err = cli("run", exp, "--python", fake.path, "--results", results, "--quiet")
    assert code == 1, err
    assert check_store(results) == reference


def test_second_orchestrator_on_the_same_store_is_refused(tmp_path: Path, fake: Fake,
                                                          resumable: Resumable) -> None:
    exp, reference = resumable
    results = tmp_path / "results"
    before = set(fake.pids())
    fake.hold(len(before) + 1)
    first = orchestrator("run", exp, "--python", fake.path, "--results", results)
    try:
        held_run(fake, before)
        code, err = cli("run", exp, "--python", fake.path, "--results", results)
        assert code == 2
        assert err == (f"error: {results / 'results.sqlite'} is in use by another orchestrator "
                       f"(pid {first.pid}); wait for it to finish or give this sweep its own "
                       "--results folder\n")
    finally:
        fake.hold(None)
        _out, err = first.communicate(timeout=60)
    assert first.returncode == 1, err
    assert statuses(results) == reference  # the refused one changed nothing


# results that cannot be written -------------------------------------------------------------
@contextlib.contextmanager
def small_disk(folder: Path, size: str) -> Iterator[None]:
    folder.mkdir()
    done = subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(folder)],
                          capture_output=True, text=True, check=False)
    if done.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here ({done.stderr.strip()}); "
                    "test_file_size_limit_is_a_clear_error simulates a full disk")
    try:
        yield
    finally:
        subprocess.run(["umount", str(folder)], check=True)


def fill_disk_sweep(tmp_path: Path) -> Path:
    return write_yaml(tmp_path / "many.yaml", {
        "version": 1, "defaults": {"shape": [8, 8], "reps": 3, "env": {"SAMPLES": "2000"}},
        "experiments": {"many": {"mode": "mm", "threads": list(range(1, 13)),
                                 "targets": TORCH_CPU}}})


def test_full_disk_keeps_earlier_runs_and_resumes_after(tmp_path: Path, fake: Fake) -> None:
    exp, disk = fill_disk_sweep(tmp_path), tmp_path / "disk"
    with small_disk(disk, "1m"):
        results = disk / "results"
        code, err = cli("run", exp, "--python", fake.path, "--results", results)
        assert code == 1
        assert err.splitlines()[-1] == (f"error: cannot write {results / 'results.sqlite'}: "
                                        "database or disk is full (earlier results are intact)")
        saved = check_store(results)
        assert 0 < len(saved) < 12 and set(saved.values()) == {"ok"}
        subprocess.run(["mount", "-o", "remount,size=16m", str(disk)], check=True)
        code, err = cli("run", exp, "--python", fake.path, "--results", results, "--quiet")
        assert code == 0, err
        final = check_store(results)
        assert len(final) == 12 and final.items() >= saved.items()
        subprocess.run(["mount", "-o", "remount,ro", str(disk)], check=True)
        code, err = cli("run", exp, "--python", fake.path, "--results", results)
        assert code == 1
        assert err == (f"error: cannot use results folder {results}: "
                       "Read-only file system\n")


def test_file_size_limit_is_a_clear_error(tmp_path: Path, fake: Fake) -> None:
    """Without mount rights: RLIMIT_FSIZE makes the store's writes fail as a full disk would."""
    exp, results = fill_disk_sweep(tmp_path), tmp_path / "results"
    code, err = cli("run", exp, "--python", fake.path, "--results", results,
                    rlimits={"FSIZE": 1_000_000})
    assert code == 1
    assert err.splitlines()[-1].startswith(f"error: cannot write {results / 'results.sqlite'}: ")
    assert err.endswith("(earlier results are intact)\n")
    saved = check_store(results)
    assert 0 < len(saved) < 12 and set(saved.values()) == {"ok"}


def test_results_path_that_is_a_file(tmp_path: Path, fake: Fake) -> None:
    exp, results = fill_disk_sweep(tmp_path), tmp_path / "results"
    results.write_text("not a folder")
    code, err = cli("run", exp, "--python", fake.path, "--results", results)
    assert (code, err) == (1, f"error: cannot use results folder {results}: it is a file, not a "
                              "folder; choose another --results folder\n")
    assert results.read_text() == "not a folder"


def test_export_and_report_of_a_missing_store_are_input_errors(tmp_path: Path) -> None:
    from orchestrator.cli import main

    assert main(["export", str(tmp_path / "nowhere"), "--csv", str(tmp_path / "x.csv")]) == 2
    assert main(["report", str(tmp_path / "nowhere"), "--out", str(tmp_path / "r")]) == 2
    assert not (tmp_path / "x.csv").exists()
