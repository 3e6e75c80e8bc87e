"""No framework named outside its folder: an ast scan of every string constant in the package.

A framework is a folder behind a complete Program (programs/): its names ('torch', 'burn',
'PyTorch', 'Flex', 'cubecl', 'JAX') and the units of its build system (burn's crates
'exec-gpu', ...: `programs.units()`) reach the rest of the package only through the registry.
Docstrings and comments are prose and not scanned; what is left is listed below, each module
with why its constants stay (printed wording kept byte-identical, stored column names, an
on-disk name). A new constant naming a framework outside programs/ fails this test: read it
from the Program instead, or add it here with its reason.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

from orchestrator import programs

from .conftest import PROJECT

PACKAGE = PROJECT / "orchestrator"
# the frameworks' names, then every unit a build system builds (the crates' names)
NAMES = re.compile("|".join(["torch|burn|pytorch|flex|cubecl|jax",
                             *(re.escape(unit) for unit in programs.units())]), re.IGNORECASE)
# module -> (why its constants stay, the first 40 characters of each allowed constant)
ALLOWED: dict[str, tuple[str, tuple[str, ...]]] = {
    "data/sweep_runs.py": (
        ('stored dataset column names (max_diff_torch_cpu, inputs_match_torch_cpu): the '
         'export format, unchanged by rule'),
        (
            'inputs_match_torch_cpu',
            'max_diff_torch_cpu',
        ),
    ),
    "data/line_forms.py": (
        "the accuracy line's printed text (docs/LINES.md: 'max|x - torch cpu|')",
        (
            '(?: +max\\|x - torch cpu\\| = ',
        ),
    ),
    "data/parser.py": (
        ("the accuracy line's printed text (docs/LINES.md: 'max|x - torch cpu|') and its "
         'stored column name'),
        (
            'max_diff_torch_cpu',
            'max|x - torch cpu|',
        ),
    ),
    "report/arithmetic_checks.py": (
        ("the mixed-arithmetic note's printed wording (golden), which names the reference's "
         'precision key'),
        (
            ' (a torch target with `precision: tf32`)',
            ': these ratios compare two computations,',
            '; no PyTorch ',
        ),
    ),
    "report/cache_report.py": (
        ("printed wording of the cache tables (golden): what 'cold' means for cubecl's "
         'autotune cache'),
        (
            'A priming run is the first process of a ',
            'Each cell: min / median / max over the c',
            'cold (no cubecl cache)',
        ),
    ),
    "vocabulary.py": (
        ("the CUPTI clock's printed description (bench_py measures it with torch.profiler) and "
         "two stored stat names (max_diff_torch_cpu, inputs_match_torch_cpu: stored columns, "
         "renaming them is a store migration)"),
        (
            "GPU time of the matmul's kernels, torch.",
            'inputs_match_torch_cpu',
            'max_diff_torch_cpu',
        ),
    ),
    "report/first_call_breakdown.py": (
        ("the printed note naming JAX's jit/lower/compile calls (the table's only program "
         'today)'),
        (
            'JAX: `jax.jit(f).lower(a, b)`, `.compile',
        ),
    ),
    "report/summary.py": (
        "the stored column inputs_match_torch_cpu (the findings' same-numbers lesson)",
        (
            'inputs_match_torch_cpu',
        ),
    ),
    "report/sections/accuracy.py": (
        ("printed section descriptions (golden prose, the docs engineer's section model); the "
         "stored column inputs_match_torch_cpu and its printed finding"),
        (
            ': sin/cos inputs not bit-equal to torch ',
            'c = a @ b with a = sin(k), b = cos(k) in',
            'inputs_match_torch_cpu',
        ),
    ),
    "report/sections/clocks.py": (
        "printed section descriptions (golden prose, the docs engineer's section model)",
        ('Per GPU target, every clock beside the k',),
    ),
    "report/sections/cpu.py": (
        "printed section descriptions (golden prose, the docs engineer's section model)",
        ('Minimum time of `with sync` (else `no sy',),
    ),
    "report/sections/first_call.py": (
        "printed section descriptions (golden prose, the docs engineer's section model)",
        ('The first matmul of each process: when t',),
    ),
    "report/sections/sizes.py": (
        "printed section descriptions (golden prose, the docs engineer's section model)",
        ("Per target, the matmul's time at each si",),
    ),
    "report/sections/statistics.py": (
        "printed section descriptions (golden prose, the docs engineer's section model)",
        ('Every time figure over its processes, th',),
    ),
    "report/sections/warmup.py": (
        "printed section descriptions (golden prose, the docs engineer's section model)",
        ('burn: one warm-up without sync (result d',),
    ),
    "report/tables.py": (
        "stored accuracy column names and their printed headers (golden)",
        (
            "inputs = torch cpu's",
            'inputs_match_torch_cpu',
            'max_diff_torch_cpu',
            'max|x - torch cpu|',
        ),
    ),
    "run/cache_lock.py": (
        ('the on-disk lock file name: renaming it would let an older orchestrator and this '
         'one hold the same cache at once'),
        (
            'cubecl-cache-',
        ),
    ),
    "run/driver_cache.py": (
        ("the recorded 'why' of a cold driver cache (stored in run records), citing "
         "docs/CACHES.md's cubecl measurement"),
        (
            'docs/CACHES.md: a warm driver JIT cache ',
        ),
    ),
    "experiments/targets.py": (
        'JSON-schema descriptions (the schema output stays byte-identical)',
        (
            "name under 'builds' (burn only)",
            "torch: the f32 matmul arithmetic, 'fp32'",
        ),
    ),
}


def _docstrings(tree: ast.AST) -> set[int]:
    kinds = (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)
    return {id(node.body[0].value) for node in ast.walk(tree) if isinstance(node, kinds)
            and node.body and isinstance(node.body[0], ast.Expr)
            and isinstance(node.body[0].value, ast.Constant)}


def framework_constants(package: Path) -> dict[str, set[str]]:
    """module (package-relative) -> the string constants naming a framework, docstrings left
    out, for every module outside programs/."""
    found: dict[str, set[str]] = {}
    for path in sorted(package.rglob("*.py")):
        module = path.relative_to(package).as_posix()
        if module.startswith("programs/"):
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"))
        docs = _docstrings(tree)
        hits = {node.value[:40] for node in ast.walk(tree)
                if isinstance(node, ast.Constant) and isinstance(node.value, str)
                and id(node) not in docs and NAMES.search(node.value)}
        if hits:
            found[module] = hits
    return found


def test_no_framework_literal_outside_programs_but_the_listed_ones() -> None:
    found = framework_constants(PACKAGE)
    unlisted = {m: sorted(c - set(ALLOWED.get(m, ("", ()))[1])) for m, c in found.items()}
    assert {m: c for m, c in unlisted.items() if c} == {}, (
        "read these from the Program (programs/), or list them with a reason")


def test_every_listed_constant_is_still_there() -> None:
    """The list shrinks with the code: an entry whose constant is gone is removed."""
    found = framework_constants(PACKAGE)
    stale = {m: sorted(set(c) - found.get(m, set())) for m, (_why, c) in ALLOWED.items()}
    assert {m: c for m, c in stale.items() if c} == {}


def test_the_scan_sees_a_literal(tmp_path: Path) -> None:
    """The scan is not blind: a module naming burn in code is found, its docstring is not."""
    (tmp_path / "run").mkdir()
    (tmp_path / "run" / "odd.py").write_text(
        '"""burn\'s cache, in prose."""\nNAME = "burn"\n', encoding="utf-8")
    assert framework_constants(tmp_path) == {"run/odd.py": {"burn"}}


def test_the_scan_sees_a_crate_name(tmp_path: Path) -> None:
    """A build system's unit is a framework's name too: a crate spelled outside programs/."""
    assert "exec-amx" in programs.units()
    (tmp_path / "experiments").mkdir()
    (tmp_path / "experiments" / "odd.py").write_text('CRATES = ("exec-amx",)\n',
                                                      encoding="utf-8")
    assert framework_constants(tmp_path) == {"experiments/odd.py": {"exec-amx"}}
