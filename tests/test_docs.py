"""Every page of the manual is tested as the README is: the README and each docs page
keep their links and anchors resolvable, their YAML blocks valid against the orchestrator's own
models, their Python blocks compilable, and every command they show a command the CLI parses
(a synopsis line: a real subcommand with real options). A link into a section that moved, or a
command whose option was renamed, fails here instead of misleading a reader.
"""

from __future__ import annotations

import argparse
import importlib.util
import re
import shlex
from pathlib import Path

import pytest

from orchestrator import cli
from orchestrator.data import dataset
from orchestrator.experiments import config
from orchestrator.hosts import model as hosts_model

from .conftest import PROJECT

PAGES = sorted([PROJECT / "README.md", *(PROJECT / "docs").glob("*.md")])
# every Markdown file of the project that may link into a page
LINKING = sorted({*PAGES, *(PROJECT / "docs").rglob("*.md"), PROJECT / "BENCHMARKS.md",
                  PROJECT / "bench_rust" / "README.md"})
LINK = re.compile(r"\[[^\]]*\]\(([^)\s]+)\)")
FENCE = re.compile(r"^```(\w*)\n(.*?)^```$", re.MULTILINE | re.DOTALL)
README_LINES = 160  # "about 150": the manual is in docs/


def _name(path: Path) -> str:
    return str(path.relative_to(PROJECT))


def slug(heading: str) -> str:
    """GitHub's anchor of a heading: lower case, punctuation dropped, spaces as hyphens."""
    text = re.sub(r"[^\w\- ]", "", heading.strip().lower())
    return text.replace(" ", "-")


def anchors(page: Path) -> set[str]:
    text = FENCE.sub("", page.read_text(encoding="utf-8"))
    seen: dict[str, int] = {}
    found = set()
    for heading in re.findall(r"^#{1,6} (.+)$", text, re.MULTILINE):
        base = slug(heading)
        count = seen.get(base, 0)
        seen[base] = count + 1
        found.add(base if count == 0 else f"{base}-{count}")
    return found


def code_blocks(page: Path) -> list[tuple[str, str]]:
    """(language, text) of each fenced block, and ("", line) for each indented code line."""
    text = page.read_text(encoding="utf-8")
    blocks = [(lang, body) for lang, body in FENCE.findall(text)]
    rest = FENCE.sub("", text)
    blocks += [("", line.strip()) for line in rest.splitlines()
               if line.startswith("    ") and not line.lstrip().startswith(("|", "-", "*"))]
    return blocks


def test_the_readme_is_a_readme() -> None:
    lines = (PROJECT / "README.md").read_text(encoding="utf-8").splitlines()
    assert len(lines) <= README_LINES, f"README.md has {len(lines)} lines: move the manual to docs/"
    # the two quick-start commands, exactly; .ci/run runs the second one's parts
    assert lines[2] == ("    ./setup.sh && .venv/bin/python -m orchestrator run experiments.yaml "
                        "&& .venv/bin/python -m orchestrator report")
    assert lines[3] == "    ./setup.sh --tests && .venv/bin/python -m pytest"
    ci = (PROJECT / ".ci" / "run").read_text(encoding="utf-8")
    assert lines[3].strip() in ci.splitlines(), ".ci/run is not README command 2 as it is"



def test_setup_left_the_modules_compiled() -> None:
    """setup.sh compiles every module to bytecode (as pip does and uv does not): where
    PYTHONDONTWRITEBYTECODE is set, no later process writes one, and each subprocess of a run
    or a test would compile pandas and the orchestrator from source again (BENCHMARKS.md)."""
    import pandas

    for source in (Path(pandas.__file__), PROJECT / "orchestrator" / "cli.py",
                   PROJECT / "bench_py" / "exec_gpu.py"):
        cached = Path(importlib.util.cache_from_source(str(source)))
        assert cached.is_file(), f"{source} has no bytecode ({cached}): run ./setup.sh"

def test_each_recipe_names_contract_tests_that_exist() -> None:
    """"Where a change goes": each recipe's `Contract: test_contract_X*` names tests that exist
    (in the file it cites, where it cites one), and there is one such line per recipe."""
    text = (PROJECT / "README.md").read_text(encoding="utf-8")
    recipes = re.findall(r"^- \*\*A new ", text, re.MULTILINE)
    named = re.findall(r"Contract: `(test_contract_\w+)\*`(?:\s*\(`(tests/[\w/]+\.py)`)?",
                       text)
    assert len(named) == len(recipes) == 5, named
    defined = {path: re.findall(r"^def (test_contract_\w+)\(", path.read_text(encoding="utf-8"),
                                re.MULTILINE)
               for path in (PROJECT / "tests").rglob("test_*.py")}
    for prefix, cited in named:
        where = [path for path, names in defined.items()
                 if any(name.startswith(prefix) for name in names)]
        assert where, f"README names {prefix}* but no test is called so"
        if cited:
            assert PROJECT / cited in where, f"{prefix}* is not in {cited}"


