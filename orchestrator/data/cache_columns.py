"""The dataset's cache columns, from each run's cache record (run/cache_record.py).

`autotune_kernel` and `autotune_median_s`: what cubecl's autotune chose for the run's matmul
(the winner in its store after the run, and the winner's median as autotune measured it);
`cache_proof`: the one line saying what the run's caches were, proven from the store ('warm, no
autotune', 'cold, autotuned; driver cache new and empty', 'not proven warm: no entry for ...').
Runs recorded before the cache record (docs/results/h200-2026-11-30) have none of these: '' and
empty."""

from __future__ import annotations

import json
from typing import Any

from orchestrator import vocabulary

COLUMNS = vocabulary.column_keys("cache")  # orchestrator/vocabulary.py


def columns(cache_json: str | None) -> dict[str, Any]:
    """The three columns of one run from its stored cache record (JSON text or NULL)."""
    record = json.loads(cache_json) if cache_json else None
    if not isinstance(record, dict):
        return {"autotune_kernel": "", "autotune_median_s": None, "cache_proof": ""}
    chosen = record.get("autotune") or {}
    return {"autotune_kernel": chosen.get("kernel") or "",
            "autotune_median_s": chosen.get("median_s"),
            "cache_proof": record.get("proof") or ""}
