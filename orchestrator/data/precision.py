"""Each run's f32 matmul arithmetic (fp32 or TF32): as its program printed it, or inferred.

The programs print `torch precision fp32|tf32` and `burn precision fp32|unknown (why)`
(docs/LINES.md); a run whose program said `unknown`, or printed nothing (stores made before the
line existed), gets the arithmetic its build's accuracy run shows (accuracy.infer_precision):
every run of the same program, build, device and asked precision in the sweep shares it. The
dataset's columns: `precision` (fp32, tf32 or '') and `precision_source` (printed, inferred or
'': not known).
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any

from orchestrator import vocabulary
from orchestrator.data.accuracy import Inference
from orchestrator.data.records import Figure, Header, RunDef

COLUMNS = vocabulary.column_keys("precision")  # orchestrator/vocabulary.py
KNOWN = ("fp32", "tf32")
Key = tuple[str, str | None, str, str | None]


def printed(headers_json: str | None) -> str | None:
    """'fp32' or 'tf32' as the run's precision header says; None where it says no more."""
    for header in json.loads(headers_json or "null") or []:
        if header.get("precision") in KNOWN:
            return str(header["precision"])
    return None


def key(run: RunDef) -> Key:
    """What shares one arithmetic: the same program, build, device and asked precision."""
    return (run.program, run.build, run.device, run.precision)


def assign(runs: Iterable[dict[str, Any]],
           inferred: dict[str, Inference]) -> dict[str, dict[str, str]]:
    """run_id -> {precision, precision_source} for every stored run.

    `inferred` holds the inference of each accuracy run (by run_id); a run whose program did not
    print its arithmetic takes the one inferred for its key, if one accuracy run of that key
    told (two that disagree tell nothing)."""
    runs = list(runs)
    defs = {r["run_id"]: RunDef.from_definition(json.loads(r["definition_json"])) for r in runs}
    shown: dict[Key, set[str]] = {}
    for run_id, inference in inferred.items():
        if inference.precision and run_id in defs:
            shown.setdefault(key(defs[run_id]), set()).add(inference.precision)
    out = {}
    for r in runs:
        said = printed(r.get("headers_json"))
        told = shown.get(key(defs[r["run_id"]]), set())
        if said:
            out[r["run_id"]] = {"precision": said, "precision_source": "printed"}
        elif len(told) == 1:
            out[r["run_id"]] = {"precision": next(iter(told)), "precision_source": "inferred"}
        else:
            out[r["run_id"]] = dict.fromkeys(COLUMNS, "")
    return out


def of_log(figures: list[Figure], headers: list[Header]) -> list[dict[str, str]]:
    """For a captured log, each figure's arithmetic: the last precision header its program
    printed before the figure's line ('' before any, or where it printed `unknown`)."""
    lines = sorted((h.line_no, h.kind.split("_", 1)[0], h.precision) for h in headers
                   if h.precision)
    out = []
    for fig in figures:
        said = next((p for n, who, p in reversed(lines)
                     if n < fig.line_no and who == fig.framework), None)
        known = said in KNOWN
        out.append({"precision": said if known else "",
                    "precision_source": "printed" if known else ""})
    return out
