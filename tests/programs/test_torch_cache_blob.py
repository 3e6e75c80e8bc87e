"""torch.compile's mega-cache blob in the cache proof: its digest names the blob the saving and
the loading run share, also for a blob of the size max-autotune writes on CUDA (~20 MB)."""

from __future__ import annotations

import hashlib
from pathlib import Path

from orchestrator.programs.torch import cache


def test_a_blob_of_twenty_megabytes_is_hashed_not_counted(tmp_path: Path) -> None:
    blob = tmp_path / "blob.bin"
    data = bytes(range(256)) * (20 * 4096)  # 20 MiB, over the 16 MiB the first bound allowed
    blob.write_bytes(data)
    found = cache._blob(blob)
    assert found["sha256"] == hashlib.sha256(data).hexdigest()
    assert cache._blob_words(found) == f"{len(data)} bytes, sha256 {found['sha256'][:12]}"


def test_a_record_from_before_says_not_hashed_not_a_cut_count() -> None:
    # the H100 sweep of docs/results/h100-compile-2026-12-06 recorded the count in its place
    old = {"bytes": 19705956, "sha256": "19705956 bytes"}
    assert cache._blob_words(old) == "19705956 bytes, not hashed"
