"""Command line: parse arguments, call the plain functions, turn errors into exit codes.

Exit codes: 0 all good; 1 some run or build failed (everything else saved), or the results could
not be written; 2 nothing ran: bad input, with a one-line message naming what and where, or a
results folder in use by another orchestrator; 130 interrupted (finished runs saved, `run`
resumes).
"""

from __future__ import annotations

import argparse
import os
import shutil
import signal
import sys
from collections import Counter
from pathlib import Path
from typing import Any, get_args

from rich.console import Console
from rich.table import Table
from rich.text import Text

from orchestrator import programs
from orchestrator.data import outputs
from orchestrator.data.parse import parse_text, read_log
from orchestrator.errors import InputError, OrchestratorError
from orchestrator.experiments import config as config_mod
from orchestrator.experiments.config import Capability
from orchestrator.experiments.plan import PlannedRun, builds_needed
from orchestrator.records import BuildResult, Status
from orchestrator.run import carry
from orchestrator.run.machine import cpu_count
from orchestrator.run.sweep import Interrupted, Sweep, plan, reparse

PROJECT = Path(__file__).resolve().parent.parent
CAPABILITIES = list(get_args(Capability))
DEFAULT_RESULTS = Path("results")


def _executable(value: str) -> str:
    """An absolute path: programs start in other folders than this process, and a typo must
    fail here rather than turn every torch run into 'skipped'."""
    found = shutil.which(value)
    if found is None:
        raise argparse.ArgumentTypeError(f"no executable named {value!r}")
    return os.path.abspath(found)


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m orchestrator", description=__doc__)
    sub = p.add_subparsers(dest="command", required=True)

    def experiments(cmd: argparse.ArgumentParser) -> None:
        cmd.add_argument("experiments", type=Path, help="the experiments file (YAML)")
        cmd.add_argument("--only", nargs="+", metavar="NAME", help="only these experiments")
        cmd.add_argument("--python", default=sys.executable, type=_executable,
                         help="Python that runs bench_py (default: this one)")

    run = sub.add_parser("run", help="build and run the experiments (resumes automatically)")
    experiments(run)
    run.add_argument("--results", type=Path, default=DEFAULT_RESULTS, help="results folder")
    run.add_argument("--new", action="store_true", help="start a new sweep instead of resuming")
    run.add_argument("--retry-failed", action="store_true", help="run failed runs again")
    run.add_argument("--quiet", action="store_true", help="no progress output")
    run.add_argument("--hosts", type=Path, metavar="HOSTS.yaml",
                     help="run on these hosts over ssh instead of here (docs/hosts.md)")
    run.add_argument("--host", nargs="+", metavar="NAME", help="only these hosts of --hosts")
    run.add_argument("--detach", action="store_true",
                     help="with --hosts: start the sweeps and return; 'run' again re-attaches")
    run.add_argument("--poll", type=float, default=5.0, metavar="S", help=argparse.SUPPRESS)
    run.add_argument("--partial-report", type=Path, default=Path("report"), metavar="DIR",
                     help="while builds are still going on, a first report of the runs done "
                          "(default: report; `report` replaces it)")
    run.add_argument("--no-partial-report", action="store_true", help="no first report")
    plan = sub.add_parser("plan", help="what would run or be skipped, and why")
    experiments(plan)
    plan.add_argument("--results", type=Path, default=DEFAULT_RESULTS,
                      help="mark runs already done in this results folder")
    build = sub.add_parser("build", help="build the crates the experiments need, run nothing")
    experiments(build)
    assume = {"nargs": "+", "default": [], "choices": CAPABILITIES, "metavar": "CAP",
              "help": "treat these as present: 'cuda' adds to this machine's (build here for "
                      "a GPU machine); naming an OS (macos, linux) or an architecture (x86_64, "
                      "arm64) describes another machine, e.g. 'macos arm64 apple-silicon mps "
                      "metal' for a Mac: then it has only what is named (no cuda, no x86_64 "
                      f"unless named). One of: {', '.join(CAPABILITIES)}"}
    build.add_argument("--assume", **assume)
    plan.add_argument("--assume", **assume)
    bundle = sub.add_parser("bundle", help="binaries and wheels for a GPU machine without "
                                           "cargo or network (docs/gpu.md)")
    experiments(bundle)
    bundle.add_argument("--assume", **{**assume, "default": ["cuda"]})
    bundle.add_argument("--python-version", default="3.12", help="the other machine's Python")
    bundle.add_argument("--platform", default="manylinux2014_x86_64", help="its wheel platform")
    export = sub.add_parser("export", help="the dataset as CSV")
    export.add_argument("results", type=Path, nargs="?", default=DEFAULT_RESULTS,
                        help="results folder; FOLDER@SWEEP, FOLDER@HOST, FOLDER#VARIANT narrow "
                             "it (default: every host's latest sweep)")
    export.add_argument("--csv", type=Path, required=True, help="figures CSV (samples beside)")
    export.add_argument("--sweep", help="sweep id or host (default: every host's latest)")
    parse = sub.add_parser("parse", help="a captured stdout log into the same CSV")
    parse.add_argument("log", type=Path)
    parse.add_argument("--csv", type=Path, required=True)
    report = sub.add_parser("report", help="chapter tables (Markdown, CSV) and plots (PNG)")
    report.add_argument("results", type=Path, nargs="*", default=[DEFAULT_RESULTS],
                        help="results folder, or a captured log file; several (FOLDER@SWEEP "
                             "too): the chapter's tables side by side, one column group each")
    report.add_argument("--out", type=Path, default=Path("report"))
    report.add_argument("--sweep", help="sweep id (default: the latest)")
    comp = sub.add_parser("compare", help="a verdict per figure between two result sets "
                                          "(docs/compare.md)")
    for side in ("a", "b"):
        comp.add_argument(side, metavar=side.upper(),
                          help="results folder (latest sweep), FOLDER@SWEEP, FOLDER#VARIANT "
                               "(one side of a variants: A/B), or a captured log")
    comp.add_argument("--out", type=Path, default=Path("compare"))
    comp.add_argument("--min-effect", type=float, default=0.05, metavar="E",
                      help="smallest change that counts, as a fraction (default 0.05)")
    comp.add_argument("--correction", choices=["bh", "holm"], default="bh",
                      help="over all figures: Benjamini-Hochberg (default: at most 5%% of the "
                           "verdicts false) or Holm (strict: 5%% chance of any false verdict)")
    comp.add_argument("--unpaired", action="store_true",
                      help="two variants of one sweep: judge them as two independent samples "
                           "(not on per-round log ratios)")
    comp.add_argument("--fail-on", choices=["slower", "faster", "inconclusive"],
                      action="append", default=[], help="exit 1 when a figure has this verdict")
    hist = sub.add_parser("history", help="every figure across sweeps, its change points "
                                          "(docs/history.md)")
    hist.add_argument("results", nargs="+", metavar="RESULTS",
                      help="results folders (every sweep of each store) or FOLDER@SWEEP")
    hist.add_argument("--out", type=Path, default=Path("history"))
    hist.add_argument("--last", type=int, metavar="N", help="only the latest N sweeps")
    hist.add_argument("--min-effect", type=float, default=0.05, metavar="E",
                      help="smallest change that counts, as a fraction (default 0.05)")
    hist.add_argument("--correction", choices=["holm", "bh"], default="holm",
                      help="over all steps: Holm (family-wise) or Benjamini-Hochberg (FDR)")
    hist.add_argument("--fail-on", choices=["slower", "faster"], action="append", default=[],
                      help="exit 1 when a figure has this verdict at the last step")
    sub.add_parser("schema", help="print the experiments file's JSON Schema")
    merge = sub.add_parser("merge", help="several hosts' results folders into one store "
                                         "(keyed by host; docs/hosts.md)")
    merge.add_argument("out", type=Path, help="the merged results folder (created)")
    merge.add_argument("sources", nargs="+", metavar="[NAME=]FOLDER",
                       help="results folders; NAME= names the host (default: its hostname)")
    again = sub.add_parser("reparse", help="parse every stored run's raw output again "
                                           "(after a parser change)")
    again.add_argument("results", type=Path, nargs="?", default=DEFAULT_RESULTS)
    return p