@pytest.mark.parametrize("page", LINKING, ids=_name)
def test_links_and_anchors_resolve(page: Path) -> None:
    broken = []
    for target in LINK.findall(page.read_text(encoding="utf-8")):
        if re.match(r"[a-z]+:", target):
            continue  # http(s), mailto: not this test's
        path, _, anchor = target.partition("#")
        where = (page.parent / path).resolve() if path else page
        if not where.exists():
            broken.append(f"{target}: no such file")
        elif anchor and where.suffix == ".md" and anchor not in anchors(where):
            broken.append(f"{target}: no heading with anchor #{anchor}")
    assert not broken, f"{_name(page)}: {broken}"


def test_anchors_named_anywhere_resolve() -> None:
    """`README.md#section` in code, scripts or tests (a hint in a message) names a real heading."""
    wanted = re.compile(r"([\w./-]+\.md)#([\w-]+)")
    sources = [p for folder in ("orchestrator", "tests", "scripts", "bench", "bench_py")
               for p in (PROJECT / folder).rglob("*") if p.suffix in (".py", ".sh", ".md")]
    broken = []
    for source in [*sources, PROJECT / "setup.sh"]:
        if source == Path(__file__):
            continue  # its own docstring's example
        for path, anchor in wanted.findall(source.read_text(encoding="utf-8")):
            page = next((c for c in (source.parent / path, PROJECT / path) if c.is_file()), None)
            if page is None or anchor not in anchors(page):
                broken.append(f"{_name(source)}: {path}#{anchor}")
    assert not broken, broken


def _yaml_checked(lang: str, body: str, tmp: Path) -> None:
    file = tmp / "block.yaml"
    file.write_text(body, encoding="utf-8")
    if re.search(r"^experiments:", body, re.MULTILINE):
        config.load(file)
    elif re.search(r"^hosts:", body, re.MULTILINE):
        hosts_model.load(file)
    else:
        raise AssertionError(f"a {lang} block that is neither an experiments nor a hosts file")


@pytest.mark.parametrize("page", PAGES, ids=_name)
def test_yaml_and_python_blocks_are_valid(page: Path, tmp_path: Path) -> None:
    for lang, body in code_blocks(page):
        if lang == "yaml":
            _yaml_checked(lang, body, tmp_path)  # a ConfigError names the block's line
        elif lang == "python":
            compile(body, f"{_name(page)} block", "exec")


def _subcommands(parser: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
    action = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    return dict(action.choices)


def commands(page: Path) -> list[str]:
    """Each `python -m ...` or `./script` a code block of the page shows, comments dropped."""
    found = []
    for _, body in code_blocks(page):
        for line in body.splitlines():
            line = line.split(" # ", 1)[0].strip()
            for part in line.split("&&"):
                part = re.sub(r"^([A-Z_]+=\S+ )+", "", part.strip())
                if re.match(r"(\S*python\S* -m |\./|scripts/)", part):
                    found.append(part)
    return found


def _problem(command: str) -> str | None:
    words = shlex.split(command)
    if words[0].startswith(("./", "scripts/")):
        return None if (PROJECT / words[0]).is_file() else "no such script"
    module, args = words[2], words[3:]
    if module != "orchestrator":
        return None if importlib.util.find_spec(module) else f"no module {module}"
    subs = _subcommands(cli._parser())
    if "[" in command or "..." in command or re.search(r"\b[A-Z]{2,}\b", command):
        # a synopsis: its subcommand and every option it names must exist
        if args[0] not in subs:
            return f"no subcommand {args[0]}"
        known = {o for a in subs[args[0]]._actions for o in a.option_strings}
        named = re.findall(r"(?<![\w-])--?[a-z][\w-]*", " ".join(args))
        unknown = [o for o in named if o not in known]
        return f"unknown options {unknown}" if unknown else None
    try:
        cli._parser().parse_args(args)
    except SystemExit:
        return "the CLI does not parse it"
    return None


@pytest.mark.parametrize("page", PAGES, ids=_name)
def test_every_command_shown_parses(page: Path) -> None:
    shown = commands(page)
    problems = {c: p for c in shown if (p := _problem(c))}
    assert not problems, f"{_name(page)}: {problems}"


def test_the_pages_show_commands() -> None:
    """The command test above reads something: the README's list and the GPU page's bundle."""
    assert len(commands(PROJECT / "README.md")) >= 12
    assert any("bundle experiments.yaml" in c for c in commands(PROJECT / "docs" / "gpu.md"))


def test_the_data_dictionary_names_every_dataset_column_in_order() -> None:
    text = (PROJECT / "docs" / "results.md").read_text(encoding="utf-8")
    table = text.split("## Data dictionary", 1)[1].split("\n#", 1)[0]
    named = re.findall(r"^\| `([a-z_0-9]+)` \|", table, re.MULTILINE)
    assert named == dataset.COLUMNS
