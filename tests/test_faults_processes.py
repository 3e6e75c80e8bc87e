"""Fault suite, processes: nothing a run starts outlives it; a run that cannot start or that
misbehaves is a failed run with its reason, and the sweep goes on.

Every case goes through `python -m orchestrator` as a subprocess. The stand-in program is the
fault suite's FAKE with a few more kinds (EXTRA below: a `setsid` daemon, a double fork, an
output flood, a sparse multi-GB array, a Rust panic), in a state folder of this module's own.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import psutil
import pytest

from orchestrator.run import cache_lock, leftovers, process

from .conftest import PROJECT
from .test_faults import (
    FAKE,
    TORCH_CPU,
    Fake,
    ProjectCopy,
    cli,
    dead,
    held_run,
    orchestrator,
    project_copy,  # noqa: F401 - the fixture, which `copied` uses
    runs_of,
    statuses,
    wait_for,
    write_yaml,
)

EXTRA = r'''
def daemon():
    child = subprocess.Popen(["setsid", "sleep", "300"])  # a new session: out of our group
    (state / "children" / str(os.getpid())).write_text(str(child.pid))
    ok()


def double_fork():
    parent, marker = os.getpid(), state / "children" / str(os.getpid())
    if os.fork() == 0:
        os.setsid()
        if os.fork() == 0:
            marker.write_text(str(os.getpid()))
            time.sleep(300)
        os._exit(0)
    while not marker.exists():
        time.sleep(0.01)
    ok()


def flood():
    line = b"y" * 65535 + b"\n"
    while True:
        out.write(line)


def stderr_flood():
    ok()
    out.flush()
    line = "e" * 1023 + "\n"
    for _ in range(int(os.environ["HUGE_KIB"])):
        sys.stderr.write(line)


def big_array():
    folder = Path(sys.argv[sys.argv.index("--out") + 1]).resolve()
    for name in ("b", "c"):
        (folder / f"{name}.npy").write_bytes(b"\x93NUMPY stand-in")
    with open(folder / "a.npy", "wb") as fh:  # sparse: 3 GiB on paper, nothing on disk
        fh.write(b"\x93NUMPY")
        fh.truncate(3 * 2**30)
    out.write(f"# wrote {folder}\n".encode())


def panic():
    out.write(b"cpu: device init 1.000ms\n")
    out.flush()
    sys.stderr.write("thread 'main' panicked at bench-core/src/bench.rs:120:9:\n"
                     "matmul shapes differ: [8, 8] and [9, 9]\n"
                     "note: run with `RUST_BACKTRACE=1` environment variable to display a "
                     "backtrace\n")
    sys.stderr.flush()
    os.abort()


FAULTS.update(daemon=daemon, double_fork=double_fork, flood=flood, stderr_flood=stderr_flood,
              big_array=big_array, panic=panic)
'''
PROGRAM = FAKE.replace("FAULTS[fault]()", EXTRA + "FAULTS[fault]()")
assert PROGRAM != FAKE


class Mine(Fake):
    def __init__(self, folder: Path) -> None:
        super().__init__(folder)
        self.path.write_text(f"#!{sys.executable}\n{PROGRAM}", encoding="utf-8")


@pytest.fixture(scope="module")
def mine(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Mine]:
    made = Mine(tmp_path_factory.mktemp("fake-processes"))
    yield made
    made.hold(None)
    made.kill_leftovers()


@pytest.fixture
def copied(project_copy: ProjectCopy) -> ProjectCopy:  # noqa: F811 - the imported fixture
    """The fault suite's copy of the project that believes it has an NVIDIA GPU."""
    return project_copy


def sweep(tmp_path: Path, experiments: dict[str, object], **defaults: object) -> Path:
    return write_yaml(tmp_path / "e.yaml", {
        "version": 1, "defaults": {"shape": [8, 8], "reps": 3, "timeout_s": 60, **defaults},
        "experiments": experiments})


def carrying(variable: str, value: str) -> list[int]:
    """Every live process on the machine whose environment has `variable=value`."""
    found = []
    for proc in psutil.process_iter():
        with contextlib.suppress(psutil.Error):
            if proc.environ().get(variable) == value and proc.status() != psutil.STATUS_ZOMBIE:
                found.append(proc.pid)
    return found