def cmd_run(args: argparse.Namespace, console: Console) -> int:
    if args.hosts is not None:
        return cmd_run_hosts(args, console)
    if args.host or args.detach:
        raise InputError("--host and --detach go with --hosts HOSTS.yaml")
    from orchestrator.report import partial as report

    partial = None if args.no_partial_report else report.partial_writer(
        args.results, args.partial_report,
        lambda line, warn: console.print(Text(line, style="yellow" if warn else ""),
                                         highlight=False))
    sweep = Sweep(PROJECT, args.results, args.python, show=not args.quiet, on_partial=partial)
    summary = sweep.run(args.experiments, args.only, new=args.new,
                        retry_failed=args.retry_failed)
    if partial is not None:  # a partial report never outlives its sweep
        partial.finish(summary.sweep_id)
    verb = "resumed" if summary.resumed else "new"
    console.print(f"sweep {summary.sweep_id} ({verb}) in {args.results}")
    for failure in summary.failures:
        console.print(Text.assemble(("failed ", "red"), failure))
    return summary.exit_code


def cmd_run_hosts(args: argparse.Namespace, console: Console) -> int:
    from orchestrator.hosts import model, session

    hosts = model.load(args.hosts, args.host)
    config_mod.load(args.experiments)  # a bad experiments file is refused here, not N times
    passed = [*(["--only", *args.only] if args.only else []), *(["--new"] if args.new else []),
              *(["--retry-failed"] if args.retry_failed else [])]
    opts = session.Options(args.results, passed, args.detach, args.poll)
    outcomes = session.run_hosts(hosts, PROJECT, args.experiments, opts,
                                 lambda line: console.print(line, markup=False))
    for o in outcomes:
        console.print(Text(o.line, style="red" if o.code == 1 else ""))
    codes = {o.code for o in outcomes}
    return 130 if 130 in codes else 1 if 1 in codes else 0


