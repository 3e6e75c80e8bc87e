"""Each run's f32 matmul arithmetic (fp32 or TF32): as its program printed it, or inferred.

The programs print `torch precision fp32|tf32` and `burn precision fp32|unknown (why)`
(docs/LINES.md); a run whose program said `unknown`, or printed nothing (stores made before the
line existed), gets the arithmetic its build's accuracy run shows (accuracy.infer_precision):
every run of the same program, build, device, asked precision and shape in the sweep shares it
(a library may pick another kernel, and so another arithmetic, at another shape: issue 24 item
3). Where no accuracy run of the run's own shape told, one of another shape still labels it,
with the shape it came from in the source (`inferred at 256x256`), so old stores that ran
accuracy at 256² only keep their labels and say where they came from. The dataset's columns:
`precision` (fp32, tf32 or '') and `precision_source` (printed, inferred, inferred at MxN or
'': not known).
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any

from orchestrator import vocabulary
from orchestrator.data.accuracy import Inference
from orchestrator.records import Figure, Header, RunDef

COLUMNS = vocabulary.column_keys("precision")  # orchestrator/vocabulary.py
KNOWN = ("fp32", "tf32")
Key = tuple[str, str | None, str, str | None]
Shape = tuple[int, int]


def printed(headers_json: str | None) -> str | None:
    """'fp32' or 'tf32' as the run's precision header says; None where it says no more."""
    for header in json.loads(headers_json or "null") or []:
        if header.get("precision") in KNOWN:
            return str(header["precision"])
    return None


def key(run: RunDef) -> Key:
    """What shares one arithmetic, shape aside: the same program, build, device and asked
    precision."""
    return (run.program, run.build, run.device, run.precision)


def _told(shown: dict[Shape, set[str]], shape: Shape) -> tuple[str, str] | None:
    """(precision, source) from the accuracy runs of one key, `shape`'s own first; None when
    they tell nothing (none, or two that disagree)."""
    own = shown.get(shape, set())
    if own:
        return (next(iter(own)), "inferred") if len(own) == 1 else None
    others = set().union(*shown.values()) if shown else set()
    if len(others) != 1:
        return None
    where = ",".join(f"{m}x{n}" for m, n in sorted(shown))
    return next(iter(others)), f"inferred at {where}"


def assign(runs: Iterable[dict[str, Any]],
           inferred: dict[str, Inference]) -> dict[str, dict[str, str]]:
    """run_id -> {precision, precision_source} for every stored run.

    `inferred` holds the inference of each accuracy run (by run_id); a run whose program did not
    print its arithmetic takes the one inferred for its key at its own shape, else the one of
    another shape (said so in the source), if the accuracy runs told (two that disagree tell
    nothing)."""
    runs = list(runs)
    defs = {r["run_id"]: RunDef.from_definition(json.loads(r["definition_json"])) for r in runs}
    shown: dict[Key, dict[Shape, set[str]]] = {}
    for run_id, inference in inferred.items():
        if inference.precision and run_id in defs:
            run = defs[run_id]
            shown.setdefault(key(run), {}).setdefault(run.shape, set()).add(inference.precision)
    out = {}
    for r in runs:
        said = printed(r.get("headers_json"))
        run = defs[r["run_id"]]
        told = _told(shown.get(key(run), {}), run.shape)
        if said:
            out[r["run_id"]] = {"precision": said, "precision_source": "printed"}
        elif told is not None:
            out[r["run_id"]] = {"precision": told[0], "precision_source": told[1]}
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