# class 4: leftovers of a SIGKILLed orchestrator ------------------------------------------------
@pytest.mark.parametrize("where", ["resumed", "another results folder"])
def test_after_sigkill_the_next_sweep_ends_the_programs_it_left_running(
        tmp_path: Path, mine: Mine, where: str) -> None:
    exp = sweep(tmp_path, {"two": {"mode": "mm", "threads": [1, 2], "targets": TORCH_CPU}})
    results = tmp_path / "results"
    again = results if where == "resumed" else tmp_path / "other"
    before = set(mine.pids())
    mine.hold(len(before) + 1)  # the first run stays in flight, with a child of its own
    try:
        first = orchestrator("run", exp, "--python", mine.path, "--results", results)
        held = held_run(mine, before)
        child = mine.child_of(held)
        assert child is not None
        assert json.loads((results / leftovers.LEDGER).read_text())["pid"] == held
        first.kill()  # SIGKILL: nothing of the orchestrator can end its program
        first.communicate(timeout=30)
        time.sleep(0.2)
        assert not dead(held) and not dead(child), "the program should still be running"
        code, err = cli("run", exp, "--python", mine.path, "--results", again)
    finally:
        mine.hold(None)
    assert code == 0, err
    line = next(x for x in err.splitlines() if x.startswith("ended "))
    assert line.startswith("ended 2 leftover processes of an earlier sweep: "), err
    assert f"pid {held} (" in line and f"pid {child} (sleep 300)" in line, line
    assert dead(held) and dead(child)
    assert ("(resumed)" in err) == (where == "resumed")
    assert sorted(statuses(again).values()) == ["ok", "ok"]
    assert not (again / leftovers.LEDGER).exists()  # crossed out after each run
    if where != "resumed":  # the dead sweep's own folder: its ledger is found, nothing left
        code, err = cli("run", exp, "--python", mine.path, "--results", results)
        assert code == 0 and "no leftover processes of the earlier sweep are running" in err


def test_a_resume_without_leftovers_says_so(tmp_path: Path, mine: Mine) -> None:
    exp = sweep(tmp_path, {"one": {"mode": "mm", "targets": TORCH_CPU}})
    results = tmp_path / "results"
    code, err = cli("run", exp, "--python", mine.path, "--results", results)
    assert code == 0 and "leftover processes" not in err, err
    code, err = cli("run", exp, "--python", mine.path, "--results", results)
    assert code == 0 and "no leftover processes of an earlier sweep are running" in err, err


# class 4: daemons that leave the process group ----------------------------------------------
@pytest.mark.parametrize("kind", ["daemon", "double_fork"])
def test_a_daemon_outside_the_group_is_ended_after_its_run(tmp_path: Path, mine: Mine,
                                                           kind: str) -> None:
    exp = sweep(tmp_path, {kind: {"mode": "mm", "env": {"FAULT": kind}, "targets": TORCH_CPU},
                           "after": {"mode": "mm", "targets": TORCH_CPU}})
    before = set(mine.pids())
    code, err = cli("run", exp, "--python", mine.path, "--results", tmp_path / "results")
    assert code == 0, err  # the program's own daemon is not its failure: it is noted
    [pid] = [p for p in set(mine.pids()) - before if mine.child_of(p)]
    daemon_pid = mine.child_of(pid)
    assert daemon_pid is not None and dead(daemon_pid), "the daemon outlived its run"
    runs = {r["experiment"]: r for r in runs_of(tmp_path / "results").values()}
    left = json.loads(runs[kind]["state_json"])["left_running"]
    assert any(entry.startswith(f"pid {daemon_pid} (") for entry in left), left
    assert "left_running" not in json.loads(runs["after"]["state_json"])


AFTER_MAIN = """
import ctypes, signal, sys
from orchestrator.cli import main
code = main(sys.argv[1:])
mark = ctypes.c_int()
ctypes.CDLL(None).prctl(37, ctypes.byref(mark), 0, 0, 0)  # PR_GET_CHILD_SUBREAPER
print(code, mark.value, signal.getsignal(signal.SIGTERM) is signal.SIG_DFL)
"""


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the subreaper is Linux's")
def test_a_sweep_run_in_process_leaves_the_process_as_it_found_it(tmp_path: Path,
                                                                  mine: Mine) -> None:
    """`main(["run", ...])` in a process that goes on (a test worker, a notebook): the
    subreaper mark and the SIGTERM handler last the sweep only. A worker that kept the mark
    adopted the orphans of every daemon it started later and never reaped them (a test sshd's
    finished sweeps stayed zombies, alive to `kill -0`)."""
    exp = sweep(tmp_path, {"daemon": {"mode": "mm", "env": {"FAULT": "daemon"},
                                      "targets": TORCH_CPU}})
    done = subprocess.run([sys.executable, "-c", AFTER_MAIN, "run", str(exp), "--python",
                           str(mine.path), "--results", str(tmp_path / "results")],
                          cwd=PROJECT, capture_output=True, text=True, timeout=120)
    assert done.stdout.split() == ["0", "0", "True"], done.stderr


