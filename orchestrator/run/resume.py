"""What a sweep finds as it begins, said in one line each: sweeps left `running` by an
orchestrator that died (marked `killed`: `run` holds the lock, so none is running), the state of
the sweep it resumes, and what changed in the experiments file since that sweep began (both
texts are kept in the store's `sweep_starts`). A resume that runs programs its sweep's first
start did not (a wider `--only`) adds their facts to the sweep's host facts (run/machine.py).
"""

from __future__ import annotations

import difflib
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import yaml

from orchestrator.data.store import Store
from orchestrator.experiments.config import ExperimentsFile
from orchestrator.experiments.plan import PlannedRun
from orchestrator.run.machine import widened

# an older text larger than this is only counted in lines, not parsed again
_PARSE_LIMIT = 1 << 20


def begin(store: Store, config_path: Path, config: ExperimentsFile, planned: list[PlannedRun],
          host: dict[str, Any], argv: list[str], new: bool,
          say: Callable[[str], None], *, recorded: dict[str, Any] | None) -> tuple[str, bool]:
    """Begin or resume the sweep (Store.begin_sweep), saying what the store held: (sweep id,
    resumed). `recorded`: the host facts of the sweep it resumes, as `recorded_host` read them
    before the facts were asked. Called holding the store's lock."""
    dead = store.close_dead_sweeps()
    latest = None if new else store.latest_sweep()
    before = store.sweep_state(latest) if latest else None
    starts = store.config_texts(latest) if latest else []
    for state in dead:
        if state.sweep_id != latest:
            say(f"sweep {state.sweep_id} was left running by an orchestrator that died: marked "
                f"killed ({state.progress()})")
    sweep_id, resumed = store.begin_sweep(
        config_path, host, argv, new, config_text=config.source_text,
        planned=[p.run.run_id for p in planned],
        seed=config.defaults.order.seed if config.defaults.order.interleave else None)
    grown = widened(recorded, host) if resumed and recorded is not None else None
    if grown is not None:  # a wider --only: the facts of the programs it adds
        store.set_host(sweep_id, grown)
    if before is not None and not before.complete:
        killed = " (its orchestrator died before ending it)" if before.status == "killed" else ""
        say(f"resuming sweep {sweep_id}, {before.status}{killed}: {before.progress()}")
    old = starts[-1]["config_text"] if starts else None
    if old is not None and old != config.source_text:
        say(changes(old, config.source_text))
    return sweep_id, resumed


def recorded_host(store: Store, new: bool) -> dict[str, Any] | None:
    """The host facts of the sweep a start resumes; None for a new sweep, or where its
    `host_json` is not a JSON object (a damaged row is left as it is)."""
    latest = None if new else store.latest_sweep()
    rows = store.query("SELECT host_json FROM sweeps WHERE sweep_id=?", (latest,)) \
        if latest else []
    try:
        host = json.loads(rows[0]["host_json"] or "{}") if rows else None
    except (TypeError, ValueError, RecursionError):
        return None
    return host if isinstance(host, dict) else None


def changes(old: str, new: str) -> str:
    """One line: how the experiments file differs from the text the sweep last planned from."""
    diff = difflib.unified_diff(old.splitlines(), new.splitlines(), lineterm="", n=0)
    lines = sum(1 for line in diff if line[:1] in "+-" and not line.startswith(("+++", "---")))
    head = (f"experiments file changed since this sweep began ({lines} line"
            f"{'s' if lines != 1 else ''} differ{'s' if lines == 1 else ''})")
    parts = _what_changed(old, new)
    if parts is None:
        return f"{head}; both texts are kept in the store"
    return f"{head}: {'; '.join(parts) or 'no experiment changed'}; both texts are kept"


def _what_changed(old: str, new: str) -> list[str] | None:
    """'experiments a, b edited', 'c added', 'd removed', 'defaults edited'; None when either
    text does not read as a mapping (only the line count is said then)."""
    if len(old) > _PARSE_LIMIT or len(new) > _PARSE_LIMIT:
        return None
    try:
        before, after = yaml.safe_load(old), yaml.safe_load(new)
    except (yaml.YAMLError, RecursionError):
        return None
    if not isinstance(before, dict) or not isinstance(after, dict):
        return None
    was, now = _mapping(before.get("experiments")), _mapping(after.get("experiments"))
    edited = [name for name in now if name in was and was[name] != now[name]]
    added = [name for name in now if name not in was]
    removed = [name for name in was if name not in now]
    parts = [f"{_names(edited)} edited" if edited else "",
             f"{_names(added)} added" if added else "",
             f"{_names(removed)} removed" if removed else ""]
    parts = [p for p in parts if p]
    if parts:
        parts[0] = "experiments " + parts[0]
    top = [key for key in sorted({*before, *after} - {"experiments"}, key=str)
           if before.get(key) != after.get(key)]
    if top:
        parts.append(f"{_names(top)} edited")
    return parts


def _mapping(value: Any) -> dict[Any, Any]:
    return value if isinstance(value, dict) else {}


def _names(names: list[Any]) -> str:
    return ", ".join(map(str, names))
