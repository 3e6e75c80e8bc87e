"""Putting a run into words: every name the report gives a framework, build, device or run.

One place, so the methods table, the CPU table, the ratios, the plots and the list of failed
runs call the same run the same thing: 'PyTorch mps', 'burn Flex + x86-v4, 8 threads',
'burn cuda, process 2, cold cache'. Program titles come from the registry (programs/).
"""

from __future__ import annotations

from typing import Any

import pandas as pd

from orchestrator import programs


def framework_name(framework: str) -> str:
    """'PyTorch' for torch: each program's own title (programs/)."""
    program = programs.active().by_name.get(framework)
    return program.title if program is not None else framework


def column_name(framework: str, label: str) -> str:
    """'PyTorch mps', 'burn metal': the name of one framework's device in a table."""
    return " ".join(p for p in (framework_name(framework), label) if p)


def cpu_build_name(framework: str, label: str) -> str:
    """The chapter's row names: 'PyTorch CPU', 'burn Flex, template', 'burn Flex + x86-v4'."""
    base, tag = label.split(" [", 1) if " [" in label else (label, "")
    if tag:  # a build of its own: keep its tag visible next to the chapter's name
        return f"{cpu_build_name(framework, base)} [{tag}"
    reference = programs.reference()  # the chapter's 'PyTorch CPU'
    if reference is not None and (framework, label) == (reference[0].name, reference[1]):
        return f"{reference[0].title} {label.upper()}"
    program = programs.active().by_name.get(framework)
    names = program.naming.build_names if program is not None else {}
    prefixes = program.naming.build_prefixes if program is not None else {}
    if label in names:  # the program's own CPU builds ('burn Flex, template')
        return names[label]
    for prefix, name in prefixes.items():
        if label.startswith(prefix):
            return name + label.removeprefix(prefix)
    return column_name(framework, label)


def accuracy_build_name(framework: str, label: str) -> str:
    """'burn flex(template)' from a stored row, 'burn flex template' as a log printed it."""
    if not framework or label.split(" ", 1)[0] in programs.active().by_name:
        return label
    return f"{framework} {label}"


def threads_column(threads: int) -> str:
    return "1 thread" if threads == 1 else f"{threads} threads"


def run_name(row: pd.Series, context: bool = False) -> str:
    """'burn metal', 'burn Flex + x86-v4, 8 threads'; with `context`, a later process and the
    cache state too, which tell the first-call experiment's processes apart."""
    if row["device"] != "cpu":
        name = column_name(row["framework"], row["label"])
        if context and pd.notna(row["process"]) and row["process"] > 1:
            name += f", process {row['process']}"
        return name + (f", {row['cache']} cache" if context and row["cache"] else "")
    threads = f", {threads_column(int(row['threads_key']))}" if pd.notna(row["threads_key"]) \
        else ""
    return cpu_build_name(row["framework"], row["label"]) + threads


def group_name(framework: str, label: str, process: object, cache: str) -> str:
    name = column_name(framework, label)
    run = f"process {process}" if pd.notna(process) else ""
    state = f"{cache} cache" if cache else ""
    return "\n".join(p for p in (name, run, state) if p)


def describe_run(row: pd.Series) -> str:
    """'burn accelerate flex, threads 8, cold cache': what the run was meant to measure."""
    text = " ".join(p for p in (as_text(row["framework"]), as_text(row["device"])) if p)
    if as_text(row["build"]):
        text += f" (build {as_text(row['build'])})"
    for col, fmt in (("threads_requested", "threads {}"), ("cache", "{} cache"),
                     ("warmup", "warm-up {}"), ("process", "process {}")):
        value = as_text(row[col])
        if value and not (col == "process" and value == "1"):  # most runs are process 1
            text += ", " + fmt.format(value)
    if row.get("role") == "priming":
        text += " (priming run)"
    if row.get("role") == "profile":  # the same run again under Nsight Compute
        text += " (profile run, ncu)"
    return text


def as_text(value: Any) -> str:
    """A cell as text: '' for no value."""
    return "" if value is None or pd.isna(value) else str(value)
