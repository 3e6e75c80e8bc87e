"""A figure's identity, defined once: what makes two figures figures of the same thing.

`FIELDS` are the dataset columns that say what a figure is a figure of (the sweep, host and
variant it belongs to, the experiment, target, shape, threads, method, stat, cache, warm-up,
iteration and the arithmetic as run); two figures that differ in one of them are never one
figure. `APART` are those no answer pools across unless the user asks for it by name: a host,
a sweep, a variant. Report, export, compare, the plots and the figures table read them here:
a dataset is split into its `parts` (one per host, sweep and variant) before anything is
pooled, and a results folder is named to one part by a `Spec` (`FOLDER@SWEEP`, `FOLDER@HOST`,
`FOLDER#VARIANT`, `FOLDER@HOST#VARIANT`).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING

import pandas as pd
import yaml

from orchestrator.data.store import Store
from orchestrator.errors import InputError

if TYPE_CHECKING:
    from orchestrator.data.dataset import Dataset

# what never pools unless asked for by name, in the order a part is named (host@sweep#variant)
APART = ("host", "sweep_id", "variant")
# the whole identity: APART, then what the figure measures, then the arithmetic as run
FIELDS = (*APART, "experiment", "label", "shape", "threads", "method", "stat", "cache", "warmup",
          "iteration", "precision")
# characters that name a part in a spec, so never part of a host or variant name
SPEC_MARKS = ("@", "#")


@dataclass(frozen=True)
class Spec:
    """A results folder and, optionally, which part of it: a sweep id or a host name (`@`),
    a variant (`#`). A path that exists is a folder (or a log) whatever its characters."""

    folder: Path
    at: str | None = None  # a sweep id, or a host of a merged store (its latest sweep)
    variant: str | None = None

    @classmethod
    def parse(cls, spec: str) -> Spec:
        path = Path(spec)
        if path.exists():
            return cls(path)
        head, variant = spec, None
        if "#" in head:
            head, variant = head.rsplit("#", 1)
        at = None
        if not Path(head).exists() and "@" in head:
            head, at = head.rsplit("@", 1)
        return cls(Path(head), at or None, variant or None)

    @property
    def narrowed(self) -> bool:
        return self.at is not None or self.variant is not None


def variants(figures: pd.DataFrame) -> list[str]:
    """The variants a dataset's figures belong to, sorted ('' is none: not a variant)."""
    if "variant" not in figures or figures.empty:
        return []
    return sorted(v for v in set(figures["variant"].fillna("").astype(str)) if v)


def select_variant(data: Dataset, variant: str, name: str) -> Dataset:
    """The dataset's runs of one variant: its figures, samples and runs; a variant it lacks is
    the user's input (named with those it has)."""
    known = variants(data.figures)
    if variant not in known:
        raise InputError(f"{name}#{variant}: no variant {variant!r} in {name} (variants: "
                         f"{', '.join(known) or 'none: that sweep measured no variants'})")
    mine = data.figures[data.figures["variant"] == variant]
    ids = set(mine["run_id"])
    runs = data.runs[data.runs["run_id"].isin(ids)] if "run_id" in data.runs else data.runs
    return replace(data, figures=mine.reset_index(drop=True),
                   samples=data.samples[data.samples["run_id"].isin(ids)].reset_index(
                       drop=True), runs=runs.reset_index(drop=True))


def tag_variants(fig: pd.DataFrame) -> pd.Series:
    """Each figure's label, with ` #VARIANT` where the frame holds several variants: every
    table that groups by label then keeps them apart (no interval mixes two variants)."""
    if len(variants(fig)) < 2:
        return fig["label"]
    variant = fig["variant"].fillna("").astype(str)
    return fig["label"].where(variant == "", fig["label"].astype(str) + " #" + variant)


def check_name(name: str, what: str) -> None:
    """A host or variant name a spec could not name back (`@`, `#`, '/') is refused."""
    bad = [c for c in (*SPEC_MARKS, "/") if c in name]
    if not name or bad:
        raise InputError(f"{what} {name!r}: a name must be non-empty and hold none of "
                         f"{' '.join(repr(c) for c in (*SPEC_MARKS, '/'))} (FOLDER@HOST#VARIANT "
                         "names a part of a results folder)")