# class 4: SIGTERM during `build` ----------------------------------------------------------------
FAKE_CARGO = """
import subprocess, sys, time
from pathlib import Path
child = subprocess.Popen(["sleep", "300"])  # as rustc under cargo
Path({pid_file!r}).write_text(str(child.pid))
time.sleep(300)
"""


def install_cargo(env: dict[str, str], program: str, pid_file: Path) -> Path:
    """`program` (a FAKE_CARGO text) as the cargo first on the copy's PATH; the file where it
    writes its child's pid."""
    cargo = Path(env["PATH"].split(os.pathsep)[0]) / "cargo"
    cargo.write_text(f"#!{sys.executable}\n{program.format(pid_file=str(pid_file))}")
    cargo.chmod(0o755)
    return pid_file


def test_sigterm_during_build_ends_cargos_children(tmp_path: Path,
                                                   copied: ProjectCopy) -> None:
    root, env = copied
    pid_file = install_cargo(env, FAKE_CARGO, tmp_path / "rustc.pid")
    exp = write_yaml(root / "b.yaml", {
        "version": 1, "builds": {"cpu": {"crate": "exec-cpu"}},
        "experiments": {"burn": {"mode": "mm", "targets": [
            {"program": "burn", "build": "cpu", "device": "flex"}]}}})
    proc = orchestrator("build", exp, cwd=root, env=env)
    wait_for(lambda: pid_file.exists() and pid_file.read_text() != "", "cargo's child")
    child = int(pid_file.read_text())
    os.kill(proc.pid, signal.SIGTERM)
    _out, err = proc.communicate(timeout=30)
    assert proc.returncode == 130 and "Traceback" not in err, err
    wait_for(lambda: dead(child), "cargo's child to end", timeout=5)


FAKE_CARGO_ONCE = """
import subprocess, sys, time
from pathlib import Path
pid_file = Path({pid_file!r})
if sys.argv[1:] == ["--version"]:  # the sweep's host facts
    print("cargo 1.95.0 (fake)")
    sys.exit(0)
if pid_file.exists():  # the second time: a plain failure
    sys.stderr.write("error: could not compile\\n")
    sys.exit(101)
child = subprocess.Popen(["sleep", "300"])  # as rustc under cargo
pid_file.write_text(f"{{child.pid}}")
time.sleep(300)
"""


def test_a_build_left_running_by_a_killed_orchestrator_is_ended_next_time(
        tmp_path: Path, copied: ProjectCopy, mine: Mine) -> None:
    root, env = copied
    pid_file = install_cargo(env, FAKE_CARGO_ONCE, tmp_path / "rustc.pid")
    exp = write_yaml(root / "b.yaml", {
        "version": 1, "defaults": {"shape": [8, 8], "reps": 3},
        "builds": {"cpu": {"crate": "exec-cpu"}},
        "experiments": {"burn": {"mode": "mm", "targets": [
            {"program": "burn", "build": "cpu", "device": "flex"}]},
            "after": {"mode": "mm", "targets": TORCH_CPU}}})
    results = root / "results"
    first = orchestrator("run", exp, "--results", results, "--python", mine.path, cwd=root,
                         env=env)
    wait_for(lambda: pid_file.exists() and pid_file.read_text() != "", "cargo's child")
    child = int(pid_file.read_text())
    # the build runs in the background (run/background.py), written down machine-wide; the
    # results folder's ledger names the run measured meanwhile: cargo is the child's parent
    cargo_pid = psutil.Process(child).ppid()
    first.kill()
    first.communicate(timeout=30)
    assert not dead(cargo_pid) and not dead(child), "cargo should still be running"
    code, err = cli("run", exp, "--results", results, "--python", mine.path, cwd=root, env=env)
    assert code == 1, err  # the build fails this time: its runs fail, the sweep goes on
    line = next(x for x in err.splitlines() if x.startswith("ended "))
    assert line.startswith("ended 2 leftover processes of an earlier sweep: "), line
    assert f"pid {cargo_pid} (" in line and f"pid {child} (sleep 300)" in line, line
    assert dead(cargo_pid) and dead(child)
    assert sorted(statuses(results).values()) == ["failed", "ok"]


