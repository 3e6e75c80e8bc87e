"""The build cache outlives a clone: cargo's target folder and the binaries by source hash in the
user's cache folder, never cubecl's autotune cache (a fake cargo records what it is asked)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from orchestrator.experiments.config import Build
from orchestrator.programs.burn.cargo import CACHE_ENV, Builder, cache_root
from orchestrator.run.cache import cache_dir_for

from .test_cargo import fake_project  # noqa: F401 (a fixture)

PLAIN = Build(crate="exec-gpu")


def _calls(cargo: Path) -> list[str]:
    log = cargo.parent / "calls.log"
    return log.read_text().splitlines() if log.exists() else []


def test_the_cache_is_the_users_unless_the_variable_says(monkeypatch: pytest.MonkeyPatch,
                                                         tmp_path: Path) -> None:
    monkeypatch.delenv(CACHE_ENV)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert cache_root() == tmp_path / "xdg" / "orchestrator"
    monkeypatch.setenv("XDG_CACHE_HOME", "relative/is/ignored")  # the XDG spec's rule
    assert cache_root() == Path.home() / ".cache" / "orchestrator"
    monkeypatch.setenv(CACHE_ENV, str(tmp_path / "mine"))
    assert cache_root() == tmp_path / "mine"


def test_cargo_builds_into_the_cache_target(fake_project) -> None:  # noqa: F811
    project, cargo = fake_project
    builder = Builder(project, cargo=str(cargo))
    assert builder.build("default", PLAIN).status == "ok"
    (call,) = _calls(cargo)
    assert f"--target-dir {cache_root() / 'cargo-target'} " in call
    assert not (project / "build" / "cargo").exists()


def test_a_second_clone_takes_the_binary_without_cargo(fake_project, tmp_path: Path) -> None:  # noqa: F811
    project, cargo = fake_project
    first = Builder(project, cargo=str(cargo)).build("default", PLAIN)
    clone = tmp_path / "clone"
    shutil.copytree(project / "bench_rust", clone / "bench_rust")
    second = Builder(clone, cargo=str(cargo)).build("default", PLAIN)
    assert second.status == "ok" and second.fresh and len(_calls(cargo)) == 1
    assert second.binary == clone / "build" / "bin" / "exec-gpu" / "exec-gpu"
    assert second.binary.read_bytes() == first.binary.read_bytes()


def test_a_clone_at_another_commit_never_gets_those_binaries(fake_project,  # noqa: F811
                                                             tmp_path: Path) -> None:
    project, cargo = fake_project
    Builder(project, cargo=str(cargo)).build("default", PLAIN)
    clone = tmp_path / "clone"
    shutil.copytree(project / "bench_rust", clone / "bench_rust")
    lib = clone / "bench_rust" / "bench-core" / "src" / "lib.rs"
    lib.write_text(lib.read_text() + "\n// another commit\n")
    other = Builder(clone, cargo=str(cargo))
    assert other.build("default", PLAIN).fresh is False and len(_calls(cargo)) == 2
    # both source versions' binaries are kept, each under its own hash
    assert len(list((cache_root() / "bin").iterdir())) == 2


def test_a_damaged_cached_binary_is_rebuilt(fake_project, tmp_path: Path) -> None:  # noqa: F811
    project, cargo = fake_project
    builder = Builder(project, cargo=str(cargo))
    builder.build("default", PLAIN)
    (builder.cached_path(PLAIN).parent / "stamp.json").write_text("{half a stamp")
    clone = tmp_path / "clone"
    shutil.copytree(project / "bench_rust", clone / "bench_rust")
    assert not Builder(clone, cargo=str(cargo)).build("default", PLAIN).fresh
    assert len(_calls(cargo)) == 2


def test_a_target_inside_cubecls_cache_folder_is_refused(fake_project,  # noqa: F811
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    project, cargo = fake_project
    monkeypatch.setenv(CACHE_ENV, str(project / "bench_rust" / "target"))
    result = Builder(project, cargo=str(cargo)).build("default", PLAIN)
    assert result.status == "failed" and _calls(cargo) == []
    assert "cubecl's autotune cache, deleted by cold runs" in (result.error or "")


def test_cubecls_cache_is_not_in_the_build_cache(fake_project) -> None:  # noqa: F811
    """A cold run deletes cache_dir_for(the crate's folder): that is in the clone, and the
    build cache holds none of it (nothing moved, nothing shared between clones)."""
    project, cargo = fake_project
    builder = Builder(project, cargo=str(cargo))
    builder.build("default", PLAIN)
    cubecl = cache_dir_for(project / "bench_rust" / "exec-gpu")
    assert cubecl == project / "bench_rust" / "target" / "environment"
    assert builder.cache not in cubecl.parents and cubecl not in builder.cache.parents


def test_binaries_already_in_build_bin_seed_the_cache(fake_project, tmp_path: Path,  # noqa: F811
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    """A clone whose build/bin is up to date (built before the cache existed) fills the cache
    on its first look, so the next clone needs no cargo."""
    project, cargo = fake_project
    Builder(project, cargo=str(cargo)).build("default", PLAIN)
    monkeypatch.setenv(CACHE_ENV, str(tmp_path / "new-cache"))
    assert Builder(project, cargo=str(cargo)).build("default", PLAIN).fresh
    clone = tmp_path / "clone"
    shutil.copytree(project / "bench_rust", clone / "bench_rust")
    assert Builder(clone, cargo=str(cargo)).build("default", PLAIN).fresh
    assert len(_calls(cargo)) == 1


def test_an_expected_failure_is_kept_for_the_same_sources(fake_project,  # noqa: F811
                                                          tmp_path: Path) -> None:
    """The chapter's accelerate build fails after compiling the whole stack: a second clone of
    the same sources records the same error without cargo; other sources build again."""
    project, cargo = fake_project
    broken = Build.model_construct(crate="exec-amx", features=("broken",), requires=(), env={},
                                   expect_failure=True)
    first = Builder(project, cargo=str(cargo)).build("accelerate", broken)
    assert first.status == "failed" and "cannot find value" in first.error
    clone = tmp_path / "clone"
    shutil.copytree(project / "bench_rust", clone / "bench_rust")
    again = Builder(clone, cargo=str(cargo)).build("accelerate", broken)
    assert again.status == "failed" and again.error == first.error and len(_calls(cargo)) == 1
    assert again.outcome == "failed (expected)"
    unexpected = Build.model_construct(crate="exec-amx", features=("broken",), requires=(),
                                       env={}, expect_failure=False)  # not expected: tried
    Builder(clone, cargo=str(cargo)).build("x", unexpected)
    assert len(_calls(cargo)) == 2
