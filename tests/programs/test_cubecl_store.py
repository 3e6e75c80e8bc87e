"""cubecl's store read without cubecl, on the real database an H200 cold run left behind.

tests/data/h200/cubecl_env_cold/ is run c1 of docs/CACHES.md: default.db (one page) and
default.db-wal (the data: Turso never checkpoints). Figures asserted here were read from it
once with this reader and match CACHES.md (winner index 31, 20 measured, median 37.3 µs).
"""

from __future__ import annotations

import contextlib
import hashlib
import shutil
import sqlite3
from pathlib import Path

import pytest

from orchestrator.programs.burn import cubecl_store as store

from ..conftest import PROJECT

FIXTURE = PROJECT / "tests" / "data" / "h200" / "cubecl_env_cold"
MATMUL = "autotune/0.11.3/device-0-0-cuda/burn_cubecl-kernel-matmul-tune-base"


def _digests(folder: Path) -> dict[str, str]:
    return {p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in folder.iterdir()}


def test_the_matmul_entry_of_a_cold_h200_run() -> None:
    before = _digests(FIXTURE)
    entries = store.read_autotune(FIXTURE)
    assert len(entries) == 4
    [matmul] = [e for e in entries if e["namespace"] == MATMUL]
    assert store.matmul_entries(entries, 1024, 1024, 1024) == [matmul]
    assert store.matmul_entries(entries, 512, 512, 512) == []
    assert (matmul["winner"], matmul["fastest_index"], matmul["measured"]) == (
        "matmul_specialized_tma_mma", 31, 20)
    assert (matmul["winner_median_ns"], matmul["winner_min_ns"]) == (37344, 37248)
    assert matmul["device"] == "device-0-0-cuda" and matmul["origin"] == "local"
    d = store.matmul_definition(matmul["key"])
    assert d is not None and (d["lhs_pow2_factor"], d["lhs_stride_factor"]) == (4, 10)
    skipped = [r for r in matmul["results"] if not r["ok"]]
    assert len(skipped) == len(matmul["results"]) - 20 and skipped[0]["name"]
    assert _digests(FIXTURE) == before  # the live files are never touched


def test_sessions_and_tune_records() -> None:
    [session] = store.read_sessions(FIXTURE)
    assert (session["process"], session["cubecl_version"], session["os"]) == (877, "0.11.3",
                                                                               "linux")
    records = store.read_tune_records(FIXTURE)
    [tune] = [r for r in records if r["table"] == MATMUL]
    assert tune["session"] == session["id"] and tune["winner"] == 31 and tune["stored"]
    assert len(tune["trials"]) == 20 and tune["short_circuit"] == "matmul_simple_tma_mma"
    assert tune["wall_ns"] == 26_263_968_698  # the 26 s of c1's first call went here


def test_content_digest_ignores_file_times_and_sees_contents(tmp_path: Path) -> None:
    copy = tmp_path / "environment"
    shutil.copytree(FIXTURE, copy)
    digest = store.content_digest(copy)
    (copy / "default.db-tshm").write_bytes(b"Turso's lock, touched by a reader")
    assert store.content_digest(copy) == digest == store.content_digest(FIXTURE)
    with contextlib.closing(sqlite3.connect(copy / "default.db")) as db:  # one entry less
        db.execute("DELETE FROM entries WHERE namespace LIKE '%reduce-tune-autotune-sum'")
        db.commit()
    assert store.content_digest(copy) != digest
    assert len(store.read_autotune(copy)) == 3


@pytest.mark.parametrize(("hex_", "value"), [
    ("00", 0), ("17", 23), ("1818", 24), ("1903e8", 1000), ("20", -1), ("3903e7", -1000),
    ("c249010000000000000000", 18446744073709551616), ("f4", False), ("f5", True),
    ("f6", None), ("f93c00", 1.0), ("fb3ff199999999999a", 1.1), ("6161", "a"),
    ("4401020304", b"\x01\x02\x03\x04"), ("83010203", [1, 2, 3]),
    ("a201020304", {1: 2, 3: 4}), ("9fff", []), ("7f657374726561646d696e67ff", "streaming"),
])
def test_cbor_rfc8949_examples(hex_: str, value: object) -> None:
    assert store.decode_cbor(bytes.fromhex(hex_)) == value


def test_not_a_database_is_a_store_error(tmp_path: Path) -> None:
    with pytest.raises(store.StoreError, match="no cubecl environment database"):
        store.read_autotune(tmp_path)
    (tmp_path / "default.db").write_bytes(b"not sqlite at all" * 300)
    with pytest.raises(store.StoreError, match="not a readable cubecl database"):
        store.read_autotune(tmp_path)
    with pytest.raises(store.StoreError, match="trailing bytes"):
        store.decode_cbor(bytes.fromhex("0000"))