# class 3: output flood -------------------------------------------------------------------------
def fault_then_ok(tmp_path: Path, mine: Mine, fault: str, mode: str) -> dict[str, Any]:
    """A bounded sweep of one misbehaving run, then a good one: its run rows by experiment,
    the good run ok (the sweep went on), exit 1."""
    exp = sweep(tmp_path, {fault: {"mode": mode, "env": {"FAULT": fault}, "targets": TORCH_CPU},
                           "after": {"mode": "mm", "targets": TORCH_CPU}})
    code, err = cli("run", exp, "--python", mine.path, "--results", tmp_path / "results",
                    timeout=60, memory_mib=1024)
    assert code == 1, err
    runs = {r["experiment"]: r for r in runs_of(tmp_path / "results").values()}
    assert runs["after"]["status"] == "ok" and runs[fault]["status"] == "failed", runs
    return runs


def test_a_flood_of_output_is_killed_at_the_cap_while_it_runs(tmp_path: Path, mine: Mine) -> None:
    runs = fault_then_ok(tmp_path, mine, "flood", "mm")
    assert runs["flood"]["reason"].startswith(
        f"output cut at {process.OUTPUT_CAP} bytes (the rest is lost): still printing at several "
        "times that, process group killed"), runs["flood"]["reason"]
    assert len(runs["flood"]["stdout"]) == process.OUTPUT_CAP
    # killed long before its 60 s timeout
    assert runs["flood"]["wall_s"] < 50


# class 3: an array far larger than the run's shape ---------------------------------------------
def test_a_multi_gb_array_is_a_failed_run_not_a_memory_error(tmp_path: Path, mine: Mine) -> None:
    runs = fault_then_ok(tmp_path, mine, "big_array", "accuracy")
    assert runs["big_array"]["reason"].startswith(
        "array a.npy is 3.0 GiB, over the 64.5 KiB a 8x8 run's arrays may take (not kept)")


# class 5: a run that cannot start -----------------------------------------------------------------
FAKE_BURN = """
import time
from pathlib import Path
cache = Path.cwd().parent / "target" / "environment" / "autotune"
cache.mkdir(parents=True, exist_ok=True)
(cache / "matmul.json").write_text("{}")
hold = Path({hold!r})
while hold.exists():  # the test keeps this run in flight
    Path(str(hold) + ".seen").write_text("")
    time.sleep(0.01)
print("cuda: device init 1.000ms")
print("cuda 8x8 matmul with sync, 3 runs: min 1.000\\u00b5s median 2.000\\u00b5s")
"""


def install_burn(root: Path, tmp_path: Path) -> Path:
    """A stand-in burn binary where an up-to-date build would be; its folder (the hold file)."""
    from orchestrator.experiments.config import Build
    from orchestrator.programs.burn.cargo import Builder
    folder = tmp_path / "burn"
    folder.mkdir()
    program = folder / "fake-burn"
    body = FAKE_BURN.replace("{hold!r}", repr(str(folder / "hold")))
    program.write_text(f"#!{sys.executable}\n{body}", encoding="utf-8")
    program.chmod(0o755)
    Builder(root)._install(Build(crate="exec-cpu"), program)
    return folder


def burn_sweep(root: Path, name: str, cache: list[str]) -> Path:
    return write_yaml(root / f"{name}.yaml", {
        "version": 1, "defaults": {"shape": [8, 8], "reps": 3},
        "builds": {"cpu": {"crate": "exec-cpu"}},
        "experiments": {name: {"mode": "mm", "cache": cache, "targets": [
            {"program": "burn", "build": "cpu", "device": "cuda"}]},
            "after": {"mode": "mm", "targets": TORCH_CPU}}})


@contextlib.contextmanager
def immutable(path: Path) -> Iterator[None]:
    done = subprocess.run(["chattr", "+i", str(path)], capture_output=True, text=True,
                          check=False)
    if done.returncode != 0:
        pytest.skip(f"chattr +i does not work here: {done.stderr.strip()}")
    try:
        yield
    finally:
        subprocess.run(["chattr", "-i", str(path)], check=True)


def test_an_undeletable_file_in_the_cache_is_a_failed_run(tmp_path: Path,
                                                          copied: ProjectCopy,
                                                          mine: Mine) -> None:
    """As root, chmod stops nothing: an immutable file (chattr +i) cannot be removed by root."""
    root, env = copied
    install_burn(root, tmp_path)
    stuck = root / "bench_rust" / "target" / "environment" / "autotune" / "stuck.json"
    stuck.parent.mkdir(parents=True)
    stuck.write_text("{}")
    exp = burn_sweep(root, "cold", ["cold"])
    with immutable(stuck):
        code, err = cli("run", exp, "--results", root / "results", "--python", mine.path,
                        cwd=root, env=env)
        assert stuck.read_text() == "{}"
    assert code == 1, err
    runs = {r["experiment"]: r for r in runs_of(root / "results").values()}
    assert runs["after"]["status"] == "ok"  # the sweep went on
    assert runs["cold"]["status"] == "failed"
    assert runs["cold"]["reason"] == (
        f"cannot empty burn's cache {stuck.parent.parent}: {stuck}: Operation not permitted "
        "(the run did not start)"), runs["cold"]["reason"]


