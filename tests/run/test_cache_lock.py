"""One orchestrator at a time on a burn cache folder (run/cache_lock): a second holder waits,
then fails naming the first; the lock file is never followed through a symlink."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from orchestrator.errors import CacheSafetyError
from orchestrator.run import cache_lock

from ..conftest import PROJECT

HOLDER = """
import sys
from pathlib import Path
from orchestrator.run import cache_lock
with cache_lock.held(Path(sys.argv[1]), Path("/results/a"), root=Path(sys.argv[2])):
    print("held", flush=True)
    sys.stdin.read()  # until the test closes it
"""


def test_a_second_orchestrator_fails_naming_the_holder(tmp_path: Path,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    cache = tmp_path / "bench_rust" / "target" / "environment"
    holder = subprocess.Popen([sys.executable, "-c", HOLDER, str(cache), str(tmp_path)],
                              cwd=PROJECT, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                              text=True)
    try:
        assert holder.stdout is not None and holder.stdout.readline() == "held\n"
        monkeypatch.setattr(cache_lock, "WAIT_S", 0.2)
        with pytest.raises(CacheSafetyError) as info, \
                cache_lock.held(cache, tmp_path / "b", root=tmp_path, owner="burn"):
            pass
        assert str(info.value).startswith(
            f"burn's cache {cache} is in use by another orchestrator (pid {holder.pid}, results "
            "/results/a, cache ")
    finally:
        holder.communicate("")
    with cache_lock.held(cache, tmp_path / "b", root=tmp_path):  # free again
        assert cache_lock.lock_path(cache, tmp_path).read_text().startswith("pid ")


def test_two_paths_to_one_cache_share_one_lock(tmp_path: Path) -> None:
    real = tmp_path / "real" / "environment"
    real.mkdir(parents=True)
    (tmp_path / "link").symlink_to(tmp_path / "real")
    assert cache_lock.lock_path(real, tmp_path) == \
        cache_lock.lock_path(tmp_path / "link" / "environment", tmp_path)


def test_a_symlinked_lock_file_is_refused_and_its_target_untouched(tmp_path: Path) -> None:
    cache = tmp_path / "environment"
    lock = cache_lock.lock_path(cache, tmp_path)
    lock.parent.mkdir(mode=0o700)
    victim = tmp_path / "victim.txt"
    victim.write_text("someone else's")
    lock.symlink_to(victim)
    with pytest.raises(CacheSafetyError, match="cannot lock burn's cache"), \
            cache_lock.held(cache, None, root=tmp_path, owner="burn"):
        pass
    assert victim.read_text() == "someone else's"
