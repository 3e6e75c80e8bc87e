"""Each run's f32 matmul arithmetic (fp32 or TF32): as its program printed it, or inferred.

The programs print `torch precision fp32|tf32` and `burn precision fp32|unknown (why)`
(docs/LINES.md); a run whose program said `unknown`, or printed nothing (stores made before the
line existed), gets the arithmetic its build's accuracy run shows (accuracy.infer_precision):
every run of the same program, build, device, asked precision and shape in the sweep shares it
(a library may pick another kernel, and so another arithmetic, at another shape). Where no
accuracy run of the run's own shape told, one of another shape still labels it, with the shape
it came from in the source (`inferred at 256x256`), so old stores that ran accuracy at 256²
only keep their labels and say where they came from. Where no accuracy run tells, the names of
the run's own matmul kernels (its `kernel_time` and `accuracy_kernel` figures) may
(data/kernel_names.py): every kernel that says an arithmetic must say the same. An accuracy
run, or a printed setting, and the run's kernels that say two arithmetics give none: the source
says both (`disputed: inferred fp32, kernel name tf32`, `disputed: printed tf32, kernel name
fp32`), and the report and compare say so. The dataset's columns: `precision` (fp32, tf32 or
'') and `precision_source` (printed, inferred, inferred at MxN, kernel name, disputed: ..., or
'': not known)."""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from orchestrator import vocabulary
from orchestrator.data import kernel_names
from orchestrator.data.accuracy import Inference
from orchestrator.records import Figure, Header, RunDef

COLUMNS = vocabulary.column_keys("precision")  # orchestrator/vocabulary.py
KNOWN = ("fp32", "tf32")
KERNEL_STATS = ("kernel_min", "kernel_median")  # a figure of one kernel (column `kernel`)
DISPUTED = "disputed: "  # the source of a run whose accuracy run and kernel names disagree
_DISPUTE = re.compile(rf"{DISPUTED}(?P<how>.+) (?P<told>fp32|tf32), "
                      rf"{kernel_names.SOURCE} (?P<named>fp32|tf32)")
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


def assign(runs: Iterable[dict[str, Any]], inferred: dict[str, Inference],
           kernels: Mapping[str, Sequence[str]] | None = None) -> dict[str, dict[str, str]]:
    """run_id -> {precision, precision_source} for every stored run.

    `inferred` holds the inference of each accuracy run (by run_id), `kernels` the names of each
    run's own matmul kernels as its profiler saw them. A run whose program did not print its
    arithmetic takes the one inferred for its key at its own shape, else the one of another
    shape (said so in the source), if the accuracy runs told (two that disagree tell nothing);
    else the one its kernels' names say. Where an accuracy run and the kernels' names say two,
    it takes neither (`disputed: ...`)."""
    runs = list(runs)
    defs = {r["run_id"]: RunDef.from_definition(json.loads(r["definition_json"])) for r in runs}
    shown: dict[Key, dict[Shape, set[str]]] = {}
    for run_id, inference in inferred.items():
        if inference.precision and run_id in defs:
            run = defs[run_id]
            shown.setdefault(key(run), {}).setdefault(run.shape, set()).add(inference.precision)
    kernels = kernels or {}
    out = {}
    for r in runs:
        run = defs[r["run_id"]]
        told = _told(shown.get(key(run), {}), run.shape)
        named = kernel_names.of_kernels(kernels.get(r["run_id"], ()))
        out[r["run_id"]] = _columns(printed(r.get("headers_json")), told, named)
    return out


def _columns(said: str | None, told: tuple[str, str] | None,
             named: kernel_names.Told | None) -> dict[str, str]:
    """A run's columns from its three sources, in their order: printed, accuracy, kernel name;
    two that say two arithmetics give none (`disputed: ...`): a printed setting its own
    kernels contradict (`NVIDIA_TF32_OVERRIDE=0` under `allow_tf32`) is not what ran."""
    if said and named is not None and said != named.precision:
        return {"precision": "", "precision_source": f"{DISPUTED}printed {said}, "
                f"{kernel_names.SOURCE} {named.precision}"}
    if said:
        return {"precision": said, "precision_source": "printed"}
    if told is not None and named is not None and told[0] != named.precision:
        return {"precision": "", "precision_source": f"{DISPUTED}{told[1]} {told[0]}, "
                f"{kernel_names.SOURCE} {named.precision}"}
    if told is not None:
        return {"precision": told[0], "precision_source": told[1]}
    if named is not None:
        return {"precision": named.precision, "precision_source": kernel_names.SOURCE}
    return dict.fromkeys(COLUMNS, "")


def dispute(source: str) -> tuple[str, str, str] | None:
    """(how the accuracy run told, its arithmetic, the kernel name's) of a disputed source
    (`disputed: inferred at 256x256 fp32, kernel name tf32`); None for any other source."""
    found = _DISPUTE.fullmatch(source)
    return None if found is None else found.group("how", "told", "named")


def of_log(figures: list[Figure], headers: list[Header]) -> list[dict[str, str]]:
    """For a captured log, each figure's arithmetic: the last precision header its program
    printed before the figure's line; where that says `unknown` (or there is none), what the
    names of the kernels under the same header, label and shape say ('' where they do not)."""
    lines = sorted((h.line_no, h.kind.split("_", 1)[0], h.precision) for h in headers
                   if h.precision)
    saids = []
    kernels: dict[tuple[Any, ...], list[str]] = {}
    for fig in figures:
        said = next(((n, p) for n, who, p in reversed(lines)
                     if n < fig.line_no and who == fig.framework), (0, None))
        block = (fig.framework, said[0], fig.label, fig.shape)
        saids.append((said[1], block))
        if fig.kernel and fig.stat in KERNEL_STATS:
            kernels.setdefault(block, []).append(fig.kernel)
    named = {block: kernel_names.of_kernels(names) for block, names in kernels.items()}
    return [_columns(said if said in KNOWN else None, None, named.get(block))
            for said, block in saids]
