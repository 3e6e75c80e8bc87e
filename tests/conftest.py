"""Shared fixtures: the project tree, real burn binaries (built once), small experiments files."""

from __future__ import annotations

import contextlib
import copy
import os
import select
import signal
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from orchestrator import programs
from orchestrator.experiments.config import Build
from orchestrator.programs import base
from orchestrator.programs.burn.cargo import CACHE_ENV, Builder, cache_root
from orchestrator.records import BuildResult
from orchestrator.run import cache_lock

from .parts import chromium_command

PROJECT = Path(__file__).resolve().parent.parent
# the tests of the real JAX program, where this Python cannot import JAX: one probe a session
# (an xdist worker's), not one in each module that has such tests (about 1 s each)
needs_jax = pytest.mark.skipif(
    subprocess.run([sys.executable, "-c", "import jax"], capture_output=True,
                   check=False).returncode != 0, reason="JAX is not installed for this Python")
DATA = Path(__file__).resolve().parent / "data"
# The CPU builds the tests run; the orchestrator's own `build` shares their target folder.
CPU_BUILDS = {
    "template": Build(crate="exec-cpu"),
    "default": Build(crate="exec-gpu"),
    "x86-v4": Build(crate="exec-amx", features=("x86-v4",)),
}


# The user's build cache as the session found it: the real builds below share it (warm); every
# test gets its own empty one (programs/burn/cargo.py), so that a fake cargo's "binary" of the real
# sources never lands where a real run would take it.
USER_BUILD_CACHE = cache_root()


@pytest.fixture(autouse=True)
def _own_build_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(CACHE_ENV, str(tmp_path / "build-cache"))


# modules that drive the command line or real programs end to end: `slow`, with every test that
# builds (cargo) or runs PyTorch (torch); `pytest -m "not slow"` is the quick loop of unit tests
SLOW_MODULES = ("test_faults", "test_readme_", "test_bench_py", "test_apple_builds",
                "test_state_real")


@pytest.hookimpl(tryfirst=True)  # before -m deselects
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if "burn_builds" in getattr(item, "fixturenames", ()):
            item.add_marker(pytest.mark.cargo)
        real = item.get_closest_marker("cargo") or item.get_closest_marker("torch")
        group = real_group(item)
        if group is not None:
            item.add_marker(pytest.mark.xdist_group(group))
        if real or item.path.name.startswith(SLOW_MODULES):
            item.add_marker(pytest.mark.slow)


def real_group(item: pytest.Item) -> str | None:
    """The xdist group whose one worker runs this test in turn with the others of its group
    (`--dist loadgroup`), by what they share; the groups run beside each other and beside the
    ungrouped tests, as a real run already did beside those (one group of all three was the
    suite's critical path: 40% of its time on one worker of two):
    - `hosts`: the sshd and Slurm tests: one munged and one slurmd per machine (each worker's
      session would start its own cluster), and the orchestrators they start there over ssh
      share this user's machine-wide folder (sshd passes them no ORCHESTRATOR_TEST_LOCKS_ROOT),
      where a killed one's leftovers are ended by the next;
    - `real-builds`: every cargo test: the user's build cache and cubecl's cache folder;
    - `real-programs`: every other torch test (the real PyTorch and JAX programs): no two
      real timings side by side."""
    fixtures = getattr(item, "fixturenames", ())
    if "sshd" in fixtures or "slurm" in fixtures:
        return "hosts"
    if item.get_closest_marker("cargo"):
        return "real-builds"
    if item.get_closest_marker("torch"):
        return "real-programs"
    return None


class _GroupIds:
    """pytest-xdist's `--dist loadgroup` sends an `xdist_group` to one worker by the `@group`
    suffix it gives each test's id, set as `item._nodeid`; pytest 9 keeps a node's id in
    `item._id`, so the suffix is lost and the group's tests spread over every worker (two
    real builds at once, two Slurm clusters). This sets the suffix where pytest reads it."""

    @pytest.hookimpl(trylast=True)  # after xdist's own
    def pytest_collection_modifyitems(self, config: pytest.Config,
                                      items: list[pytest.Item]) -> None:
        if not getattr(config.option, "loadgroup", False) or not items \
                or not hasattr(items[0], "_id"):
            return
        from _pytest.nodeid import NodeId  # pytest >= 9 only (hasattr above)
        for item in items:
            mark = item.get_closest_marker("xdist_group")
            nodeid = item.nodeid
            if mark is None or nodeid.rfind("@") > nodeid.rfind("]"):  # xdist's own test
                continue
            name = mark.args[0] if mark.args else mark.kwargs.get("name", "default")
            item._id = NodeId.parse(f"{nodeid}@{name}")


def pytest_configure(config: pytest.Config) -> None:
    config.pluginmanager.register(_GroupIds(), "xdist-group-ids")


