"""`report A B ...`: the chapter's tables with one column group per machine or sweep.

Each side (a results folder, `folder@sweep`, or a captured log such as the chapter's listings)
gets the same tables as a one-side report; they are then joined on what a row stands for (the
method, the build, the framework and process, the cache state and warm-up kind), and each
side's value columns carry its letter: `A: PyTorch mps min` beside `B: PyTorch cuda min`. A row
only one side has keeps empty cells for the other. Above the tables, one machine line per side
(from compare's facts: what a log did not record reads 'not recorded'). The tables are the
registered sections' own (report/sections/, `side_by_side=`), each side's rows selected as
the section selects them for a one-side report. report.html shows the same, each side's
columns under one grouped header cell naming the side (report/html_report.py `sides_page`).
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from orchestrator.data import identity, outputs
from orchestrator.data.dataset import Dataset
from orchestrator.data.store import Store
from orchestrator.errors import InputError
from orchestrator.programs.base import NOT_PROBED
from orchestrator.report import escape, html_report, tables, writer
from orchestrator.report.compare import sides as compare_sides
from orchestrator.report.compare.rows import accuracy_label
from orchestrator.report.compare.sides import (
    NOT_RECORDED,
    Side,
    load_side,
    program_rows,
    variant_side,
)
from orchestrator.report.exporters import markdown_table, note_lines
from orchestrator.report.sections import Context, Registered, SideTable, registered
from orchestrator.report.tables import Table

REPORT_NAME = "report.md"
TITLE = "Timing report: side by side"
NO_SIDE = "No side has data for this table"
LETTERS = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
HOST_FACTS = ("accelerators (devices of the figures)", "GPU", "CPU", "OS")


def machine_line(letter: str, side: Side) -> str:
    """The host's facts, then each program's in-line rows; a program row that is not `always`
    shown (JAX's: older sweeps have none) only where the side recorded it, not where its sweep
    did not probe it."""
    rows = [r for r in program_rows() if r.in_line]
    shown = {*HOST_FACTS, *(r.name for r in rows)}
    optional = {r.name for r in rows if not r.always}
    facts = {what: read(side) for what, read in compare_sides.facts() if what in shown}
    facts = {w: v for w, v in facts.items()
             if (v is not None and v != NOT_PROBED) or w not in optional}
    words = "; ".join(f"{what.split(' (')[0]} {value or NOT_RECORDED}"
                      for what, value in facts.items())
    variant = _variant_words(side)
    return f"- **{letter}** = `{side.name}`: {words}" + (f"; {variant}" if variant else "") + "."


def _variant_words(side: Side) -> str | None:
    """'variant c: env NVIDIA_TF32_OVERRIDE=0; note: ...' for a side that is one variant of a
    sweep (data/identity.py), read from its runs' definitions and the experiments text."""
    named = identity.Spec.parse(side.spec)
    if named.variant is None or side.sweep is None:
        return None
    with Store(named.folder).reading() as store:
        found = identity.variant_facts(store, side.sweep).get(named.variant)
    return f"variant {named.variant}: {found.words()}" if found else None


def _one_per_key(frame: pd.DataFrame, keys: list[str]) -> pd.DataFrame:
    """One row per key: a store's first-call table also lists the device init of the methods
    and warm-up runs; the first-call experiment's row is the one the chapter means."""
    if "experiment" in frame:
        frame = frame.assign(_pick=frame["experiment"] != "first-call")
        frame = frame.sort_values("_pick", kind="stable").drop(columns=["_pick", "experiment"])
    return frame.drop_duplicates(keys)


def _side_frame(name: str, keys: list[str], table: Table, letter: str) -> pd.DataFrame | None:
    if table.missing is not None or table.frame.empty:
        return None
    frame = table.frame.copy()
    if name == "accuracy":  # 'burn flex template' (a log) and 'burn flex(template)' (a store)
        frame["build"] = frame["build"].map(_accuracy_build)
    keys = [k for k in keys if k in frame]
    frame = _one_per_key(frame, keys)
    return frame.rename(columns={c: f"{letter}: {c}" for c in frame.columns if c not in keys})


def _accuracy_build(build: str) -> str:
    framework, _, label = build.partition(" ")
    return f"{framework} {accuracy_label(build)}" if label else build


def merge(name: str, keys: list[str], parts: list[tuple[str, Table]]) -> pd.DataFrame | None:
    """The sides' tables joined on `keys`, in the first side's row order, then the others'."""
    frames = [f for letter, t in parts if (f := _side_frame(name, keys, t, letter)) is not None]
    if not frames:
        return None
    merged = frames[0]
    for frame in frames[1:]:
        on = [k for k in keys if k in merged and k in frame]
        merged = merged.merge(frame, on=on, how="outer", sort=False) if on else \
            pd.concat([merged, frame], axis=1)
    lead = [k for k in keys if k in merged]
    # an outer merge sorts its keys; the chapter's row order is the first side's, then new rows
    seen: dict[tuple[str, ...], int] = {}
    for frame in frames:
        for row in frame[[k for k in lead if k in frame]].astype(str).itertuples(index=False):
            seen.setdefault(tuple(row), len(seen))
    rank = [seen.get(tuple(r), len(seen)) for r in
            merged[lead].astype(str).itertuples(index=False)]
    merged = merged.assign(_rank=rank).sort_values("_rank", kind="stable").drop(columns="_rank")
    return merged[lead + [c for c in merged.columns if c not in lead]].fillna("")


def tables_side_by_side() -> list[tuple[Registered, SideTable]]:
    """The tables `report A B` joins, section by section, from the report's registry."""
    return [(entry, table) for entry in registered() for table in entry.side_by_side]


def write_many(specs: list[str], out: Path, inputs: outputs.Inputs = outputs.NO_INPUTS,
               whole: bool = False) -> list[Path]:
    """report.md, report.html (the column groups as grouped header cells) and one CSV per
    table, the sides' columns side by side; files in `out` an
    earlier report did not write, or an input, are refused (data/outputs.py). `whole`: the
    sides are the variants of one sweep, whose every table and plot follow, each variant's
    rows apart (their labels end in `#VARIANT`: data/identity.py); the side-by-side tables'
    CSVs are then `variants_NAME.csv`. A sweep is read once for all its variants."""
    if len(specs) > len(LETTERS):
        raise InputError(f"report: at most {len(LETTERS)} sides side by side (one letter "
                         f"each), {len(specs)} given; report them in groups")
    heads: dict[str, Side] = {}
    sides = [_side(spec, heads) for spec in specs]
    sweep = next(iter(heads.values())).data if whole and len(heads) == 1 else None
    return outputs.write_folder(out, "--out", writer.WRITER, inputs,
                                lambda stage: _render(sides, stage, sweep),
                                writer.legacy_report)


def _side(spec: str, heads: dict[str, Side]) -> Side:
    """A side; a variant's from its sweep's side, read once (`heads`, by the spec before
    `#`)."""
    variant = identity.Spec.parse(spec).variant
    if variant is None:
        return load_side(spec)
    head = spec.rsplit("#", 1)[0]
    if head not in heads:
        heads[head] = load_side(head)
    return variant_side(heads[head], variant, spec)


WHOLE = ("# Every table of the sweep, each variant apart",
         "Each row's label ends in its variant (`#a`): no figure, interval or plot below pools "
         "two variants.")


def _render(sides: list[Side], out: Path, whole: Dataset | None = None) -> list[Path]:
    prepared = [tables.prepare(side.data) for side in sides]
    heads = [*(machine_line(LETTERS[i], s) for i, s in enumerate(sides)),
             # a side that is half a sweep, or lost damaged rows, says so (Dataset.gaps)
             *(f"- **Warning: {LETTERS[i]}**: {gap}." for i, s in enumerate(sides)
               for gap in s.data.gaps())]
    lines = [f"# {TITLE}", "", *heads, ""]
    written, shown = [], []
    for entry, table in tables_side_by_side():
        # each side's rows as the section selects them for its one-side report
        parts = [(LETTERS[i], table.build(entry.select(Context(side.data, fig)), side.data))
                 for i, (fig, side) in enumerate(zip(prepared, sides, strict=True))]
        name = table.name
        merged = merge(name, list(table.keys), parts)
        lines += [f"## {entry.heading(table.title)}", ""]
        if merged is None:
            lines += [f"_{NO_SIDE}._", ""]
            shown.append(Table(name, table.title, pd.DataFrame(), missing=NO_SIDE))
            continue
        path = out / f"{'variants_' if whole is not None else ''}{name}.csv"
        merged.to_csv(path, index=False)
        written.append(path)
        notes = [n for _letter, t in parts for n in t.notes]  # what the cells hold, once
        shown.append(Table(path.stem, table.title, merged, notes))
        lines += [*markdown_table(merged), "", *note_lines(notes), f"CSV: `{path.name}`", ""]
    page_whole = None
    if whole is not None:
        text, files, body = writer.whole(whole, out)
        lines += [WHOLE[0], "", WHOLE[1], "", *text.split("\n")[1:]]
        written += files
        page_whole = ([WHOLE[0].removeprefix("# "), WHOLE[1]], body)
    report = out / REPORT_NAME
    # text from the data is shown, never obeyed (bidi controls, raw HTML: report/escape.py)
    report.write_text("\n".join(escape.markdown(line) for line in lines).rstrip() + "\n",
                      encoding="utf-8")
    page = out / html_report.PAGE_NAME
    page.write_text(html_report.sides_page(TITLE, heads, _groups(sides), shown, page_whole),
                    encoding="utf-8")
    return [report, page, *written]


def _groups(sides: list[Side]) -> dict[str, str]:
    """What each side's column group says in its header: its name, and a variant's env and
    note."""
    out = {}
    for i, side in enumerate(sides):
        variant = _variant_words(side)
        out[LETTERS[i]] = f"`{side.name}`" + (f": {variant}" if variant else "")
    return out
