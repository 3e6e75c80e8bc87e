"""Interleaved, seeded order (spec/order.py): rounds of processes, cache series whole."""

from __future__ import annotations

from pathlib import Path

from orchestrator.experiments import config
from orchestrator.experiments.plan import expand
from orchestrator.records import CacheState

from ..conftest import PROJECT, write
from .test_plan import NVIDIA

FILE = """\
version: 1
defaults: {reps: 5, order: {interleave: %s, seed: %d}}
builds:
  cuda: {crate: exec-gpu, features: [cuda], requires: [cuda]}
experiments:
  mixed:
    mode: mm
    processes: 3
    threads: [1, 2]
    cache: [cold, warm]
    repeat: 2
    profile: [ncu]
    targets:
      - {program: torch, device: cpu}
      - {program: torch, device: cuda}
      - {program: burn, build: cuda, device: cuda}
"""


def _order(tmp_path: Path, interleave: bool, seed: int) -> list:
    path = write(tmp_path / f"e{interleave}{seed}.yaml", FILE % (str(interleave).lower(), seed))
    return expand(config.load(path), {**NVIDIA, "ncu": None}, 2)


def test_the_same_seed_gives_the_same_order_and_every_run_once(tmp_path: Path) -> None:
    plain = _order(tmp_path, False, 0)
    first, again = _order(tmp_path, True, 7), _order(tmp_path, True, 7)
    other = _order(tmp_path, True, 8)
    ids = [p.run.run_id for p in first]
    assert ids == [p.run.run_id for p in again]  # a resume replays this order
    assert ids != [p.run.run_id for p in other]
    assert sorted(ids) == sorted(p.run.run_id for p in plain)  # the same runs, reordered
    assert ids != [p.run.run_id for p in plain]


def test_processes_run_in_rounds_and_cache_series_stay_whole(tmp_path: Path) -> None:
    runs = _order(tmp_path, True, 3)
    # torch (no cache): each round holds every series' k-th process, so process numbers of
    # the uncached runs never go down by more than a round's reset
    free = [p.run for p in runs if p.run.cache == CacheState.NONE and p.run.profile is None]
    rounds = [r.process for r in free]
    assert rounds == sorted(rounds)  # round 1 (all series), then round 2, then 3
    assert len(free) == 4 * 3  # torch cpu and cuda at 1 and 2 threads: 3 processes each
    # a profile run is right after its measured run
    for i, p in enumerate(runs):
        if p.run.profile is not None:
            assert runs[i - 1].run.run_id == p.run.profile_of
    # a burn cache series (cold: 2 repeats x 3 processes; warm: priming, then warm) is whole:
    # no other run comes between its first and its last process
    spans: dict[tuple[int | None, str], list[int]] = {}
    for i, p in enumerate(runs):
        if p.run.program == "burn" and p.run.profile is None:
            kind = "cold" if p.cold_series else "warm"
            spans.setdefault((p.run.threads, kind), []).append(i)
    assert set(spans) == {(t, k) for t in (1, 2) for k in ("cold", "warm")}
    for positions in spans.values():
        block = [p for p in runs[positions[0]:positions[-1] + 1] if p.run.profile is None]
        assert len(block) == len(positions), [(p.run.program, p.run.cache) for p in block]
    cold = [runs[i].run for i in spans[(1, "cold")]]
    assert [(r.repeat, r.process) for r in cold] == [(k, n) for k in (1, 2) for n in (1, 2, 3)]


def test_interleaving_is_the_default_and_keeps_the_chapters_constraints() -> None:
    """The default is interleaved, seed 0 (the store records it: sweep_starts
    .seed, the dataset's `seed`). The chapter's file plans the same runs as in file order, and
    every cold and warm cache series is still one block, priming first."""
    cfg = config.load(PROJECT / "experiments.yaml")
    assert (cfg.defaults.order.interleave, cfg.defaults.order.seed) == (True, 0)
    caps = {**NVIDIA, "ncu": None}
    runs = expand(cfg, caps, 8)
    plain = expand(cfg.model_copy(update={"defaults": cfg.defaults.model_copy(
        update={"order": config.Order(interleave=False)})}), caps, 8)
    assert sorted(p.run.run_id for p in runs) == sorted(p.run.run_id for p in plain)
    assert [p.run.run_id for p in runs] != [p.run.run_id for p in plain]
    for i, p in enumerate(runs):  # a cold series' later processes follow its first directly
        if p.cold_series is not None and p.run.process > 1 and p.run.profile is None:
            before = [q for q in runs[:i] if q.run.profile is None][-1]
            assert before.cold_series == p.cold_series, (p.run.describe(), before.run.describe())
