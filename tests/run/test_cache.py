"""burn's cache folder: found by cubecl's rule, removed only when it is exactly that folder."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from orchestrator.errors import CacheSafetyError
from orchestrator.run.cache import (
    CacheContents,
    cache_dir_for,
    check_removable,
    config_override,
    remove_cache,
)


def _tree(root: Path) -> Path:
    """project/bench_rust (workspace) with a crate and a populated cache; returns bench_rust."""
    rust = root / "project" / "bench_rust"
    (rust / "exec-gpu" / "src").mkdir(parents=True)
    (rust / "Cargo.toml").write_text("[workspace]\n")
    (rust / "exec-gpu" / "Cargo.toml").write_text("[package]\n")
    cache = rust / "target" / "environment" / "autotune"
    cache.mkdir(parents=True)
    (cache / "matmul.json").write_text("{}" * 50)
    return rust


def test_outermost_cargo_toml_wins(tmp_path: Path) -> None:
    rust = _tree(tmp_path)
    assert cache_dir_for(rust / "exec-gpu" / "src") == rust / "target" / "environment"
    assert cache_dir_for(rust) == rust / "target" / "environment"


def test_no_cargo_toml_above_is_refused(tmp_path: Path) -> None:
    with pytest.raises(CacheSafetyError, match="per-user cache"):
        cache_dir_for(tmp_path)


def test_remove_records_what_was_there(tmp_path: Path) -> None:
    rust = _tree(tmp_path)
    keep = rust / "target" / "release-keep.txt"
    keep.write_text("cargo output stays")
    before = remove_cache(rust / "target" / "environment", rust)
    assert before.exists and before.files == 1 and before.bytes == 100
    assert not (rust / "target" / "environment").exists()
    assert keep.read_text() == "cargo output stays"
    again = remove_cache(rust / "target" / "environment", rust)  # already gone: fine
    assert not again.exists and again.files == 0


@pytest.mark.parametrize("make_path", [
    lambda rust: rust / "target",  # not the cache folder
    lambda rust: rust,  # the workspace itself
    lambda rust: rust.parent,  # the project root
    lambda rust: rust / "exec-gpu" / ".." / ".." / "target" / "environment",  # '..' out
    lambda rust: rust.parent / "target" / "environment",  # named right, outside bench_rust
    lambda rust: Path("/tmp/target/environment"),  # absolute, elsewhere
])
def test_refused_paths_delete_nothing(tmp_path: Path, make_path) -> None:
    rust = _tree(tmp_path)
    outside = rust.parent / "target" / "environment"
    outside.mkdir(parents=True)
    (outside / "precious").write_text("x")
    files_before = sorted(p for p in tmp_path.rglob("*"))
    with pytest.raises(CacheSafetyError, match="refusing"):
        remove_cache(make_path(rust), rust)
    assert sorted(p for p in tmp_path.rglob("*")) == files_before


def test_symlinks_out_are_refused(tmp_path: Path) -> None:
    rust = _tree(tmp_path)
    victim = tmp_path / "victim" / "environment"
    victim.mkdir(parents=True)
    (victim / "precious").write_text("keep me")
    cache = rust / "target" / "environment"
    for p in sorted(cache.rglob("*"), reverse=True):
        p.unlink() if p.is_file() else p.rmdir()
    cache.rmdir()
    cache.symlink_to(victim)  # the cache folder itself is a link out
    with pytest.raises(CacheSafetyError, match="symlink"):
        remove_cache(cache, rust)
    cache.unlink()
    target = rust / "target"
    os.rename(target, tmp_path / "real-target")
    target.symlink_to(tmp_path / "victim")  # a parent on the way is a link out
    with pytest.raises(CacheSafetyError, match="symlink"):
        remove_cache(rust / "target" / "environment", rust)
    assert (victim / "precious").read_text() == "keep me"


def test_cache_state_sees_a_write(tmp_path: Path) -> None:
    rust = _tree(tmp_path)
    cache = rust / "target" / "environment"
    before = CacheContents.of(cache)
    (cache / "autotune" / "new.json").write_text("{}")
    after = CacheContents.of(cache)
    assert after.written_since(before) and after.files == 2
    assert not CacheContents.of(cache).written_since(after)
    check_removable(cache, rust)  # the real cache is accepted


def test_config_file_that_moves_the_cache_is_found(tmp_path: Path) -> None:
    rust = _tree(tmp_path)
    assert config_override(rust / "exec-gpu") is None
    (rust / "cubecl.toml").write_text("[environment]\npath = 'global'\n")
    assert config_override(rust / "exec-gpu") == rust / "cubecl.toml"


@pytest.mark.parametrize("name", ["CubeCL.toml", "Burn.toml", "cubecl.toml", "burn.toml"])
def test_every_config_name_cubecl_reads_is_refused(tmp_path: Path, name: str) -> None:
    """cubecl-runtime 0.11.3 config/base.rs:65,69 reads both spellings of both files."""
    rust = _tree(tmp_path)
    (rust / "exec-gpu" / name).write_text("[environment]\npath = 'global'\n")
    found = config_override(rust / "exec-gpu")
    assert found is not None and found.name.lower() == name.lower()
