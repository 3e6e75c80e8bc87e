"""The sweeps of a history: every store format through its migrations, time order, what
changed between two sweeps (compare's facts and the sweep's own), the machine's state left
out; bad input in one line."""

from __future__ import annotations

from pathlib import Path

import pytest

from orchestrator.cli import main
from orchestrator.errors import InputError
from orchestrator.report.history import timeline
from orchestrator.report.history.course import History

from .conftest import H200


def test_the_h200_stores_of_three_formats_are_ordered_by_time(h200_history: History) -> None:
    sweeps = h200_history.sweeps
    assert [s.spec.split("@")[0] for s in sweeps] == [str(p) for p in H200]
    assert [s.started_at for s in sweeps] == sorted(s.started_at for s in sweeps)
    assert {s.host for s in sweeps} == {"vm"}
    assert len({s.commit for s in sweeps if s.commit}) == 3  # the first store recorded none


def test_each_step_names_what_changed_and_never_the_machine_state(
        h200_history: History) -> None:
    changed = {k: {c.what: c for c in v} for k, v in h200_history.changes.items()}
    first = changed[(0, 1)]
    assert first["project commit"].before == "not recorded"
    assert first["project commit"].after.startswith("2a8ea83d6f")
    assert "experiments file (sha256)" in first
    assert changed[(2, 3)]["experiment env"].before == \
        "JAX_PERSISTENT_CACHE_MIN_COMPILE_TIME_SECS=0"
    # the A/A pair: the same commit and file, another VM kernel only
    assert set(changed[(3, 4)]) == {"OS"}
    every = {what for facts in changed.values() for what in facts}
    assert not every & timeline.STATE_FACTS


def test_last_keeps_the_latest_sweeps() -> None:
    sweeps = timeline.load([str(p) for p in H200], last=2)
    assert [s.spec.split("@")[0] for s in sweeps] == [str(p) for p in H200[-2:]]


def test_a_sweep_named_twice_is_one_point() -> None:
    one = str(H200[-1])
    sweeps = timeline.load([one, one, f"{one}@20261203-204310-c8d87f"])
    assert len(sweeps) == 1


@pytest.mark.parametrize(("args", "said"), [
    (["no/such/folder"], "no such results folder"),
    ([f"{H200[0]}@nope"], "no sweep 'nope'"),
    ([str(H200[0].parent)], "holds no results store"),
])
def test_bad_input_is_one_line(args: list[str], said: str) -> None:
    with pytest.raises(InputError, match=said):
        timeline.load(args)


def test_last_below_two_is_refused() -> None:
    with pytest.raises(InputError, match="--last must be 2 or more"):
        timeline.load([str(H200[0])], last=1)


def test_a_merged_store_keeps_each_sweeps_host(tmp_path: Path) -> None:
    merged = tmp_path / "merged"
    assert main(["merge", str(merged), f"card-a={H200[3]}", f"card-b={H200[4]}"]) == 0
    sweeps = timeline.load([str(merged)])
    assert [s.host for s in sweeps] == ["card-a", "card-b"]
    said = [str(c) for c in timeline.changes(*sweeps)]
    assert "host: card-a → card-b" in said


@pytest.mark.slow
@pytest.mark.torch
def test_a_sweep_of_variants_is_a_point_per_variant(swept: Path) -> None:
    """Real runs (test_variants' sweep, tests/report/conftest.py: torch cpu, 5 processes a
    variant): one sweep, two points of the same time, each variant's runs only, the step
    naming the variant and its environment."""
    sweeps = timeline.load([str(swept)])
    assert [s.spec.rsplit("#", 1)[1] for s in sweeps] == ["a", "slow"]
    assert sweeps[0].started_at == sweeps[1].started_at
    for s in sweeps:
        assert set(s.side.data.figures["variant"]) == {s.spec.rsplit("#", 1)[1]}
    said = [str(c) for c in timeline.changes(*sweeps)]
    assert "variant: a → slow" in said and "experiment env: none → MKL_CBWR=COMPATIBLE" in said
