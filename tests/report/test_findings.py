"""Findings are typed (report/findings.py): each warning with a bold lead is a `Finding` of one
`Kind`, rendered to the text it always had; no report module spells a lead of its own."""

from __future__ import annotations

import ast
import pickle
import re

from orchestrator.report import findings, tables
from orchestrator.report.checks import Thresholds
from orchestrator.report.findings import Finding, Kind
from orchestrator.report.sample_sets import sample_sets
from orchestrator.report.sections import build_sections

from ..conftest import PROJECT
from .test_writer import chapter_dataset

LEAD = re.compile(r"^\*\*([^*]+?)(?: `[^`]*`)?\*\*")


def test_every_bold_finding_of_a_report_is_typed() -> None:
    data = chapter_dataset()
    fig = tables.prepare(data)
    built = build_sections(data, fig, sample_sets(data.samples), Thresholds().for_host(data.host))
    leads = [w for s in built for w in s.warnings if LEAD.match(w)]
    assert leads, "the chapter's log raises findings"
    for warning in leads:
        assert isinstance(warning, Finding), warning
        assert LEAD.match(warning).group(1) == warning.kind.words  # type: ignore[union-attr]


def test_a_finding_renders_as_before_and_keeps_its_kind() -> None:
    plain = Kind.UNDER_LOAD.says("torch cpu ran at a load of 3")
    assert plain == "**under load**: torch cpu ran at a load of 3" and plain.kind is Kind.UNDER_LOAD
    named = Kind.CPU_GOVERNOR.says("(cpu): not `performance`", named=" `powersave`", sep=" ")
    assert named == "**CPU governor `powersave`** (cpu): not `performance`"
    assert Kind.QUEUED_PROOF_FAILED.says("x", where=" in methods") == (
        "**queued proof failed** in methods: x")
    again = pickle.loads(pickle.dumps(plain))
    assert again == plain and again.kind is Kind.UNDER_LOAD
    assert len({k.words for k in Kind}) == len(Kind)


def test_no_report_module_spells_a_finding_lead() -> None:
    """A bold `**words**:` at the start of a string literal is a Kind's job."""
    spelled = []
    for path in sorted((PROJECT / "orchestrator" / "report").glob("*.py")):
        if path.name == "findings.py":
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if (isinstance(node, ast.Constant) and isinstance(node.value, str)
                    and re.match(r"\*\*[A-Za-z][^*]*\*\*:", node.value)):
                spelled.append(f"{path.name}:{node.lineno}: {node.value[:40]}")
    assert not spelled, spelled
    assert findings.Kind.FIRST_CALL.words == "first call"
