"""Two hosts (two work folders behind a real sshd) from one command: push, set up, run, fetch,
merge, and the merged store's report and export with the host as a column and a side."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pandas as pd
import pytest

from orchestrator.cli import main
from orchestrator.data import dataset, merge

from .conftest import SshServer, hosts_yaml, tiny

pytestmark = pytest.mark.torch


@pytest.fixture(scope="module")
def two_hosts(tmp_path_factory: pytest.TempPathFactory, sshd: SshServer
              ) -> tuple[Path, int, Path]:
    tmp = tmp_path_factory.mktemp("two")
    hosts = hosts_yaml(tmp / "hosts.yaml", sshd, {"alpha": {}, "beta": {"push": "tar"}})
    results = tmp / "results"
    code = main(["run", str(tiny(tmp / "tiny.yaml")), "--hosts", str(hosts), "--results",
                 str(results), "--poll", "0.3"])
    return results, code, tmp


def test_both_hosts_ran_and_their_stores_came_back(two_hosts, capfd) -> None:
    results, code, tmp = two_hosts
    assert code == 0
    for name in ("alpha", "beta"):
        assert (tmp / f"remote-{name}" / "results" / "results.sqlite").is_file()  # ran there
        fetched = results / "hosts" / name / "results.sqlite"
        with sqlite3.connect(fetched) as db:
            assert db.execute("SELECT status FROM sweeps").fetchall() == [("complete",)]
            assert db.execute("SELECT status FROM runs").fetchall() == [("ok",)]
        assert not (results / "hosts" / name / "attach.json").exists()  # done with it


def test_only_what_is_needed_was_pushed(two_hosts) -> None:
    _results, _code, tmp = two_hosts
    for name in ("alpha", "beta"):
        remote = tmp / f"remote-{name}"
        assert (remote / "orchestrator" / "cli.py").is_file()
        assert (remote / "bench_py" / "exec_gpu.py").is_file()
        assert (remote / "bench_py" / "bench_core" / "main.py").is_file()  # the whole package
        assert not (remote / "bench_py" / "bench_core" / "__pycache__").exists()
        assert not (remote / "tests").exists() and not (remote / "docs").exists()
        assert not (remote / "bench_rust" / "target").exists()
        assert (remote / "bench_rust" / "Cargo.toml").is_file()  # a host with cargo builds


def test_the_merged_store_has_both_hosts_as_a_column(two_hosts, tmp_path: Path) -> None:
    results, _code, _tmp = two_hosts
    assert sorted(merge.hosts_of(results)) == ["alpha", "beta"]  # in parallel: either first
    alpha = dataset.load(results, "alpha")
    assert set(alpha.figures["host"]) == {"alpha"}
    assert main(["export", str(results), "--sweep", "beta", "--csv", str(tmp_path / "b.csv")]) \
        == 0
    assert set(pd.read_csv(tmp_path / "b.csv")["host"]) == {"beta"}


def test_export_of_the_merged_store_writes_every_hosts_rows(two_hosts, tmp_path: Path) -> None:
    # before: `export results` wrote the second host's rows alone
    results, _code, _tmp = two_hosts
    assert main(["export", str(results), "--csv", str(tmp_path / "all.csv")]) == 0
    rows = pd.read_csv(tmp_path / "all.csv")
    each = {h: len(dataset.load(results, h).figures) for h in ("alpha", "beta")}
    assert rows["host"].value_counts().to_dict() == each and all(each.values())


def test_the_merged_store_reports_its_hosts_side_by_side(two_hosts, tmp_path: Path) -> None:
    results, _code, _tmp = two_hosts
    assert main(["report", str(results), "--out", str(tmp_path / "r")]) == 0
    text = "\n".join(p.read_text() for p in (tmp_path / "r").glob("*.md"))
    assert "results@alpha" in text and "results@beta" in text
    assert main(["compare", f"{results}@alpha", f"{results}@beta", "--out",
                 str(tmp_path / "c")]) == 0


def test_merge_again_is_idempotent(two_hosts, tmp_path: Path) -> None:
    results, _code, _tmp = two_hosts
    sources = [f"{n}={results / 'hosts' / n}" for n in ("alpha", "beta")]
    out = tmp_path / "merged"
    counts = []
    for _ in range(2):
        assert main(["merge", str(out), *sources]) == 0
        with sqlite3.connect(out / "results.sqlite") as db:
            counts.append([db.execute(f"SELECT count(*) FROM {t}").fetchone()[0]
                           for t in merge.TABLES])
            hosts = db.execute("SELECT host, host_json FROM sweeps ORDER BY host").fetchall()
    assert counts[0] == counts[1] and counts[0][0] == 2
    assert [h for h, _ in hosts] == ["alpha", "beta"] and all('"cpu_model"' in j
                                                              for _, j in hosts)
