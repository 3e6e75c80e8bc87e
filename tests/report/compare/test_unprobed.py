"""A sweep records the own facts of the programs it ran (run/machine.py): compare, the
side-by-side report and history read another program's facts as 'not probed', never as a value
and never as a difference of the machines; a fact neither side probed is not listed."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from orchestrator.report.compare import side_by_side
from orchestrator.report.compare.output import render_markdown
from orchestrator.report.compare.sides import load_side, machine_facts
from orchestrator.report.compare.verdicts import compare

from .. import fake_stores

MACHINE = {"cpu_model": "Test CPU", "cores_usable": 2, "os": "Linux 6.1", "arch": "x86_64"}
# an older sweep, which asked every program's facts; then one of torch's runs only
EVERY = {**MACHINE, "torch": {"version": "2.15.0", "blas": "mkl"}, "burn": "0.22.1",
         "jax": {"version": "0.9.1", "backend": "cpu"}}
TORCH = {**MACHINE, "torch": {"version": "2.15.0", "blas": "mkl"},
         "facts_not_probed": ["burn", "jax"]}


def _side(folder: Path, host: dict[str, object]) -> str:
    rng = np.random.default_rng(7)
    processes = [{"with sync": fake_stores.spread(300e-6, 20, rng)} for _ in range(3)]
    return str(fake_stores.store(folder, processes, host=host))


def test_a_program_one_sweep_did_not_probe_reads_not_probed_and_is_no_difference(
        tmp_path: Path) -> None:
    every = load_side(_side(tmp_path / "every", EVERY))
    torch = load_side(_side(tmp_path / "torch", TORCH))
    facts = {f.what: f for f in machine_facts(every, torch)}
    assert (facts["jax"].a, facts["jax"].b) == ("0.9.1", "not probed")
    assert (facts["burn"].a, facts["burn"].b) == ("0.22.1", "not probed")
    assert not facts["jax"].differs and not facts["burn"].differs
    assert not any(f.differs for f in facts.values() if f.what in ("torch", "torch BLAS"))
    text = render_markdown(compare(every, torch))
    assert "| jax | 0.9.1 | not probed | same |" in text
    assert "| burn | 0.22.1 | not probed | same |" in text

    # neither side probed JAX: not listed at all; burn (always shown) neither
    again = load_side(_side(tmp_path / "again", TORCH))
    both = {f.what for f in machine_facts(torch, again)}
    assert "jax" not in both and "burn" not in both and "torch" in both

    # the side-by-side report's machine line: torch and burn always named, JAX only probed
    line = side_by_side.machine_line("B", torch)
    assert "torch 2.15.0" in line and "burn not probed" in line and "jax" not in line
    assert "jax 0.9.1" in side_by_side.machine_line("A", every)