@dataclass(frozen=True)
class VariantFacts:
    """What a variant changed, as recorded: the environment its runs got, the file's note."""

    env: tuple[str, ...]  # 'K=V', from the runs' definitions
    note: str  # the experiments file's `note:` ('' none)

    def words(self) -> str:
        env = ", ".join(self.env) or "no variables"
        return f"env {env}" + (f"; note: {self.note}" if self.note else "")


# a stored experiments text past this is not read for notes (limits.MAX_FILE_BYTES: a sweep's
# own text is never longer)
NOTE_TEXT_BYTES = 2**20


def variant_facts(store: Store, sweep_id: str) -> dict[str, VariantFacts]:
    """Each variant of the sweep with its runs' environment and its note."""
    env: dict[str, set[str]] = {}
    for row in store.query("SELECT definition_json FROM runs WHERE sweep_id=?", (sweep_id,)):
        try:
            definition = json.loads(row["definition_json"] or "{}")
        except ValueError:
            continue  # a damaged row: the dataset counts it
        # the axes are stored beside the definition's fields (RunDef.to_definition)
        variant = definition.get("variant") if isinstance(definition, dict) else None
        if isinstance(variant, str) and variant:
            pairs = definition.get("env") or []
            env.setdefault(variant, set()).update(
                f"{k}={v}" for k, v in (pairs.items() if isinstance(pairs, dict) else pairs))
    notes = _notes(store, sweep_id)
    return {v: VariantFacts(tuple(sorted(e)), notes.get(v, "")) for v, e in sorted(env.items())}


def _notes(store: Store, sweep_id: str) -> dict[str, str]:
    """variant -> note, from the latest start's experiments text (its notes are no figure)."""
    starts = store.config_texts(sweep_id)
    text = starts[-1]["config_text"] if starts else None
    if not isinstance(text, str) or len(text) > NOTE_TEXT_BYTES:
        return {}
    try:
        doc = yaml.safe_load(text)
    except yaml.YAMLError:
        return {}
    found: dict[str, str] = {}
    for exp in ((doc or {}).get("experiments") or {}).values() if isinstance(doc, dict) else []:
        for name, spec in ((exp or {}).get("variants") or {}).items() \
                if isinstance(exp, dict) else []:
            if isinstance(spec, dict) and isinstance(spec.get("note"), str):
                found.setdefault(str(name), spec["note"])
    return found


def spec_text(folder: Path, at: str | None = None, variant: str | None = None) -> str:
    """The spec that names one part: FOLDER, FOLDER@AT, FOLDER#VARIANT, FOLDER@AT#VARIANT."""
    return f"{folder}" + (f"@{at}" if at else "") + (f"#{variant}" if variant else "")


def parts(spec: str, sweep: str | None = None, split_variants: bool = True) -> list[str]:
    """The parts a report or export of `spec` shows apart, each as a spec: a store of several
    hosts (a merge) gives each host's latest sweep, a sweep of several variants each variant;
    `@`/`#`/`sweep` narrow it to what they name (`split_variants=False`: a sweep's variants
    stay one part, as export writes them, with their `variant` column). A log, or a folder
    with no store, is itself (its reader says what is wrong with it)."""
    named = Spec.parse(spec)
    store = Store(named.folder)
    if (named.folder.exists() and not named.folder.is_dir()) or not store.path.is_file():
        return [spec]
    at = named.at or sweep
    from orchestrator.data import sweep_runs  # sweep_runs -> merge -> identity: read at call

    with store.reading():
        sweeps = store.sweeps()
        hosts = list(dict.fromkeys(str(s["host"]) for s in sweeps if s.get("host")))
        tops = [at] if at else hosts if len(hosts) > 1 else [None]
        found = []
        for top in tops:
            sweep_id = sweep_runs.sweep_of(store, top)  # an unknown one: the user's input
            names = [named.variant] if named.variant or not split_variants else \
                list(variant_facts(store, sweep_id)) or [None]
            found += [spec_text(named.folder, top, v) for v in names]
    return found