def cmd_merge(args: argparse.Namespace, console: Console) -> int:
    from orchestrator.data import merge

    for done in merge.merge(args.out, [merge.Source.parse(s) for s in args.sources]):
        console.print(f"merged {done.line()}", markup=False)
    return 0


# runs `plan` shows as a table; past it, one tab-separated line each: rich took 2.8 s of CPU to
# lay out a table of 5000 runs (20,000 wrapped lines no one reads as a table; bench figure 6)
PLAN_TABLE = 1000


def cmd_plan(args: argparse.Namespace, console: Console) -> int:
    _config, planned = plan(args.experiments, args.only, args.python, args.assume)
    rows = plan_rows(planned, _done_in(args.results))
    counts: Counter[str] = Counter({"run": 0, "skip": 0, "done": 0})
    counts.update(row[2] for row in rows)
    if len(rows) <= PLAN_TABLE:
        table = Table("experiment", "run", "will", "why", title=str(args.experiments))
        for row in rows:
            table.add_row(*row)
        console.print(table)
    else:
        console.print(f"{args.experiments}: {len(rows)} runs, more than the {PLAN_TABLE} shown "
                      "as a table: one line each, experiment, run, will and why tab-separated",
                      markup=False)
        # as written: rich would turn the tabs into spaces
        console.file.write("".join("\t".join(row) + "\n" for row in rows))
    console.print(", ".join(f"{n} {w}" for w, n in counts.items()))
    if set(args.assume) & {"macos", "linux", "x86_64", "arm64"}:
        console.print(f"'auto' threads are this machine's {cpu_count()} cores here; there, "
                      "that machine's own count")
    return 0


def plan_rows(planned: list[PlannedRun],
              done: dict[str, str]) -> list[tuple[str, str, str, str]]:
    """(experiment, run, will, why) for each planned run: the rows `plan` prints."""
    rows = []
    for p in planned:
        if p.run.run_id in done:
            will, why = "done", f"{done[p.run.run_id]} in the latest sweep"
        elif p.skip_reason:
            will, why = "skip", p.skip_reason
        else:
            will = "run"
            why = "; ".join(w for w in ("expected to fail" if p.expect_failure else "",
                                        p.assumed or "") if w)
        rows.append((p.run.experiment, p.run.describe().split(": ", 1)[1], will, why))
    return rows


def _done_in(results: Path) -> dict[str, str]:
    from orchestrator.data.store import Store

    store = Store(results)
    if not store.path.exists() and not store.path.is_symlink():  # a dangling link: refused
        return {}
    with store.reading():
        latest = store.latest_sweep()
        return store.finished_runs(latest) if latest else {}


def cmd_build(args: argparse.Namespace, console: Console) -> int:
    config, planned = plan(args.experiments, args.only, args.python, args.assume)
    builder = programs.builders(PROJECT)  # each build by its program's build system
    results = [builder.build(name, b) for name, b in builds_needed(config, planned).items()]
    return _show_builds(results, console)


def _show_builds(results: list[BuildResult], console: Console) -> int:
    failed = 0
    for result in results:
        if result.status == Status.OK:
            console.print(f"ok {result.name}: {result.binary} ({result.outcome})", markup=False)
        else:
            failed += not result.expect_failure
            console.print(Text.assemble((f"{result.outcome} ", "red"),
                                        f"{result.name}: {result.error}"))
    return 1 if failed else 0


