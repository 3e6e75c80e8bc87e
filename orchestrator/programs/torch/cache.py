"""torch.compile's on-disk caches: what a run's folder holds, and what that proves.

A compiled run (`--exec compile...`) gets `--cache-dir DIR` (`bench_py/target/torch-compile-cache`,
emptied by a cold series' first process): the program sets `TORCHINDUCTOR_CACHE_DIR=DIR/inductor`
and `TRITON_CACHE_DIR=DIR/triton` before it imports torch. Inductor writes there its FX graph
cache (`inductor/fxgraph/`: a compiled graph per key), AOTAutograd's (`inductor/aotautograd/`),
the generated code (two-letter folders of `.py`, and on the CPU the C++ and its `.so`), the
select_algorithm autotune results (`inductor/cache/<system hash>`: every mm candidate's time) and
Triton's `.best_config` files; Triton writes its compiled kernels under `triton/`.

The look records per part the files and bytes, and a digest of each FX graph and autotune entry;
the proofs read it the way JAX's and cubecl's do: cold = nothing before, an FX graph entry after;
warm = the FX graph entries there before, byte-identical after, none new. The program's own
`compile cache (inductor)` line (torch's counters: `fxgraph_cache_hit`, ...) says what it hit.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from orchestrator.programs.caches import Caches
from orchestrator.records import RunDef

# environment variables that change where or whether torch.compile caches (flagged when set)
CACHE_ENV = ("TORCHINDUCTOR_CACHE_DIR", "TRITON_CACHE_DIR", "TORCHINDUCTOR_FX_GRAPH_CACHE",
             "TORCHINDUCTOR_AUTOGRAD_CACHE", "TORCHINDUCTOR_FORCE_DISABLE_CACHES",
             "TORCHINDUCTOR_AUTOTUNE_LOCAL_CACHE", "TORCHINDUCTOR_MAX_AUTOTUNE",
             "TORCHINDUCTOR_MAX_AUTOTUNE_GEMM_BACKENDS", "TORCH_COMPILE_DEBUG")
MAX_DIGEST_BYTES = 16 << 20  # an entry larger than this is counted, not read
_PARTS = {"fxgraph": ("inductor", "fxgraph"), "aotautograd": ("inductor", "aotautograd"),
          "autotune": ("inductor", "cache")}


def _digest(path: Path) -> str:
    if path.stat().st_size > MAX_DIGEST_BYTES:
        return f"{path.stat().st_size} bytes"
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _files(folder: Path) -> list[Path]:
    """Regular files under `folder`, links not followed (a cache is never read through one)."""
    if not folder.is_dir() or folder.is_symlink():
        return []
    return sorted(p for p in folder.rglob("*") if p.is_file() and not p.is_symlink())


def look(folder: Path) -> dict[str, Any]:
    """Files and bytes of the Inductor and Triton parts, digests of the FX graph and autotune
    entries (relative names): JSON-able, for the record."""
    entries: dict[str, dict[str, str]] = {}
    for part, where in _PARTS.items():
        base = folder.joinpath(*where)
        entries[part] = {str(p.relative_to(base)): _digest(p) for p in _files(base)}
    best = [p for p in _files(folder / "inductor") if p.name.endswith(".best_config")]
    entries["best_config"] = {p.name: _digest(p) for p in best}
    counts = {}
    for name in ("inductor", "triton"):
        found = _files(folder / name)
        counts[name] = {"files": len(found), "bytes": sum(p.stat().st_size for p in found)}
    return {"folder": str(folder), "exists": folder.is_dir(), "parts": counts, **entries}


def _total(seen: dict[str, Any]) -> int:
    return sum(part["files"] for part in seen.get("parts", {}).values())


def _filled(after: dict[str, Any]) -> str:
    parts = after.get("parts", {})
    words = [f"{name} {v['files']} files" for name, v in parts.items() if v["files"]]
    tuned = len(after.get("autotune", {})) + len(after.get("best_config", {}))
    return ", ".join(words) + (f", {tuned} autotune entries" if tuned else "")


def cold_proof(before: dict[str, Any], after: dict[str, Any]) -> str:
    """Cold: the folder empty before (removed); after, an FX graph entry written."""
    if _total(before):
        return f"not cold: {before['folder']} held {_total(before)} files before"
    if not after.get("fxgraph"):
        return "cold, but no FX graph entry written (the FX graph cache is off?)"
    return f"cold (empty before), compiled; written: {_filled(after)}"


def warm_proof(before: dict[str, Any], after: dict[str, Any]) -> str:
    """Warm: FX graph entries there before, byte-identical after, no new one."""
    kept = before.get("fxgraph") or {}
    if not kept:
        return "not proven warm: no FX graph entry before"
    now = after.get("fxgraph") or {}
    if any(now.get(name) != digest for name, digest in kept.items()):
        return "not warm: an FX graph entry changed"
    new = sorted(set(now) - set(kept))
    if new:
        return f"warm FX graph entries, but {len(new)} new written (another graph compiled)"
    tuned = len(before.get("autotune", {})) + len(before.get("best_config", {}))
    return (f"warm, {len(kept)} FX graph entries read, none written"
            + (f"; {tuned} autotune entries there" if tuned else ""))


@dataclass(frozen=True)
class TorchCaches(Caches):
    """torch.compile's caches as PyTorch's Program's part: its looks and proofs above."""

    def look(self, run: RunDef, cache_dir: Path, env: dict[str, str]) -> Any:
        return look(cache_dir)

    def proof(self, cold: bool, before: Any, after: Any) -> str:
        return (cold_proof if cold else warm_proof)(before, after)
