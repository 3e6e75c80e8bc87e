"""Shared fixtures: the project tree, real burn binaries (built once), small experiments files."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from orchestrator.data.records import BuildResult
from orchestrator.programs.cargo import CACHE_ENV, Builder, cache_root
from orchestrator.spec.config import Build

PROJECT = Path(__file__).resolve().parent.parent
DATA = Path(__file__).resolve().parent / "data"
# The CPU builds the tests run; the orchestrator's own `build` shares their target folder.
CPU_BUILDS = {
    "template": Build(crate="exec-cpu"),
    "default": Build(crate="exec-gpu"),
    "x86-v4": Build(crate="exec-amx", features=("x86-v4",)),
}


# The user's build cache as the session found it: the real builds below share it (warm); every
# test gets its own empty one (programs/cargo.py), so that a fake cargo's "binary" of the real
# sources never lands where a real run would take it.
USER_BUILD_CACHE = cache_root()


@pytest.fixture(autouse=True)
def _own_build_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(CACHE_ENV, str(tmp_path / "build-cache"))


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


@pytest.fixture(scope="session")
def python() -> str:
    return sys.executable


def write(path: Path, text: str) -> Path:
    path.write_text(text, encoding="utf-8")
    return path
