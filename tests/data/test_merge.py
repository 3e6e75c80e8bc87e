"""merge: stores of several hosts into one, keyed by host; idempotent; every machine fact and
row kept; an older store (format 1, 3) merged through its migration; collisions refused."""

from __future__ import annotations

import hashlib
import shutil
import sqlite3
from pathlib import Path

import pytest

from orchestrator.cli import main
from orchestrator.data import dataset, merge
from orchestrator.errors import InputError

from ..conftest import PROJECT

EXAMPLES = PROJECT / "docs" / "results"


def _rows(store: Path, table: str) -> list[tuple[object, ...]]:
    with sqlite3.connect(store) as db:
        cols = [r[1] for r in db.execute(f"PRAGMA table_info({table})") if r[1] != "host"]
        return sorted(db.execute(f"SELECT {', '.join(cols)} FROM {table}").fetchall(), key=repr)


def test_two_older_stores_merge_keeping_every_row_and_reading_by_host(tmp_path: Path) -> None:
    before = {n: hashlib.sha256((EXAMPLES / n / "results.sqlite").read_bytes()).hexdigest()
              for n in ("h200-2026-12-01", "h200-2026-11-30")}
    out = tmp_path / "merged"
    done = merge.merge(out, [merge.Source(EXAMPLES / "h200-2026-12-01", "gpu-new"),
                             merge.Source(EXAMPLES / "h200-2026-11-30", "gpu-old")])
    assert [h for d in done for h, _s, _n in d.sweeps] == ["gpu-new", "gpu-old"]
    assert merge.hosts_of(out) == ["gpu-old", "gpu-new"]  # in the order they ran
    for name, digest in before.items():  # read through a migrated copy: unchanged
        assert hashlib.sha256((EXAMPLES / name / "results.sqlite").read_bytes()).hexdigest() \
            == digest
    for table in ("runs", "figures", "samples"):
        merged = _rows(out / "results.sqlite", table)
        assert len(merged) == sum(len(_rows(EXAMPLES / n / "results.sqlite", table))
                                  for n in before) > 0
    new = dataset.load(out, "gpu-new")
    old = dataset.load(EXAMPLES / "h200-2026-12-01")
    assert new.figures.equals(old.figures.assign(host="gpu-new"))
    assert new.host == dataset.load(EXAMPLES / "h200-2026-12-01").host  # every machine fact


def test_merging_again_changes_nothing(tmp_path: Path) -> None:
    out = tmp_path / "merged"
    sources = ["a=" + str(EXAMPLES / "h200-2026-12-01"), "b=" + str(EXAMPLES / "h200-2026-11-30")]
    snapshots = []
    for _ in range(2):
        assert main(["merge", str(out), *sources]) == 0
        snapshots.append({t: _rows(out / "results.sqlite", t) for t in merge.TABLES})
    assert snapshots[0] == snapshots[1]


def test_a_host_name_defaults_to_the_machines_hostname(tmp_path: Path) -> None:
    out = tmp_path / "merged"
    merge.merge(out, [merge.Source(EXAMPLES / "h200-2026-12-01")])
    (host,) = merge.hosts_of(out)
    assert host == dataset.load(EXAMPLES / "h200-2026-12-01").host["hostname"]


def test_the_same_sweep_from_two_hosts_is_refused(tmp_path: Path) -> None:
    out = tmp_path / "merged"
    copy = tmp_path / "copy"
    copy.mkdir()
    shutil.copy(EXAMPLES / "h200-2026-12-01" / "results.sqlite", copy / "results.sqlite")
    merge.merge(out, [merge.Source(EXAMPLES / "h200-2026-12-01", "one")])
    with pytest.raises(InputError, match=r"is already in .* from host one"):
        merge.merge(out, [merge.Source(copy, "two")])
    with pytest.raises(InputError, match="both the output and a source"):
        merge.merge(out, [merge.Source(out)])


def _digest(folder: Path) -> str:
    return hashlib.sha256((folder / "results.sqlite").read_bytes()).hexdigest()


