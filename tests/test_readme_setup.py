"""README command 2 on a machine without Slurm and without Chromium: its set-up step
says what it would install or what is skipped, its tests that need the missing parts are
skipped as "not run", and with CI=true the same missing part fails.

In a scratch copy of what the set-up reads (setup.sh, pyproject.toml, tests/parts.py; the
project's .venv linked, so nothing is installed into it again), run with a PATH of links to
every program on this one but slurmctld and chromium (and cargo: no crates to fetch here).
apt-get is never run: the set-up is asked for a dry run, or finds no apt-get. Then the real
Slurm test's fixture in such a copy: skipped, or with CI=true failed, naming slurm-wlm.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from .conftest import PROJECT
from .parts import DRY_RUN_ENV, require_part

pytestmark = pytest.mark.slow
HIDDEN = {"slurmctld", "chromium", "cargo", "rustc"}
COPIED = ("setup.sh", "pyproject.toml", "tests/__init__.py", "tests/parts.py",
          "tests/conftest.py", "tests/hosts")


def stripped_path(folder: Path, hidden: set[str]) -> str:
    """One `bin` folder of links to every program on PATH (and in the `sbin` beside a `bin`)
    but `hidden`: the machine as it would be without them."""
    folder.mkdir()
    for entry in os.environ["PATH"].split(os.pathsep):
        here = Path(entry)
        for source in (here, here.parent / "sbin") if here.name == "bin" else (here,):
            if not source.is_dir():
                continue
            for program in source.iterdir():
                link = folder / program.name
                if program.name not in hidden and not link.exists() \
                        and os.access(program, os.X_OK) and program.is_file():
                    link.symlink_to(program)
    return str(folder)


def refuse_a_stale_set_up(project: Path = PROJECT) -> None:
    """The copy's set-up reinstalls into the linked .venv when pyproject.toml changed since
    the project's own set-up ran (its stamp): from a copy without the package, which would
    leave the project's .venv unable to import it (every later test failing). So not run."""
    stamp = project / ".venv" / ".setup-stamp"
    digest = hashlib.sha256((project / "pyproject.toml").read_bytes()).hexdigest()
    if not stamp.is_file() or not stamp.read_text(encoding="utf-8").startswith(digest):
        pytest.fail("pyproject.toml changed since ./setup.sh last ran: run ./setup.sh first "
                    "(this test's copy would otherwise reinstall into the project's .venv)",
                    pytrace=False)


@pytest.fixture(scope="module")
def scratch(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, str]]:
    """The scratch copy and the environment of a machine without Slurm's controller,
    Chromium and apt-get (a machine where the set-up cannot install them)."""
    refuse_a_stale_set_up()
    root = tmp_path_factory.mktemp("fresh")
    copy = root / "project"
    for name in COPIED:
        (copy / name).parent.mkdir(parents=True, exist_ok=True)
        source = PROJECT / name
        if source.is_dir():
            shutil.copytree(source, copy / name, ignore=shutil.ignore_patterns("__pycache__"))
        else:
            shutil.copy2(source, copy / name)
    (copy / ".venv").symlink_to(PROJECT / ".venv")
    env = {key: value for key, value in os.environ.items()
           if key not in ("CI", DRY_RUN_ENV, "PYTEST_XDIST_WORKER", "PYTEST_ADDOPTS")}
    env["PATH"] = stripped_path(root / "bin", HIDDEN | {"apt-get"})
    env["PYTHON"] = sys.executable
    return copy, env


def test_a_stale_set_up_is_refused_before_the_copy_could_reinstall(tmp_path) -> None:
    (tmp_path / ".venv").mkdir()
    (tmp_path / "pyproject.toml").write_text("[project]\n", encoding="utf-8")
    with pytest.raises(pytest.fail.Exception, match=r"run \./setup\.sh first"):
        refuse_a_stale_set_up(tmp_path)  # never set up
    digest = hashlib.sha256(b"[project]\n").hexdigest()
    (tmp_path / ".venv" / ".setup-stamp").write_text(f"{digest} bytecode\n", encoding="utf-8")
    refuse_a_stale_set_up(tmp_path)  # current: nothing said
    (tmp_path / "pyproject.toml").write_text("[project]\nname = 'x'\n", encoding="utf-8")
    with pytest.raises(pytest.fail.Exception, match="changed since"):
        refuse_a_stale_set_up(tmp_path)


def setup_tests(copy: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["./setup.sh", "--tests"], cwd=copy, env=env, capture_output=True,
                          text=True, timeout=300, check=False)


def test_set_up_says_what_it_cannot_install_and_what_is_skipped(scratch) -> None:
    copy, env = scratch
    done = setup_tests(copy, env)
    assert done.returncode == 0, done.stderr
    for tool, package, tests in (("slurmctld", "slurm-wlm", "the Slurm tests (tests/hosts)"),
                                 ("chromium", "chromium", "the report's browser tests")):
        assert (f"setup.sh --tests: {tool} missing (no apt-get here): {tests} will be skipped "
                f"(install with: apt-get install -y {package}, or ./setup.sh --tests as root)"
                ) in done.stderr
    assert "setup.sh: ready" in done.stdout


def test_set_up_as_root_says_what_it_would_install(scratch) -> None:
    """As root with apt-get it would install them (asked for a dry run: nothing installed)."""
    if os.geteuid() != 0:
        pytest.skip("not run: the install decision of root, and these tests are not root")
    copy, env = scratch
    apt = Path(env["PATH"]) / "apt-get"
    apt.write_text("#!/bin/sh\necho 'apt-get ran in a dry run' >&2\nexit 1\n", encoding="utf-8")
    apt.chmod(0o755)
    try:
        done = setup_tests(copy, {**env, DRY_RUN_ENV: "1"})
    finally:
        apt.unlink()
    assert done.returncode == 0, done.stderr
    assert ("setup.sh --tests: would install slurm-wlm chromium (apt-get; a dry run installs "
            "nothing)") in done.stderr
    assert "apt-get ran" not in done.stderr


def test_with_ci_true_the_set_up_fails_on_a_missing_part(scratch) -> None:
    copy, env = scratch
    done = setup_tests(copy, {**env, "CI": "true"})
    assert done.returncode == 1, done.stderr
    assert "the Slurm tests (tests/hosts) will FAIL (CI=true)" in done.stderr
    assert "setup.sh: ready" not in done.stdout


SLURM_TEST = "tests/hosts/test_slurm_run.py"


def pytest_in(copy: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    """The copy's Slurm tests (their fixture: sshd, then Slurm) in one process."""
    return subprocess.run([sys.executable, "-m", "pytest", "-n", "0", "-p", "no:cacheprovider",
                           "-ra", SLURM_TEST], cwd=copy, env=env, capture_output=True,
                          text=True, timeout=300, check=False)


def test_the_slurm_tests_are_not_run_without_slurm_and_fail_in_ci(scratch) -> None:
    require_part("sshd")  # the fixture starts sshd before it looks for Slurm
    copy, env = scratch
    skipped = pytest_in(copy, env)
    out = skipped.stdout
    assert skipped.returncode == 0, out[-3000:]
    assert ("not run: slurmctld is missing; the Slurm tests (tests/hosts) need it (install with: "
            "apt-get install -y slurm-wlm, or ./setup.sh --tests as root)") in out
    failed = pytest_in(copy, {**env, "CI": "true"})
    assert failed.returncode == 1, failed.stdout[-3000:]
    assert "slurmctld is missing" in failed.stdout
    assert "CI=true: a missing part fails" in failed.stdout