def cmd_bundle(args: argparse.Namespace, console: Console) -> int:
    config, planned = plan(args.experiments, args.only, args.python, args.assume)
    made = carry.bundle(PROJECT, config, planned, args.python_version, args.platform)
    code = _show_builds(made.builds, console)
    size = made.archive.stat().st_size / 2**20
    console.print(f"{made.archive.relative_to(PROJECT)} ({size:.1f} MiB): the binaries and "
                  f"{len(made.wheels)} wheels for Python {args.python_version}; copy the project "
                  f"with it, then run there: scripts/run-offline.sh {args.experiments}",
                  markup=False)
    return code


def cmd_export(args: argparse.Namespace, console: Console) -> int:
    # pandas: a second per start-up that `run` and `plan` never need
    from orchestrator.data import dataset, identity

    inputs = outputs.Inputs.of(_sources([args.results]))
    dataset.check_export(args.csv, inputs)  # before a second of loading
    # every host's latest sweep (a merged store), each with its host, sweep_id and variant
    parts = [identity.Spec.parse(p) for p in
             identity.parts(str(args.results), args.sweep, split_variants=False)]
    loaded = []
    for named in parts:
        data = dataset.load(named.folder, named.at)
        if named.variant:
            data = identity.select_variant(data, named.variant, str(named.folder))
        _warn_of_gaps(data, console)
        loaded.append(data)
    scope = _latest_alone(parts[0], loaded[0]) if len(parts) == 1 else None
    if scope:
        console.print(Text.assemble(("note: ", "yellow"), scope.replace("this report shows",
                                                                         "exported")))
    figures, samples = dataset.export_csv(loaded if len(loaded) > 1 else loaded[0], args.csv,
                                          inputs)
    told = f" ({len(parts)} hosts' latest sweeps)" if len(parts) > 1 else ""
    console.print(f"wrote {figures} and {samples}{told}")
    return 0


def _warn_of_gaps(data: Any, console: Console) -> None:
    """A `dataset.Dataset` that is not the whole sweep says so: a sweep still running,
    interrupted or killed, and the damaged rows of the store left out."""
    for line in data.gaps():
        console.print(Text.assemble(("warning: ", "yellow"), line))


def cmd_parse(args: argparse.Namespace, console: Console) -> int:
    from orchestrator.data import dataset

    inputs = outputs.Inputs.of([args.log])
    dataset.check_export(args.csv, inputs)  # before the log is read
    parsed = parse_text(read_log(args.log))
    figures, samples = dataset.export_csv(dataset.from_parse(parsed, args.log.name), args.csv,
                                          inputs)
    console.print(f"{args.log}: {parsed.line_count} lines, {len(parsed.figures)} figures, "
                  f"{len(parsed.unknown)} unknown lines kept out; wrote {figures} and {samples}")
    return 0


def cmd_report(args: argparse.Namespace, console: Console) -> int:
    from orchestrator.data import dataset, identity
    from orchestrator.report import writer as report
    from orchestrator.report.compare import side_by_side

    if len(args.results) > 1:
        if args.sweep:
            raise InputError("--sweep names one sweep; with several sides write FOLDER@SWEEP")
        # each side's own parts: a merged store's hosts, a sweep's variants, never pooled
        sides = [part for p in args.results for part in identity.parts(str(p))]
        written = side_by_side.write_many(sides, args.out,
                                          outputs.Inputs.of(_sources(args.results)))
        console.print(f"wrote {len(written)} files to {args.out}")
        return 0
    (results,) = args.results
    if results.exists() and not results.is_dir():  # a file, or a device or pipe: a log
        data = dataset.from_parse(parse_text(read_log(results)), results.name)
        written = report.write(data, args.out, inputs=outputs.Inputs.of([results]))
        console.print(f"wrote {len(written)} files to {args.out}")
        return 0
    parts = identity.parts(str(results), args.sweep)
    if len(parts) > 1:  # hosts of a merged store, variants of a sweep: side by side, apart
        console.print(f"{len(parts)} parts side by side: {', '.join(parts)}", markup=False)
        named = [identity.Spec.parse(p) for p in parts]
        # one sweep's variants: its every table follows, each variant's rows apart
        whole = all(n.variant for n in named) and len({(n.folder, n.at) for n in named}) == 1
        written = side_by_side.write_many(parts, args.out,
                                          outputs.Inputs.of(_sources(parts)), whole)
        console.print(f"wrote {len(written)} files to {args.out}")
        return 0
    named = identity.Spec.parse(parts[0])
    data = dataset.load(named.folder, named.at)
    if named.variant:
        data = identity.select_variant(data, named.variant, str(named.folder))
    _warn_of_gaps(data, console)
    scope = _latest_alone(named, data)
    if scope:
        console.print(Text.assemble(("note: ", "yellow"), scope))
    written = report.write(data, args.out, inputs=outputs.Inputs.of([named.folder]),
                           scope=scope)
    console.print(f"wrote {len(written)} files to {args.out}")
    return 0