@pytest.fixture(scope="session", autouse=True)
def _machine_wide_folder(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """The orchestrator's machine-wide files (cache locks, the running programs' registry) in
    a folder of this session (of this xdist worker): a test that SIGKILLs an orchestrator
    leaves entries that another worker's sweep, or a real sweep of this user, would otherwise
    end as leftovers. Every orchestrator a test starts inherits the variable."""
    root = tmp_path_factory.mktemp("machine")
    before = os.environ.get(cache_lock.ROOT_ENV)
    os.environ[cache_lock.ROOT_ENV] = str(root)
    yield root
    if before is None:
        os.environ.pop(cache_lock.ROOT_ENV, None)
    else:
        os.environ[cache_lock.ROOT_ENV] = before


@pytest.fixture(autouse=True)
def _signal_handlers() -> Iterator[None]:
    """Each test starts with the handlers the one before it found: `cli.main` in-process sets
    its own SIGTERM handler, and the signal tests compare handlers before and after."""
    saved = {sig: signal.getsignal(sig) for sig in (signal.SIGINT, signal.SIGTERM)}
    yield
    for sig, handler in saved.items():
        if handler is not None and signal.getsignal(sig) is not handler:
            signal.signal(sig, handler)


@pytest.fixture(scope="session")
def project() -> Path:
    return PROJECT


@pytest.fixture(scope="session")
def burn_builds() -> dict[str, BuildResult]:
    """The real CPU crates, built with cargo once per test session (fresh builds are skipped)."""
    builder = Builder(PROJECT, cache=USER_BUILD_CACHE)
    results = {name: builder.build(name, build) for name, build in CPU_BUILDS.items()}
    failed = {n: r.error for n, r in results.items() if r.status != "ok"}
    assert not failed, f"cargo builds failed: {failed}"
    return results


@pytest.fixture
def chromium(tmp_path: Path) -> list[str]:
    """Headless Chromium's command line with a profile of this test's (tests/parts.py); the test
    is skipped (failed with CI=true) where Chromium is missing. Append the action and the URL."""
    return chromium_command(tmp_path / "chromium-profile")


@pytest.fixture(scope="session")
def python() -> str:
    return sys.executable


_PROBED: dict[tuple[str, str], dict[str, Any]] = {}


def facts_probed_once(monkeypatch: pytest.MonkeyPatch) -> None:
    """For an in-process sweep of torch or JAX targets whose runs are stand-ins (a
    monkeypatched measure step, a fake program), or real programs judged on what they
    measure, not on the facts the sweep records: each framework's facts that a sweep records
    (only of the programs its plan runs), probed by a Python that imports it (torch about
    2.5 s of CPU, JAX 2 s: as much as a tiny run of the real program), are probed for real
    once per session (per xdist worker, per interpreter and script) and recorded again by
    later sweeps. A sweep of other programs probes neither. The probes themselves are tested by
    tests/run/test_detect.py, and run for real in every sweep of tests/run/test_sweep.py (the
    real programs end to end), of a subprocess (test_faults, test_state_real, test_carry) and
    of a host (tests/hosts)."""
    for program in programs.active().programs:
        module = sys.modules[type(program).__module__]
        real = getattr(module, "python_facts", None)
        if real is not base.python_facts:
            continue

        def once(python: str, script: str, real: Callable[..., dict[str, Any]] = real
                 ) -> dict[str, Any]:
            if (python, script) not in _PROBED:
                _PROBED[python, script] = real(python, script)
            return copy.deepcopy(_PROBED[python, script])

        monkeypatch.setattr(module, "python_facts", once)


@contextlib.contextmanager
def facts_once() -> Iterator[None]:
    """`facts_probed_once` for a fixture wider than one test (a module's or the session's
    sweep), undone when the sweep is made."""
    with pytest.MonkeyPatch.context() as monkeypatch:
        facts_probed_once(monkeypatch)
        yield


def write(path: Path, text: str) -> Path:
    path.write_text(text, encoding="utf-8")
    return path


def dead_within(pid: int, timeout_s: float = 30) -> bool:
    """Whether `pid` has exited (a zombie has), or does within `timeout_s`: a wait on its pidfd,
    which wakes at the exit itself, not a sleep and a look at /proc. A SIGKILL is delivered
    when its target next runs, so a killed process may still show as running for a moment on
    a loaded machine."""
    if not hasattr(os, "pidfd_open"):  # macOS: signal 0 says whether it is still there
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return True
        return False
    try:
        fd = os.pidfd_open(pid)
    except ProcessLookupError:
        return True  # exited and reaped
    try:
        poller = select.poll()
        poller.register(fd, select.POLLIN)
        return bool(poller.poll(timeout_s * 1000))
    finally:
        os.close(fd)