def test_two_machines_with_one_hostname_are_refused_until_named(tmp_path: Path) -> None:
    # two leased H200 VMs, both 'vm' (their memory differs): one name would pool them
    old, new = EXAMPLES / "h200-2026-11-30", EXAMPLES / "h200-2026-12-01"
    out = tmp_path / "merged"
    with pytest.raises(InputError, match=r"both ran on a host named 'vm'; name each machine"
                                         r".*nothing merged"):
        merge.merge(out, [merge.Source(old), merge.Source(new)])
    assert not (out / "results.sqlite").exists() or merge.hosts_of(out) == []
    assert main(["merge", str(out), str(old)]) == 0  # one machine named by its facts
    with pytest.raises(InputError, match="the output's sweeps both ran on a host named 'vm'"):
        merge.merge(out, [merge.Source(new)])
    assert main(["merge", str(out), str(old)]) == 0  # the same machine again: fine
    merge.merge(out, [merge.Source(new, "vm2")])  # named: two hosts
    assert merge.hosts_of(out) == ["vm", "vm2"]


def test_the_output_linked_to_a_source_store_is_refused_and_the_source_kept(
        tmp_path: Path) -> None:
    # O/results.sqlite a link to A's store; folders differ, the file is one
    source = tmp_path / "a"
    source.mkdir()
    shutil.copy(EXAMPLES / "h200-2026-12-01" / "results.sqlite", source / "results.sqlite")
    before = _digest(source)
    out = tmp_path / "o"
    out.mkdir()
    (out / "results.sqlite").symlink_to(source / "results.sqlite")
    assert main(["merge", str(out), f"x={source}"]) == 2
    with pytest.raises(InputError, match="both the output and a source"):
        merge.merge(out, [merge.Source(source, "x")])
    assert _digest(source) == before  # not migrated, no host written


def test_a_name_given_wins_and_a_name_a_spec_cannot_say_is_refused(tmp_path: Path) -> None:
    # NAME= over a name an earlier merge recorded, as docs/hosts.md says
    first, second = tmp_path / "first", tmp_path / "second"
    merge.merge(first, [merge.Source(EXAMPLES / "h200-2026-12-01", "box")])
    assert main(["merge", str(second), f"h200={first}"]) == 0
    assert merge.hosts_of(second) == ["h200"]
    for bad in ("a@b", "a#b", ""):
        with pytest.raises(InputError, match="hold none of '@' '#' '/'"):
            merge.Source.parse(f"{bad}={first}")
    assert main(["merge", str(tmp_path / "m"), f"h@x={first}"]) == 2
    assert not (tmp_path / "m" / "results.sqlite").exists()


def test_one_store_under_two_names_is_refused_with_nothing_merged(tmp_path: Path) -> None:
    # `merge m a=A b=A` left `a` merged; now nothing is
    source = EXAMPLES / "h200-2026-12-01"
    out = tmp_path / "m"
    with pytest.raises(InputError, match=r"is also given as host a .*nothing merged"):
        merge.merge(out, [merge.Source(source, "a"), merge.Source(source, "b")])
    assert merge.hosts_of(out) == []


def test_export_of_a_merged_store_writes_every_hosts_rows(tmp_path: Path) -> None:
    # before: `export OUT` of a two-host merge wrote the latest host's rows alone
    out = tmp_path / "merged"
    assert main(["merge", str(out), f"new={EXAMPLES / 'h200-2026-12-01'}",
                 f"old={EXAMPLES / 'h200-2026-11-30'}"]) == 0
    each = {h: dataset.load(out, h).figures for h in ("new", "old")}
    assert main(["export", str(out), "--csv", str(tmp_path / "all.csv")]) == 0
    import pandas as pd

    rows = pd.read_csv(tmp_path / "all.csv", low_memory=False)
    assert len(rows) == sum(len(f) for f in each.values()) > 0
    assert sorted(rows["host"].unique()) == ["new", "old"]
    assert {h: int((rows["host"] == h).sum()) for h in each} == {h: len(f)
                                                                 for h, f in each.items()}
    assert rows.groupby("host")["sweep_id"].nunique().to_dict() == {"new": 1, "old": 1}
    samples = pd.read_csv(tmp_path / "all.samples.csv")
    assert samples["sweep_id"].nunique() == 2
    import json

    meta = json.loads((tmp_path / "all.schema.json").read_text())
    assert [s["host"] for s in meta["sweeps"]] == ["old", "new"] and meta["sweep"] is None
    # narrowed to one host, by name
    assert main(["export", f"{out}@old", "--csv", str(tmp_path / "old.csv")]) == 0
    old = pd.read_csv(tmp_path / "old.csv", low_memory=False)
    assert set(old["host"]) == {"old"} and len(old) == len(each["old"])
