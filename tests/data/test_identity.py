"""A figure's identity (data/identity.py): its fields are dataset columns, a spec names one
part of a results folder, and a store's parts (hosts, variants) are found from the store."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from orchestrator import vocabulary
from orchestrator.cli import main
from orchestrator.data import identity, merge
from orchestrator.errors import InputError

from ..conftest import PROJECT

EXAMPLES = PROJECT / "docs" / "results"


def test_every_identity_field_is_a_dataset_column() -> None:
    assert set(identity.FIELDS) <= set(vocabulary.column_keys())
    assert identity.FIELDS[:3] == identity.APART == ("host", "sweep_id", "variant")


def test_a_spec_names_a_folder_a_sweep_or_host_and_a_variant(tmp_path: Path) -> None:
    assert identity.Spec.parse("r@h200#c") == identity.Spec(Path("r"), "h200", "c")
    assert identity.Spec.parse("r#c") == identity.Spec(Path("r"), None, "c")
    assert identity.Spec.parse("r@20261201-1") == identity.Spec(Path("r"), "20261201-1")
    odd = tmp_path / "a@b#c"
    odd.mkdir()
    assert identity.Spec.parse(str(odd)) == identity.Spec(odd)  # an existing path is a path
    for bad in ("a@b", "a#b", "a/b", ""):
        with pytest.raises(InputError, match="hold none of"):
            identity.check_name(bad, "host name")


def test_variant_labels_are_tagged_only_where_variants_are_several() -> None:
    one = pd.DataFrame({"label": ["cuda", "cuda"], "variant": ["", ""]})
    assert list(identity.tag_variants(one)) == ["cuda", "cuda"]
    two = pd.DataFrame({"label": ["cuda", "cuda", "cpu"], "variant": ["a", "c", ""]})
    assert list(identity.tag_variants(two)) == ["cuda #a", "cuda #c", "cpu"]


def test_the_parts_of_a_merged_store_are_its_hosts(tmp_path: Path) -> None:
    out = tmp_path / "m"
    merge.merge(out, [merge.Source(EXAMPLES / "h200-2026-12-01", "new"),
                      merge.Source(EXAMPLES / "h200-2026-11-30", "old")])
    assert identity.parts(str(out)) == [f"{out}@old", f"{out}@new"]
    assert identity.parts(f"{out}@new") == [f"{out}@new"]
    assert identity.parts(str(out), "old") == [f"{out}@old"]
    log = EXAMPLES / "h200-2026-11-30" / "other_folder.log"
    assert identity.parts(str(log)) == [str(log)]  # a log is itself
    with pytest.raises(InputError, match="no such sweep"):
        identity.parts(f"{out}@nobody")


def test_a_report_of_the_latest_of_several_sweeps_says_so(tmp_path: Path) -> None:
    # one machine's two sweeps under one name (given twice: the user says they are one)
    out = tmp_path / "m"
    assert main(["merge", str(out), f"vm={EXAMPLES / 'h200-2026-11-30'}",
                 f"vm={EXAMPLES / 'h200-2026-12-01'}"]) == 0
    assert main(["report", str(out), "--out", str(tmp_path / "rep")]) == 0
    text = (tmp_path / "rep" / "report.md").read_text(encoding="utf-8")
    assert text.splitlines()[2].startswith("**Note: this report shows sweep ")
    assert "the latest of the 2 sweeps in" in text.splitlines()[2]
