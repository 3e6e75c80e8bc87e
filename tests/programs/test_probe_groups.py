"""A group kill reaches only our group (issue 46's fresh pass, "wrong kill"): the measured
program's, a fact command's and cargo's group are killed after they exit, and a background
build's pause may arrive as cargo exits. Killing a group by the pid of a leader already reaped
reached whatever program took that pid next, if it leads a group of its own (a shell's job, a
daemon). Provoked for real inside a pid namespace of its own: right after each reap,
`ns_last_pid` hands the freed pid to a `setsid sleep`, which must survive."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
LOCKS = "ORCHESTRATOR_TEST_LOCKS_ROOT"  # the test suite's own machine-wide folder

# every reap of `true`/`false` (the programs started below) plants another program's group
# leader on the freed pid; `false` is cargo's stand-in, whose watch then gets a pause
CHILD = r"""
import os, signal, subprocess, sys, time
from pathlib import Path
from orchestrator.programs import probe
from orchestrator.programs.burn import cargo_process
from orchestrator.run import process
from orchestrator.run.background import BuildWatch

planted = []
real_wait = subprocess.Popen.wait
watch = BuildWatch()

def wait(self, timeout=None):
    rc = real_wait(self, timeout)
    if self.args[0] in ("true", "false") and rc is not None and \
            not any(p[0] == self.pid for p in planted):
        with open("/proc/sys/kernel/ns_last_pid", "w") as fh:
            fh.write(str(self.pid - 1))
        sleeper = subprocess.Popen(["setsid", "sleep", "60"])
        while os.getpgid(sleeper.pid) != sleeper.pid:  # setsid has run: a group of its own
            time.sleep(0.001)
        planted.append((self.pid, sleeper, self.args[0]))
        if self.args[0] == "false":
            watch.signal(signal.SIGTERM)  # a pause the runs thread sends right then
    return rc

subprocess.Popen.wait = wait
out = process.spawn(["true"], dict(os.environ), Path("/tmp"), 10)
assert out.returncode == 0, out
assert probe.answer(["true"], 10) == ("", False)
assert cargo_process.run_group(["false"], Path("/tmp"), dict(os.environ), watch).returncode == 1
# a sweep's watch ends what cargo left while cargo is unreaped: its exit code is still its own
import tempfile
from orchestrator.run import leftovers
sweep = leftovers.Watch(Path(tempfile.mkdtemp()))
assert cargo_process.run_group(["sh", "-c", "exit 3"], Path("/tmp"), dict(os.environ),
                               sweep).returncode == 3
time.sleep(0.3)
for pid, sleeper, what in planted:
    print(what, "took pid" if sleeper.pid == pid else "other pid",
          "alive" if sleeper.poll() is None else f"killed {sleeper.returncode}")
"""


def _namespaces() -> bool:
    return shutil.which("unshare") is not None and subprocess.run(
        ["unshare", "-rpf", "--mount-proc", "sh", "-c", "echo 50 > /proc/sys/kernel/ns_last_pid"],
        capture_output=True, check=False).returncode == 0


def test_a_group_is_killed_only_while_its_leader_is_unreaped(tmp_path: Path) -> None:
    if not _namespaces():
        pytest.skip("needs unshare -rpf --mount-proc (a pid namespace whose ns_last_pid we set)")
    script = tmp_path / "child.py"
    script.write_text(CHILD, encoding="utf-8")
    done = subprocess.run(["unshare", "-rpf", "--mount-proc", sys.executable, str(script)],
                          cwd=ROOT, capture_output=True, text=True, timeout=120, check=False,
                          env={"PATH": "/usr/bin:/bin", "PYTHONPATH": str(ROOT),
                               **{k: v for k, v in os.environ.items() if k == LOCKS}})
    assert done.returncode == 0, done.stderr[-3000:]
    lines = done.stdout.splitlines()
    # each planted program took the freed pid (the provocation worked) and was left alone
    assert lines == ["true took pid alive", "true took pid alive", "false took pid alive"], \
        done.stdout + done.stderr[-2000:]


def test_a_command_another_thread_waits_for_is_no_finished_runs_orphan() -> None:
    """A background build asks `rustc -vV` (its cache key) while a measured run ends: the run's
    end took that command for an orphan of the run (our child, born during the run), killed
    it and reaped it, so its Popen read exit code 0 and an empty answer (a wrong cache key) and
    its group id was free for another program. A child a Popen of ours waits for is left to
    that Popen."""
    import threading
    import time

    from orchestrator.programs import probe
    from orchestrator.run import leftovers

    got: dict[str, tuple[str | None, bool]] = {}
    since = time.time() - 5  # the measured run began 5 s ago
    asked = threading.Thread(target=lambda: got.update(answer=probe.answer(
        ["sh", "-c", "sleep 1; echo rustc 1.95.0"], 30)))
    asked.start()
    deadline = time.monotonic() + 10
    while not probe.OWNED and time.monotonic() < deadline:
        time.sleep(0.01)
    time.sleep(0.2)
    assert leftovers.end_descendants(leftovers.new_token(), since) == []
    asked.join()
    assert got["answer"] == ("rustc 1.95.0\n", False)
    assert not probe.OWNED  # reaped by its Popen, and forgotten
