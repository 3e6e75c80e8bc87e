"""An A/B of two builds in one sweep, for real: cargo builds both, each variant's runs start
its own binary, in the same rounds, and `compare RESULTS#a RESULTS#b` judges them figure by
figure over their processes. The two builds are burn's template crate, the second with a
cargo environment that cargo's fingerprint ignores: the same code twice (an A/A through two
builds), so that this test needs no second compile of the burn stack on a shared 2-core box;
a variant with other features or RUSTFLAGS goes through the same keys."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from orchestrator.cli import main
from orchestrator.data.store import Store
from orchestrator.experiments.config import Build
from orchestrator.programs.burn.cargo import CACHE_ENV, Builder, build_key
from orchestrator.records import RunDef
from orchestrator.report.compare import verdicts as compare
from orchestrator.report.compare.verdicts import load_side

from ..conftest import PROJECT, USER_BUILD_CACHE, facts_once, write

SIDE_B = {"ORCHESTRATOR_TEST_AB_SIDE": "b"}
BUILDS = {"template": Build(crate="exec-cpu"), "template-b": Build(crate="exec-cpu", env=SIDE_B)}
AB = """\
version: 1
defaults: {shape: [64, 64], reps: 20, timeout_s: 300}
builds:
  template: {crate: exec-cpu}
  template-b: {crate: exec-cpu, env: {ORCHESTRATOR_TEST_AB_SIDE: b}}
experiments:
  ab:
    mode: mm
    processes: 3
    variants:
      a: {}
      b: {builds: {template: template-b}, note: the same crate built again}
    targets:
      - {program: burn, build: template, device: flex}
"""


@pytest.fixture(scope="module")
def swept(tmp_path_factory: pytest.TempPathFactory) -> Path:
    # both builds in the user's build cache first (the sweep's own cache is a test's empty
    # one): what cargo compiled once for the session is found, not compiled again
    builder = Builder(PROJECT, cache=USER_BUILD_CACHE)
    failed = {n: r.error for n, b in BUILDS.items() if (r := builder.build(n, b)).status != "ok"}
    assert not failed, failed
    tmp = tmp_path_factory.mktemp("build-ab")
    # the sweep takes both from that cache (up to date: no cargo compiles in its background):
    # a variant whose build is still compiling would let the other's runs go first, and the
    # rounds this module checks would not be the plan's
    with pytest.MonkeyPatch.context() as env, facts_once():  # facts probed once a session
        env.setenv(CACHE_ENV, str(USER_BUILD_CACHE))
        assert main(["run", str(write(tmp / "ab.yaml", AB)), "--results", str(tmp / "r"),
                     "--quiet"]) == 0
    return tmp / "r"


@pytest.mark.cargo
def test_each_variant_runs_its_own_build_in_the_same_rounds(swept: Path) -> None:
    store = Store(swept)
    with store.reading():
        builds = {b["name"]: b for b in store.query("SELECT name, key, status, binary FROM "
                                                      "builds")}
        runs = [(RunDef.from_definition(json.loads(r["definition_json"])),
                 json.loads(r["argv_json"])) for r in store.query(
                     "SELECT definition_json, argv_json FROM runs ORDER BY started_at")]
    assert {n: (b["key"], b["status"]) for n, b in builds.items()} == {
        n: (build_key(b), "ok") for n, b in BUILDS.items()}
    assert builds["template"]["binary"] != builds["template-b"]["binary"]
    for run, argv in runs:  # each variant's runs start its build's binary
        assert run.build == {"a": "template", "b": "template-b"}[str(run.variant)]
        assert argv[0] == builds[str(run.build)]["binary"], argv
    # each round holds one process of each variant
    assert [sorted(str(r.variant) for r, _ in runs[k:k + 2]) for k in (0, 2, 4)] == [
        ["a", "b"]] * 3


@pytest.mark.cargo
def test_compare_judges_the_two_builds_over_their_processes(swept: Path) -> None:
    c = compare.compare(load_side(f"{swept}#a"), load_side(f"{swept}#b"))
    steady = [r for r in c.rows if ", reps " in r.basis]
    assert steady and not c.only_a and not c.only_b
    # two variants of one sweep, each round one process of each: judged paired by round
    assert {r.basis for r in steady} == {"processes 3/3 paired by round, reps 20/20"}
    assert {r.verdict for r in steady} <= {"same", "inconclusive", "slower", "faster"}
    # the same code on both sides: at a 60% minimum effect (tests/report/compare/test_verdicts.py's
    # bound for this box), nothing may read as changed
    loose = compare.compare(load_side(f"{swept}#a"), load_side(f"{swept}#b"), 0.6)
    assert not {r.verdict for r in loose.rows if ", reps " in r.basis} & {"slower", "faster"}
