"""A fourth framework is its own folder and one registry line: nothing else names it.

A stand-in program ('quill') is written as a package of its own in a temporary folder (its
Program: name, title, devices, its header and method lines), imported and put in a
registry of the test's own with one line (`default_registry().with_programs(...)`, made
active). A captured log holds the reference's real H200 section
(tests/data/h200/torch_cuda_fp32.log) and quill's section of the same lines; the report's
ratios, clocks' kernel ratios, compare's machine facts and rows, and the side-by-side
machine line then show it by its title, from the registry alone.
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from orchestrator import programs
from orchestrator.data import dataset
from orchestrator.data.parse import parse_text
from orchestrator.programs import Program
from orchestrator.report import clocks, ratios, tables
from orchestrator.report.compare import side_by_side
from orchestrator.report.compare.output import render_markdown
from orchestrator.report.compare.sides import load_side, machine_facts
from orchestrator.report.compare.verdicts import compare
from orchestrator.report.sample_sets import sample_sets

from ..conftest import PROJECT

QUILL = '''
"""quill: a stand-in framework's whole folder (its Program)."""
import re
from typing import ClassVar

from orchestrator.records import Header
from orchestrator.programs.base import Program


class Quill(Program):
    name = "quill"
    title = "Quill"
    devices = ("cpu", "cuda")
    device_needs: ClassVar[dict[str, tuple[str, ...]]] = {"cpu": (), "cuda": ("cuda",)}
    methods: ClassVar[dict[str, str]] = {"kernel time (cupti)": "kernel_time"}

    def command(self, run, paths):
        return [paths.python, "quill.py"]

    def parse_header(self, line, line_no):
        if (found := re.fullmatch(r"quill precision (fp32|tf32)", line)) is not None:
            return Header("quill_precision", None, None, line_no, found.group(1))
        if (found := re.fullmatch(r"quill ([0-9][^ ,]*)", line)) is not None:
            return Header("quill", found.group(1), None, line_no)
        return None
'''
TORCH_LOG = PROJECT / "tests" / "data" / "h200" / "torch_cuda_fp32.log"
SHARED = ("no sync", "with sync", "kernel time (cupti)")  # lines every program may print


@pytest.fixture
def quill(tmp_path: Path) -> Iterator[Program]:
    folder = tmp_path / "frameworks" / "quill"
    folder.mkdir(parents=True)
    (folder / "__init__.py").write_text(QUILL, encoding="utf-8")
    sys.path.insert(0, str(tmp_path / "frameworks"))
    try:
        program = importlib.import_module("quill").Quill()
        with programs.use(programs.default_registry().with_programs(program)):  # the one line
            yield program
    finally:
        sys.path.remove(str(tmp_path / "frameworks"))
        sys.modules.pop("quill", None)


def _log(tmp_path: Path) -> Path:
    """The reference's captured section, then quill's: its headers and the shared lines."""
    torch = TORCH_LOG.read_text(encoding="utf-8")
    mine = [line for line in torch.splitlines()
            if any(f"matmul {words}" in line for words in SHARED)]
    path = tmp_path / "three.log"
    path.write_text(torch + "quill 1.0.0\nquill precision fp32\n" + "\n".join(mine) + "\n",
                    encoding="utf-8")
    return path


def test_contract_framework_in_ratios_clocks_compare_and_machine_facts(
        tmp_path: Path, quill: Program) -> None:
    log = _log(tmp_path)
    data = dataset.from_parse(parse_text(log.read_text(encoding="utf-8")), str(log))
    fig = tables.prepare(data)  # the report's rows, as writer renders them
    assert {"torch", "quill"} <= set(fig["framework"])
    assert quill in programs.candidates()

    pairs = ratios.pairs(fig, sample_sets(data.samples))
    table = ratios.ratio_table(pairs)
    assert table.title == "Quill / PyTorch: time ratios (above 1: Quill is slower)"
    quill_rows = table.frame[table.frame["Quill"] == "Quill cuda"]
    # the ratio methods it printed: its kernel time (the headline) and with sync
    assert set(quill_rows["method"]) == {"kernel time (CUPTI / CUPTI)", "with sync"}
    assert set(quill_rows["PyTorch"]) == {"PyTorch cuda"}
    assert set(quill_rows["min ratio"]) == {"1.00×"}  # the same lines: equal times

    kernel = clocks.kernel_ratio_table(clocks.select(fig), "quill")
    assert kernel.name == "kernel_ratio_quill"
    assert kernel.title == "Quill / PyTorch on kernel time"
    assert list(kernel.frame["Quill kernel time"]) == ["55.360µs (cupti)"]

    side = load_side(str(log))
    facts = {f.what: f.a for f in machine_facts(side, side)}
    assert facts["quill"] == "1.0.0" and facts["torch"] == "2.11.0+cu130"
    assert "quill 1.0.0" in side_by_side.machine_line("A", side)
    assert "quill cuda with sync" in render_markdown(compare(side, side))