def _latest_alone(named: Any, data: Any) -> str | None:
    """Where a store holds other sweeps and none was named, the report says it shows the
    latest (`identity.Spec`, `dataset.Dataset`)."""
    from orchestrator.data.store import Store

    if named.at is not None or data.sweep is None:
        return None
    with Store(named.folder).reading() as store:
        count = len(store.sweeps())
    if count < 2:
        return None
    return (f"this report shows sweep {data.sweep.sweep_id}, the latest of the {count} sweeps "
            f"in {named.folder}; name another with --sweep ID or {named.folder}@ID")


def _sources(specs: list[Path] | list[str]) -> list[Path]:
    """What each side reads: a results folder or log; FOLDER@SWEEP and FOLDER#VARIANT read
    FOLDER."""
    paths = []
    for spec in map(str, specs):
        path = Path(spec)
        if not path.exists() and "#" in spec:
            spec, path = spec.rsplit("#", 1)[0], Path(spec.rsplit("#", 1)[0])
        paths.append(Path(spec.rsplit("@", 1)[0]) if not path.exists() and "@" in spec
                     else path)
    return paths


def cmd_compare(args: argparse.Namespace, console: Console) -> int:
    from orchestrator.report.compare import output as compare_output
    from orchestrator.report.compare import sides as compare_sides
    from orchestrator.report.compare import verdicts as compare

    result = compare.compare(compare_sides.one_part(args.a), compare_sides.one_part(args.b),
                             args.min_effect, args.correction, not args.unpaired)
    written = compare_output.write(result, args.out,
                                   outputs.Inputs.of(_sources([args.a, args.b])))
    # a table for a wide terminal; piped (CI logs) rich would squeeze it into 80 columns
    compare_output.show(result, Console(highlight=False,
                                        width=None if sys.stdout.isatty() else 160))
    console.print(f"wrote {', '.join(str(p) for p in written)}", markup=False)
    return 1 if any(result.verdicts()[v] for v in args.fail_on) else 0


def cmd_history(args: argparse.Namespace, console: Console) -> int:
    from orchestrator.report.history import output as history

    return history.run(args.results, args.out, args.last, args.min_effect, args.correction,
                       args.fail_on, console, _sources(args.results))


def cmd_reparse(args: argparse.Namespace, console: Console) -> int:
    runs, figures, damage = reparse(args.results)
    for line in damage.lines():  # left as they are: reparse rewrites figures, not runs
        console.print(Text.assemble(("warning: ", "yellow"), line))
    console.print(f"{args.results}: {runs} runs parsed again, {figures} figures", markup=False)
    return 0


def cmd_schema(args: argparse.Namespace, console: Console) -> int:
    print(config_mod.json_schema())
    return 0


COMMANDS = {"run": cmd_run, "plan": cmd_plan, "build": cmd_build, "bundle": cmd_bundle,
            "export": cmd_export, "reparse": cmd_reparse,
            "parse": cmd_parse, "report": cmd_report, "schema": cmd_schema,
            "compare": cmd_compare, "history": cmd_history, "merge": cmd_merge}


def _terminate(signum: int, frame: object) -> None:
    raise KeyboardInterrupt  # SIGTERM stops a sweep the same careful way as Ctrl-C


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    console = Console(stderr=True, highlight=False, soft_wrap=True)
    # put back after: a caller that goes on (a test worker, a notebook) keeps its own SIGTERM
    previous = signal.signal(signal.SIGTERM, _terminate)
    try:
        return COMMANDS[args.command](args, console)
    except Interrupted as exc:
        console.print(Text(str(exc), style="yellow"))
        return exc.exit_code
    except OrchestratorError as exc:
        console.print(Text.assemble(("error: ", "red"), str(exc)), soft_wrap=True)
        return exc.exit_code
    except KeyboardInterrupt:
        console.print("[yellow]interrupted[/yellow]")
        return 130
    finally:
        signal.signal(signal.SIGTERM, previous)
