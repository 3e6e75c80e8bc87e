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

The mega-cache (`torch.compiler.save_cache_artifacts`): a cold series' first process (and a mega
series' priming run, which is one) saves the blob of its caches to
`bench_py/target/torch-mega-cache/KEY.bin`, beside the cache folder so that emptying that folder
leaves it; a mega series' first process finds the folder emptied and loads the blob (`--load-
cache-artifacts`). KEY is the run id of the cold first process of the run's definition, so a
mega run loads what its priming run saved. The look records the blob (size, digest); the mega
proof: the folder empty before, the blob there and loaded, FX graph entries after.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from orchestrator.programs.caches import Caches
from orchestrator.records import CacheAction, CacheState, RunDef

# environment variables that change where or whether torch.compile caches (flagged when set)
CACHE_ENV = ("TORCHINDUCTOR_CACHE_DIR", "TRITON_CACHE_DIR", "TORCHINDUCTOR_FX_GRAPH_CACHE",
             "TORCHINDUCTOR_AUTOGRAD_CACHE", "TORCHINDUCTOR_FORCE_DISABLE_CACHES",
             "TORCHINDUCTOR_AUTOTUNE_LOCAL_CACHE", "TORCHINDUCTOR_MAX_AUTOTUNE",
             "TORCHINDUCTOR_MAX_AUTOTUNE_GEMM_BACKENDS", "TORCH_COMPILE_DEBUG")
# an entry larger than this is counted, not read: a max-autotune mega-cache blob at 1024² on
# CUDA is ~20 MB (its proof is the digest the saving and the loading run share), and a file
# is read in chunks, so the bound is on time, not memory
MAX_DIGEST_BYTES = 1 << 30
_PARTS = {"fxgraph": ("inductor", "fxgraph"), "aotautograd": ("inductor", "aotautograd"),
          "autotune": ("inductor", "cache")}


def _digest(path: Path) -> str:
    if path.stat().st_size > MAX_DIGEST_BYTES:
        return f"{path.stat().st_size} bytes"
    with path.open("rb") as f:
        return hashlib.file_digest(f, "sha256").hexdigest()


def _files(folder: Path) -> list[Path]:
    """Regular files under `folder`, links not followed (a cache is never read through one)."""
    if not folder.is_dir() or folder.is_symlink():
        return []
    return sorted(p for p in folder.rglob("*") if p.is_file() and not p.is_symlink())


ARTIFACTS_FOLDER = "torch-mega-cache"  # beside the cache folder: emptying that leaves it


def artifacts_use(run: RunDef) -> str | None:
    """'save' (a cold series' first process, a mega series' priming run), 'load' (a mega
    series' first process), None (later processes, profile runs, runs outside a series)."""
    if run.profile or run.cache_action != CacheAction.DELETE:
        return None
    return {CacheState.MEGA: "load", CacheState.COLD: "save"}.get(run.cache)


def blob_path(run: RunDef, cache_dir: Path) -> Path:
    """The blob a run saves or loads: named by the run id of the cold first process of its
    definition (a mega run's priming run), beside the cache folder."""
    key = replace(run, cache=CacheState.COLD, cache_action=CacheAction.DELETE, process=1,
                  repeat=1, profile=None).run_id
    return cache_dir.with_name(ARTIFACTS_FOLDER) / f"{key}.bin"


def artifacts_argv(run: RunDef, cache_dir: Path) -> list[str]:
    use = artifacts_use(run)
    return [] if use is None else [f"--{use}-cache-artifacts", str(blob_path(run, cache_dir))]


def _blob(path: Path) -> dict[str, Any]:
    """The blob's size and digest, a link or another kind of file counted as absent."""
    there = path.is_file() and not path.is_symlink()
    return {"path": str(path), "exists": there, "bytes": path.stat().st_size if there else 0,
            "sha256": _digest(path) if there else None}


def look(folder: Path, run: RunDef | None = None) -> dict[str, Any]:
    """Files and bytes of the Inductor and Triton parts, digests of the FX graph and autotune
    entries (relative names), and the mega-cache blob `run` saves or loads: JSON-able, for the
    record."""
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
    found = {"folder": str(folder), "exists": folder.is_dir(), "parts": counts, **entries}
    use = artifacts_use(run) if run is not None else None
    if run is not None and use is not None:
        found["artifacts"] = {"use": use, **_blob(blob_path(run, folder))}
    return found


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


def _blob_words(blob: dict[str, Any]) -> str:
    digest = str(blob["sha256"])
    if not re.fullmatch(r"[0-9a-f]{64}", digest):  # a record made when large blobs went unread
        return f"{blob['bytes']} bytes, not hashed"
    return f"{blob['bytes']} bytes, sha256 {digest[:12]}"


def saved_words(after: dict[str, Any]) -> str:
    """'; mega-cache saved: N bytes, sha256 X' where the run saved its blob, else ''."""
    blob = after.get("artifacts") or {}
    if blob.get("use") != "save":
        return ""
    if not blob.get("exists"):
        return "; no mega-cache blob saved"
    return f"; mega-cache saved: {_blob_words(blob)}"


def mega_proof(before: dict[str, Any], after: dict[str, Any]) -> str:
    """From artifacts: the folder empty before (removed), the blob its priming run saved
    there and loaded, FX graph entries after (the load wrote them; torch's counters in the
    same process say whether the compile hit them)."""
    blob = before.get("artifacts") or {}
    if _total(before):
        return f"not from artifacts: {before['folder']} held {_total(before)} files before"
    if not blob.get("exists"):
        return f"not from artifacts: no blob at {blob.get('path')} (its priming run saved none)"
    if not after.get("fxgraph"):
        return f"mega-cache loaded ({_blob_words(blob)}), but no FX graph entry after"
    return (f"from artifacts (empty before), mega-cache loaded: {_blob_words(blob)}; "
            f"after: {_filled(after)}")


@dataclass(frozen=True)
class TorchCaches(Caches):
    """torch.compile's caches as PyTorch's Program's part: its looks and proofs above."""

    def look(self, run: RunDef, cache_dir: Path, env: dict[str, str]) -> Any:
        return look(cache_dir, run)

    def proof(self, cold: bool, before: Any, after: Any) -> str:
        """Cold or warm from the folder; a run that loaded the mega-cache (its look says so)
        from artifacts; a run that saved it says the blob's size and digest too."""
        if (before.get("artifacts") or {}).get("use") == "load":
            return mega_proof(before, after)
        return (cold_proof if cold else warm_proof)(before, after) + saved_words(after)

    def argv(self, run: RunDef, home: Path) -> list[str]:
        return ["--cache-dir", str(home), *artifacts_argv(run, home)]
