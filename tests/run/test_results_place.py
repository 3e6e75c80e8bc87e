"""No results folder inside a cache folder a planned run deletes or fills
(orchestrator/run/results_place.py), and no cache removal of a folder holding a store."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from orchestrator.errors import CacheSafetyError, InputError
from orchestrator.experiments.plan import PlannedRun, RunDef
from orchestrator.records import CacheAction, CacheState
from orchestrator.run.cache import check_removable
from orchestrator.run.results_place import caches_touched, refuse_results_in_cache


def _project(root: Path) -> Path:
    rust = root / "bench_rust"
    (rust / "exec-cpu").mkdir(parents=True)
    (rust / "Cargo.toml").write_text("[workspace]\n")
    (rust / "exec-cpu" / "Cargo.toml").write_text("[package]\n")
    return rust


def _burn(action: CacheAction, skip: str | None = None) -> PlannedRun:
    state = CacheState.COLD if action == CacheAction.DELETE else CacheState.WARM
    run = RunDef(experiment="t", program="burn", device="cuda", mode="mm", shape=(8, 8), reps=3,
                 build="cpu", crate="exec-cpu", cache=state, cache_action=action)
    return PlannedRun(run=run, skip_reason=skip)


def test_only_runs_that_touch_the_cache_count(tmp_path: Path) -> None:
    rust = _project(tmp_path)
    cache = (rust / "target" / "environment").resolve()
    planned = [_burn(CacheAction.NONE), _burn(CacheAction.DELETE, skip="no GPU")]
    assert caches_touched(planned, tmp_path) == {}
    touched = caches_touched([*planned, _burn(CacheAction.ENSURE)], tmp_path)
    assert list(touched) == [cache] and touched[cache][0] == "fills"
    assert caches_touched([_burn(CacheAction.DELETE)], tmp_path)[cache][0] == "deletes"


@pytest.mark.parametrize(("where", "refused"), [
    ("bench_rust/target/environment", True), ("bench_rust/target/environment/a/b", True),
    ("bench_rust/target", False), ("bench_rust", False), ("results", False)])
def test_a_results_folder_inside_the_cache_is_refused(tmp_path: Path, where: str,
                                                      refused: bool) -> None:
    _project(tmp_path)
    planned = [_burn(CacheAction.DELETE)]
    if refused:
        with pytest.raises(InputError, match=r"is inside burn's cache folder .* which a "
                                             r"planned run deletes"):
            refuse_results_in_cache(tmp_path / where, planned, tmp_path)
    else:
        refuse_results_in_cache(tmp_path / where, planned, tmp_path)


@pytest.mark.parametrize("mark", ["results.sqlite", ".lock"])
def test_check_removable_never_removes_a_results_store(tmp_path: Path, mark: str) -> None:
    rust = _project(tmp_path)
    cache = rust / "target" / "environment"
    (cache / "deep" / "res").mkdir(parents=True)
    (cache / "deep" / "res" / mark).write_text("pid 12" if mark == ".lock" else "")
    with pytest.raises(CacheSafetyError, match=rf"holds a results store .*{re.escape(mark)}"):
        check_removable(cache, rust)
    (cache / "deep" / "res" / mark).unlink()
    (cache / "deep" / "res" / ".lock").write_text("cubecl's own, not a store's")
    assert check_removable(cache, rust) == cache.resolve()
