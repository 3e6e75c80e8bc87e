"""JAX's cache folder is the user's: what it holds is read bounded and never through a link,
and a folder that is a link or cannot be written proves nothing (programs/jax/cache.py); the
rule's variables are checked where the experiments file is."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from orchestrator.errors import ConfigError
from orchestrator.experiments.config import load
from orchestrator.programs.jax import cache

from ..conftest import PROJECT, needs_jax
from .test_jax import _run_program

FILE = """version: 1
defaults: {{shape: [8, 8], reps: 3}}
experiments:
  jx:
    mode: mm
    env: {{{name}: {value}}}
    targets:
      - {{program: jax, device: cpu}}
"""


@pytest.mark.parametrize(("name", "value", "said"), [
    (cache.MIN_COMPILE_VAR, '"fast"', "expected a number of seconds (e.g. 0 or 1.5), got 'fast'"),
    (cache.MIN_COMPILE_VAR, '"nan"', "expected a finite number of seconds, got 'nan'"),
    (cache.MIN_COMPILE_VAR, '"inf"', "expected a finite number of seconds, got 'inf'"),
    (cache.MIN_SIZE_VAR, '"1.5"', "expected a whole number, got '1.5'"),
    ("JAX_COMPILATION_CACHE_MAX_SIZE", '"big"', "expected a whole number, got 'big'"),
    ("JAX_ENABLE_COMPILATION_CACHE", '"maybe"', "expected true or false (or 1, 0), got 'maybe'")])
def test_a_cache_variable_the_orchestrator_reads_is_checked_with_the_file(
        tmp_path: Path, name: str, value: str, said: str) -> None:
    """`"fast"` stopped the sweep with `could not convert string to float`, `"nan"` stored
    NaN: now the file is refused in one line naming the variable, before anything runs."""
    path = tmp_path / "exp.yaml"
    path.write_text(FILE.format(name=name, value=value))
    with pytest.raises(ConfigError) as info:
        load(path)
    assert str(info.value) == f"{path}:6 at experiments.jx.env: {name}: {said}"


def test_good_values_pass_and_give_the_rule(tmp_path: Path) -> None:
    path = tmp_path / "exp.yaml"
    for value in ('"0"', '"1.5"', '"-1"'):
        path.write_text(FILE.format(name=cache.MIN_COMPILE_VAR, value=value))
        load(path)
    env = {cache.MIN_COMPILE_VAR: "0.5", cache.MIN_SIZE_VAR: "-1"}
    assert cache.rule(env) == {"min_compile_time_s": 0.5, "min_entry_size_bytes": -1}


def test_a_huge_entry_is_not_read_and_links_and_fifos_are_skipped(tmp_path: Path) -> None:
    """A 3 GB file was read whole twice a run (MemoryError under a 2.5 GB cap); a link
    inside was followed and hashed. Here under a 1 GiB address-space cap, in a process of
    its own: the look ends, the big entry named by size, the link and the FIFO left out."""
    folder = tmp_path / "jax-cache"
    folder.mkdir()
    (folder / "jit_matmul-1-cache").write_bytes(b"compiled")
    with open(folder / "jit_big-2-cache", "wb") as big:
        big.truncate(3 * 10**9)  # sparse: no disk used
    secret = tmp_path / "secret"
    secret.write_text("not the cache's")
    os.symlink(secret, folder / "jit_link-3-cache")
    os.mkfifo(folder / "jit_fifo-4-cache")
    script = ("import json, resource, sys; from pathlib import Path\n"
              "resource.setrlimit(resource.RLIMIT_AS, (1 << 30, 1 << 30))\n"
              "from orchestrator.programs.jax import cache\n"
              "print(json.dumps(cache.look(Path(sys.argv[1]), {})))\n")
    done = subprocess.run([sys.executable, "-c", script, str(folder)], cwd=PROJECT,
                          capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stderr
    seen = json.loads(done.stdout)
    assert sorted(seen["entries"]) == ["jit_big-2-cache", "jit_matmul-1-cache"]
    assert seen["entries"]["jit_big-2-cache"].startswith("size 3000000000, mtime ")
    assert seen["matmul"] == ["jit_matmul-1-cache"] and seen["writable"] is True


def test_a_linked_cache_folder_proves_nothing(tmp_path: Path) -> None:
    users = tmp_path / "users-folder"
    users.mkdir()
    folder = tmp_path / "jax-cache"
    os.symlink(users, folder)
    before = cache.look(folder, {})
    (users / "jit_matmul-1-cache").write_bytes(b"compiled")  # JAX writes through the link
    after = cache.look(folder, {})
    assert after["entries"] == {} and after["link"] == str(users)
    said = f"not proven: {folder} is a link to {users} (JAX reads and writes there; its " \
           "entries are not looked at)"
    assert cache.cold_proof(before, after) == said
    assert cache.warm_proof(after, after) == said


def test_a_read_only_cache_folder_is_not_cold_nothing_written(tmp_path: Path) -> None:
    """A read-only bind mount (root writes anywhere else): JAX could not write, so "cold,
    nothing written (its compile took less)" would be a wrong reason."""
    if shutil.which("unshare") is None or subprocess.run(
            ["unshare", "-rm", "true"], capture_output=True, check=False).returncode != 0:
        pytest.skip("needs unshare -rm (a private mount namespace) for a read-only bind mount")
    folder = tmp_path / "jax-cache"
    folder.mkdir()
    script = ("import json, sys; from pathlib import Path\n"
              "from orchestrator.programs.jax import cache\n"
              "seen = cache.look(Path(sys.argv[1]), {})\n"
              "print(cache.cold_proof(seen, seen))\n")
    done = subprocess.run(["unshare", "-rm", "sh", "-c",
                           f'mount --bind "{folder}" "{folder}" && mount -o remount,bind,ro '
                           f'"{folder}" && exec "$0" "$@"', sys.executable, "-c", script,
                           str(folder)], cwd=PROJECT, capture_output=True, text=True,
                          timeout=120, check=False)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == (f"cold, but nothing could be written: {folder} is not "
                                   "writable (JAX kept no entry)")


@pytest.mark.slow  # the real JAX program, run for real
@needs_jax
def test_real_jax_over_a_linked_folder_is_not_proven(tmp_path: Path) -> None:
    """The real program given a cache folder that links to the user's own: it writes there,
    and the proof says the folder is a link, not "cold, nothing written"."""
    users = tmp_path / "users-folder"
    users.mkdir()
    folder = tmp_path / "jax-cache"
    os.symlink(users, folder)
    env = {cache.MIN_COMPILE_VAR: "0"}
    before = cache.look(folder, env)
    _run_program(folder, "0")
    assert any(p.name.startswith(cache.MATMUL_PREFIX) for p in users.iterdir())
    assert cache.cold_proof(before, cache.look(folder, env)).startswith("not proven: ")
