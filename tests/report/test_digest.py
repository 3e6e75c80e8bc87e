"""report/digest.py: what the opening reads off the built sections: the warnings typed and
counted (the most serious first), the tables absent, the empty ones that are news,
near-identical findings grouped and what a finding is about."""

from __future__ import annotations

import pandas as pd

from orchestrator.report import digest
from orchestrator.report.findings import Kind
from orchestrator.report.section import Section, Table


def _section() -> Section:
    return Section("1. Methods", "", [
        Table("methods", "Methods", pd.DataFrame(), missing="no accelerator figures"),
        Table("failures", "Runs skipped or failed", pd.DataFrame(),
              missing="every run succeeded")],
        warnings=[Kind.WIDE_SPREAD.says("torch 1"), Kind.IMPOSSIBLE_TIME.says("jax 2"),
                  "a plain note", Kind.WIDE_SPREAD.says("burn 3")])


def test_warnings_are_counted_by_kind_the_most_serious_first() -> None:
    counts = digest.warning_counts([_section()])
    assert [(c.kind, c.count, c.first) for c in counts] == [
        (Kind.IMPOSSIBLE_TIME, 1, "**impossible time**: jax 2"),
        (Kind.WIDE_SPREAD, 2, "**wide spread**: torch 1"),
        (None, 1, "a plain note")]  # a finding of no kind last, as 'other notes'
    assert digest.kind_words(None) == "other notes"


def test_a_table_absent_is_named_once_an_empty_failures_list_is_news() -> None:
    section = _section()
    assert digest.absent([section]) == [("Methods", "no accelerator figures")]
    assert digest.empty_news([section]) == ["Runs skipped or failed: none (every run "
                                            "succeeded)."]
    assert digest.shown(section)  # its findings are something to show
    assert not digest.shown(Section("2. Empty", "", section.tables))


def test_near_identical_findings_from_three_on_are_one_group_at_the_first() -> None:
    three = ["**wide spread**: torch at 1.5×", "a note", "**wide spread**: torch at 2.5×",
             "**wide spread**: torch at 3×"]
    assert digest.grouped(three) == [[three[0], three[2], three[3]], ["a note"]]
    assert digest.grouped(three[:3]) == [[t] for t in three[:3]]  # two alike stay apart


def test_the_subject_is_the_words_after_the_kind_up_to_the_next_colon() -> None:
    assert digest.subject("**wide spread** under load: torch cpu: 3× more") == "torch cpu"
    assert digest.subject("plain words: more") == "plain words"
