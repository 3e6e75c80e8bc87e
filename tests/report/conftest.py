"""Fixtures of the report layer's tests: the real CPU sweeps that compare's A/A and A/B tests
judge (tests/report/compare/test_aa.py and test_verdicts.py), and the A/B `variants:` sweep of
test_variants and history's timeline, each made once per session."""

from __future__ import annotations

from pathlib import Path

import pytest

from orchestrator.cli import main

from ..conftest import facts_once, write

# torch at 6 processes a side (with 3, and once in 10 runs with 4, a real 3.7x change was
# `inconclusive` in one of six figures: t on few degrees of freedom, Holm over six), burn's
# template build at 3 (test_verdicts judges burn at 60% only: EFFECT there)
AA = """\
version: 1
defaults: {shape: [128, 128], reps: 20, timeout_s: 300}
builds:
  template: {crate: exec-cpu}
experiments:
  torch-cpu:
    mode: mm
    threads: [1]
    processes: 6
    targets:
      - {program: torch, device: cpu}
  burn-cpu:
    mode: mm
    threads: [1]
    processes: 3
    targets:
      - {program: burn, build: template, device: flex}
"""
# MKL's conditional numerical reproducibility mode 'COMPATIBLE' keeps MKL off its AVX2 kernels:
# the same matmul of the same inputs, measured 2-3x slower for torch on this box (bench_py
# --device cpu; MKL_ENABLE_INSTRUCTIONS=SSE4_2 changed nothing, ATEN_CPU_CAPABILITY=default
# 15-20%). burn's Flex does not use MKL, so only the torch figures may slow down.
SLOW = AA.replace("      - {program: torch, device: cpu}\n",
                  "      - {program: torch, device: cpu}\n    env: {MKL_CBWR: COMPATIBLE}\n")
SIDES = ("a", "b", "slow")


@pytest.fixture(scope="session")
def cpu_sweeps(tmp_path_factory: pytest.TempPathFactory, burn_builds) -> dict[str, Path]:
    """Three results folders of real CPU runs: `a` and `b` the same file (an A/A), `slow` the
    same with MKL slowed on purpose (an A/B whose answer is known). Their runs interleaved (a,
    b, slow for torch, then for burn) so that the machine's drift between the sides is
    seconds, not a whole sweep. Shared by the A/A bound (test_aa) and compare's real-sweep
    tests (test_verdicts): one set of 27 processes where each made its own. What is judged is
    the programs' figures: torch's and JAX's facts are probed once, not in each of the six
    sweeps (conftest.facts_probed_once)."""
    tmp = tmp_path_factory.mktemp("cpu-sweeps")
    same, slow = write(tmp / "same.yaml", AA), write(tmp / "slow.yaml", SLOW)
    folders = {name: tmp / name for name in SIDES}
    with facts_once():
        for experiment, name in ((e, n) for e in ("torch-cpu", "burn-cpu") for n in SIDES):
            exp = slow if name == "slow" else same
            assert main(["run", str(exp), "--only", experiment, "--results",
                         str(folders[name]), "--quiet"]) == 0
    return folders


# A/B as variants of one sweep (tests/report/test_variants.py says why five processes a variant)
AB = """\
version: 1
defaults: {shape: [128, 128], reps: 20, timeout_s: 300}
experiments:
  torch-cpu:
    mode: mm
    threads: [1]
    processes: 5
    variants:
      a: {}
      slow: {env: {MKL_CBWR: COMPATIBLE}, note: MKL's conditional numerical reproducibility}
    targets:
      - {program: torch, device: cpu}
"""


@pytest.fixture(scope="session")
def swept(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One `variants:` sweep of real torch runs (AB), read by test_variants (its rounds,
    compare, report and export of its parts) and history's timeline (a point per variant):
    one sweep of 10 processes where each made its own."""
    tmp = tmp_path_factory.mktemp("ab")
    exp = write(tmp / "ab.yaml", AB)
    with facts_once():  # judged on torch's figures; its facts probed once a session
        assert main(["run", str(exp), "--results", str(tmp / "r"), "--quiet"]) == 0
    return tmp / "r"