# class 6: a cut stderr alone ---------------------------------------------------------------
def test_a_complete_run_with_over_long_stderr_is_ok(tmp_path: Path, mine: Mine) -> None:
    exp = sweep(tmp_path, {"noisy": {"mode": "mm", "env": {"FAULT": "stderr_flood"},
                                     "targets": TORCH_CPU}},
                env={"HUGE_KIB": str(process.OUTPUT_CAP // 1024 + 64)})
    code, _err = cli("run", exp, "--python", mine.path, "--results", tmp_path / "results",
                     timeout=60, memory_mib=1024)
    [run] = runs_of(tmp_path / "results").values()
    assert (code, run["status"]) == (0, "ok"), run["reason"]
    assert json.loads(run["state_json"])["stderr_cut_at"] == process.OUTPUT_CAP
    assert len(run["stderr"]) == process.OUTPUT_CAP


# class 6: two sweeps, one cubecl cache ----------------------------------------------------
def test_a_cold_run_waits_for_another_sweeps_warm_run_on_the_same_cache(
        tmp_path: Path, copied: ProjectCopy, mine: Mine) -> None:
    root, env = copied
    burn = install_burn(root, tmp_path)
    cache = root / "bench_rust" / "target" / "environment"
    (cache / "autotune").mkdir(parents=True)
    (cache / "autotune" / "kept.json").write_text("{}")
    (burn / "hold").write_text("")
    warm = orchestrator("run", burn_sweep(root, "warm", ["warm"]), "--results", root / "a",
                        "--python", mine.path, cwd=root, env=env)
    try:
        wait_for(lambda: (burn / "hold.seen").exists() or warm.poll() is not None,
                 "the warm run in flight")
        code, err = cli("run", burn_sweep(root, "cold", ["cold"]), "--results", root / "b",
                        "--python", mine.path, cwd=root, env=env)
        assert (cache / "autotune" / "kept.json").exists(), "deleted under the warm run"
    finally:
        (burn / "hold").unlink()
        _out, warm_err = warm.communicate(timeout=60)
    assert code == 1, err
    cold = {r["experiment"]: r for r in runs_of(root / "b").values()}
    assert cold["after"]["status"] == "ok"
    assert cold["cold"]["status"] == "failed"
    assert cold["cold"]["reason"] == (
        f"burn's cache {cache} is in use by another orchestrator (pid {warm.pid}, results "
        f"{(root / 'a').absolute()}, cache {cache}); waited {cache_lock.WAIT_S:g} s: run one "
        "sweep at a time (--retry-failed runs this again)"), cold["cold"]["reason"]
    assert warm.returncode == 0, warm_err
    assert set(statuses(root / "a").values()) == {"ok"}


# class 8: a Rust panic's reason -------------------------------------------------------------------
def test_an_abort_after_a_panic_gives_the_panic_message(tmp_path: Path, mine: Mine) -> None:
    exp = sweep(tmp_path, {"panic": {"mode": "mm", "env": {"FAULT": "panic"},
                                     "targets": TORCH_CPU}})
    code, err = cli("run", exp, "--python", mine.path, "--results", tmp_path / "results")
    assert code == 1, err
    [run] = runs_of(tmp_path / "results").values()
    assert run["reason"] == ("killed by signal SIGABRT: thread 'main' panicked at "
                             "bench-core/src/bench.rs:120:9: matmul shapes differ: [8, 8] "
                             "and [9, 9]"), run["reason"]


# the real program: nothing survives ----------------------------------------------------------
def test_a_real_torch_run_leaves_no_process_behind(tmp_path: Path) -> None:
    """Every process of the run inherits the experiment's PROBE (ours alone: other sweeps may
    be running on this machine): none may be alive after `run`."""
    probe = uuid.uuid4().hex
    exp = sweep(tmp_path, {"real": {"mode": "mm", "env": {"PROBE": probe},
                                    "targets": TORCH_CPU}})
    python = PROJECT / ".venv" / "bin" / "python"
    code, err = cli("run", exp, "--python", python, "--results", tmp_path / "results",
                    timeout=300)
    assert code == 0, err
    [run] = runs_of(tmp_path / "results").values()
    assert run["status"] == "ok" and "left_running" not in json.loads(run["state_json"])
    assert not (tmp_path / "results" / leftovers.LEDGER).exists()
    assert carrying("PROBE", probe) == [], "a process of the run is still running"
