"""The build cache holds code we run: nothing another user could have put there is taken, no
link there is followed, and a binary built under another environment is never "up to date"
(programs/burn/build_cache, build_env, cargo). A fake cargo records every call; another user is
`nobody` through setpriv, as in tests/run/test_leftovers_hostile.py."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from orchestrator.experiments.config import Build
from orchestrator.programs.burn.cargo import CACHE_ENV, Builder

from .test_cargo import fake_project  # noqa: F401 (a fixture)

NOBODY = ["setpriv", "--reuid=nobody", "--regid=nogroup", "--clear-groups"]
CPU = Build(crate="exec-cpu")
PLANTED = "#!/bin/sh\nid -u > /tmp/planted-ran\n"


def _calls(cargo: Path) -> list[str]:
    log = cargo.parent / "calls.log"
    return log.read_text().splitlines() if log.exists() else []


@pytest.fixture
def shared() -> Iterator[Path]:
    """A folder every user may write, like a shared /tmp/shared (no sticky bit)."""
    place = Path(tempfile.mkdtemp(prefix="i46-cache-", dir="/tmp"))
    place.chmod(0o777)
    yield place
    shutil.rmtree(place)


def _plant_as_nobody(folder: Path, builder: Builder, build: Build) -> None:
    """Another user writes an entry exactly as our cache would hold it: binary and stamp."""
    script = (f"import json, os, sys\nf = {str(folder)!r}\nos.makedirs(f, exist_ok=True)\n"
              f"open(os.path.join(f, {build.crate!r}), 'w').write({PLANTED!r})\n"
              f"os.chmod(os.path.join(f, {build.crate!r}), 0o755)\n"
              f"open(os.path.join(f, 'stamp.json'), 'w').write(sys.argv[1])\n")
    subprocess.run([*NOBODY, sys.executable, "-c", script, json.dumps(builder._stamp(build))],
                   check=True)


def test_a_planted_binary_in_a_world_writable_cache_is_never_taken(
        fake_project, shared: Path, monkeypatch: pytest.MonkeyPatch) -> None:  # noqa: F811
    """XDG_CACHE_HOME=/tmp/shared: another user's binary and stamp under bin/<hash>/<key>
    were installed and run as root, with no cargo call. Now the cache is refused, in one line
    that says what to do, and nothing of it reaches build/bin."""
    project, cargo = fake_project
    monkeypatch.delenv(CACHE_ENV)
    monkeypatch.setenv("XDG_CACHE_HOME", str(shared))
    builder = Builder(project, cargo=str(cargo))
    _plant_as_nobody(builder.cached_path(CPU).parent, builder, CPU)
    result = builder.build("template", CPU)
    assert result.status == "failed" and _calls(cargo) == []
    assert f"{shared} (above the build cache" in result.error
    assert "writable by other users (mode 777, no sticky bit)" in result.error
    assert f"set {CACHE_ENV} to a folder of your own" in result.error
    assert not builder.binary_path(CPU).exists()


@pytest.mark.parametrize("how", ["owned by another user", "writable by others"])
def test_a_folder_in_the_cache_that_is_not_safely_ours_is_not_used(
        fake_project, shared: Path, how: str) -> None:  # noqa: F811
    """The cache itself is ours, but a folder in it is another user's (moved in, or left from
    a time it was open) or anyone's: its entry is not taken, cargo builds, and nothing is
    written into that folder."""
    project, cargo = fake_project
    builder = Builder(project, cargo=str(cargo))
    entry = builder.cached_path(CPU).parent
    entry.parent.mkdir(parents=True, mode=0o700)
    _plant_as_nobody(shared / "entry", builder, CPU)
    os.rename(shared / "entry", entry)
    if how == "writable by others":
        subprocess.run(["chown", "-R", f"{os.getuid()}:{os.getgid()}", str(entry)], check=True)
        entry.chmod(0o777)
    result = builder.build("template", CPU)
    assert result.status == "ok" and not result.fresh and len(_calls(cargo)) == 1
    assert builder.binary_path(CPU).read_text() == "binary built with features="
    assert (entry / "exec-cpu").read_text() == PLANTED  # left as it was, not overwritten


def test_a_link_in_the_cache_is_never_followed(fake_project, tmp_path: Path) -> None:  # noqa: F811
    """bin/<hash>/<key> planted as a link to another folder holding a binary and its stamp:
    neither is taken, and the install does not replace them there."""
    project, cargo = fake_project
    builder = Builder(project, cargo=str(cargo))
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / "exec-cpu").write_text(PLANTED)
    (elsewhere / "stamp.json").write_text(json.dumps(builder._stamp(CPU)))
    entry = builder.cached_path(CPU).parent
    entry.parent.mkdir(parents=True)
    os.symlink(elsewhere, entry)
    result = builder.build("template", CPU)
    assert result.status == "ok" and not result.fresh and len(_calls(cargo)) == 1
    assert (elsewhere / "exec-cpu").read_text() == PLANTED
    assert json.loads((elsewhere / "stamp.json").read_text()) == builder._stamp(CPU)
    assert sorted(p.name for p in elsewhere.iterdir()) == ["exec-cpu", "stamp.json"]


def test_links_at_the_caches_file_names_are_replaced_not_written_through(
        fake_project, tmp_path: Path) -> None:  # noqa: F811
    """The entry's folder is real, but its exec-cpu and stamp.json are links to files
    elsewhere: not read as fresh, and the install puts files of its own in their place."""
    project, cargo = fake_project
    builder = Builder(project, cargo=str(cargo))
    entry = builder.cached_path(CPU).parent
    entry.mkdir(parents=True)
    binary, stamp = tmp_path / "binary", tmp_path / "stamp"
    binary.write_text(PLANTED)
    stamp.write_text(json.dumps(builder._stamp(CPU)))
    os.symlink(binary, entry / "exec-cpu")
    os.symlink(stamp, entry / "stamp.json")
    assert builder.build("template", CPU).fresh is False and len(_calls(cargo)) == 1
    assert binary.read_text() == PLANTED
    assert json.loads(stamp.read_text()) == builder._stamp(CPU)
    assert not (entry / "exec-cpu").is_symlink() and not (entry / "stamp.json").is_symlink()


def test_a_kept_failure_is_never_written_through_a_link(fake_project, tmp_path: Path) -> None:  # noqa: F811
    """An expected-failure build keeps its error in the cache's failed.json: a link planted
    at that name is replaced, and a planted failed.json link is not read."""
    project, cargo = fake_project
    broken = Build.model_construct(crate="exec-amx", features=("broken",), requires=(), env={},
                                   expect_failure=True)
    builder = Builder(project, cargo=str(cargo))
    entry = builder.cached_path(broken).parent
    entry.mkdir(parents=True)
    precious = tmp_path / "precious"
    precious.write_text("keep")
    os.symlink(precious, entry / "failed.json")
    first = builder.build("accelerate", broken)
    assert first.status == "failed" and precious.read_text() == "keep"
    assert not (entry / "failed.json").is_symlink()
    assert json.loads((entry / "failed.json").read_text())["error"] == first.error


@pytest.mark.parametrize("variable, value", [("RUSTFLAGS", "-C target-cpu=native"),
                                             ("CUDARC_CUDA_VERSION", "12080"),
                                             ("CARGO_PROFILE_RELEASE_LTO", "fat")])
def test_the_environment_that_changes_a_binary_is_in_its_key(
        fake_project, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,  # noqa: F811
        variable: str, value: str) -> None:
    """A second clone with other RUSTFLAGS (or CUDA bindings, cargo profile) took the first's
    binary "up to date"; and in one clone, changing them kept the old binary. Both build."""
    project, cargo = fake_project
    assert not Builder(project, cargo=str(cargo)).build("t", CPU).fresh
    monkeypatch.setenv(variable, value)
    clone = tmp_path / "clone"
    shutil.copytree(project / "bench_rust", clone / "bench_rust")
    assert not Builder(clone, cargo=str(cargo)).build("t", CPU).fresh
    assert len(_calls(cargo)) == 2
    # the first clone's build/bin was built without it: not up to date; the cache's binary
    # of this environment (the second clone's) is taken
    first = Builder(project, cargo=str(cargo))
    assert not first.is_fresh(CPU)
    assert first.build("t", CPU).fresh and len(_calls(cargo)) == 2
    stamp = json.loads((project / "build" / "bin" / "exec-cpu" / "stamp.json").read_text())
    assert stamp["built_with"]["variables"][variable] == value
    assert stamp["built_with"]["toolchain"].startswith(("rustc ", "unknown ("))


def test_a_toolchain_change_rebuilds(fake_project, tmp_path: Path,  # noqa: F811
                                     monkeypatch: pytest.MonkeyPatch) -> None:
    project, cargo = fake_project
    Builder(project, cargo=str(cargo)).build("t", CPU)
    rustc = tmp_path / "rustc"
    rustc.write_text("#!/bin/sh\necho 'rustc 9.99.0 (test)'\n")
    rustc.chmod(0o755)
    monkeypatch.setenv("RUSTC", str(rustc))
    builder = Builder(project, cargo=str(cargo))
    assert not builder.build("t", CPU).fresh
    assert builder._stamp(CPU)["built_with"]["toolchain"] == "rustc 9.99.0 (test)"


def test_without_cargo_a_binary_built_elsewhere_is_still_taken(
        fake_project, monkeypatch: pytest.MonkeyPatch) -> None:  # noqa: F811
    """A GPU box without cargo runs binaries built on another machine, whose toolchain and
    RUSTFLAGS it cannot know or rebuild: its build's own part (sources, features, env) decides."""
    project, cargo = fake_project
    Builder(project, cargo=str(cargo)).build("t", CPU)
    monkeypatch.setenv("RUSTFLAGS", "-C target-cpu=native")
    monkeypatch.setenv("RUSTC", "/nonexistent/rustc")
    no_cargo = Builder(project, cargo=None)
    no_cargo.cargo = None
    assert no_cargo.build("t", CPU).fresh


def test_group_write_is_refused_unless_the_group_is_the_users_alone(fake_project) -> None:  # noqa: F811
    """A umask of 002 makes the cache group-writable for the user's own private group: that
    is still the user's alone. A group another user is in (nobody's `nogroup`) is not."""
    project, cargo = fake_project
    builder = Builder(project, cargo=str(cargo))
    assert builder.build("t", CPU).status == "ok"
    entry = builder.cached_path(CPU).parent
    entry.chmod(0o770)  # root's own group: no other member here
    fd = builder._cached_fd(CPU)
    assert fd is not None
    os.close(fd)
    subprocess.run(["chgrp", "nogroup", str(entry)], check=True)
    assert builder._cached_fd(CPU) is None
