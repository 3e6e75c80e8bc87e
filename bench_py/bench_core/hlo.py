"""What computed a JAX product, read from its compiled executable (``jax.jit(f).lower(a,
b).compile().as_text()``: XLA's optimized HLO), for the accuracy mode's ``# kernel ... accuracy
kernel (xla)`` line (docs/LINES.md). JAX's only evidence on the CPU (no CUPTI there) and, on
CUDA, the op beside the kernels CUPTI saw.

The ops that compute a dot, each named by what runs it:

* a custom call whose target is a library's matmul (``__cublas$gemm``,
  ``__cublas$lt$matmul``, ``__onednn$matmul``, ...): the target, and from its backend config
  the precision config (``operand_precision``, ``algorithm``) and cuBLAS's
  ``selected_algorithm``;
* a fusion of kind ``kCustom`` whose fused computation holds the dot (``__ynn_fusion``:
  XNNPACK's YNN on the CPU; ``__triton_gemm`` on the GPU, with its tile config): the fusion's
  kind, and the dot's own ``operand_precision`` / ``algorithm``;
* any other dot: ``dot`` (XLA's own emitter), or ``dot in a kLoop fusion``.

Operand and result element types come with each (``f32 x f32 -> f32``). Nothing here imports
jax: the text is all it needs, so it is tested on captured text.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass

# `%name = TYPE opcode(operands), attrs` (ROOT optional; TYPE a shape or a tuple of shapes)
_INSTRUCTION = re.compile(
    r"\s*(?:ROOT\s+)?%?(?P<name>[\w.\-]+)\s*=\s*(?P<type>\([^=]*?\)|\S+)\s+"
    r"(?P<op>[\w\-]+)\((?P<args>[^)]*)\)(?P<attrs>.*)")
# `%fused_computation (p: f32[2,2]) -> f32[2,2] {` and `ENTRY %main.1 (...) -> ... {`
_COMPUTATION = re.compile(r"\s*(?:ENTRY\s+)?%?(?P<name>[\w.\-]+)\s*(?:\(.*\))?.*\{\s*$")
_ELEMENT = re.compile(r"\b([a-z]+[0-9]*(?:e[0-9]+m[0-9]+\w*)?)\[")
_CALLS = re.compile(r"\bcalls=%?([\w.\-]+)")
_KIND = re.compile(r"\bkind=(k\w+)")
_TARGET = re.compile(r'custom_call_target="([^"]+)"')
_OPERAND_PRECISION = re.compile(r"\boperand_precision=\{([^}]*)\}")
_ALGORITHM = re.compile(r"\balgorithm=(\w+)")
# a library matmul among custom calls (not a sort, a top-k, a cuDNN convolution)
_MATMUL_TARGET = re.compile(r"gemm|matmul|\$dot|blas", re.IGNORECASE)


@dataclass(frozen=True)
class _Instruction:
    computation: str
    name: str
    type: str
    op: str
    args: str
    attrs: str


def _instructions(text: str) -> Iterator[_Instruction]:
    computation = ""
    for line in text.splitlines():
        if line.rstrip().endswith("{") and " = " not in line:
            found = _COMPUTATION.match(line)
            computation = found.group("name") if found else ""
            continue
        found = _INSTRUCTION.match(line)
        if found is not None:
            yield _Instruction(computation, *found.group("name", "type", "op", "args", "attrs"))


def _element(shape: str) -> str:
    """`f32` of `f32[256,256]{1,0}`; the first array of a tuple (cuBLAS adds a workspace)."""
    found = _ELEMENT.search(shape)
    return found.group(1) if found else "?"


_Types = dict[tuple[str, str], str]  # (computation, instruction) -> its type


def _operand_types(ins: _Instruction, types: _Types) -> list[str]:
    """Element types of the operands, printed inline (`f32[2,2]{1,0} %x`) or looked up."""
    out = []
    for arg in (a.strip() for a in ins.args.split(",") if a.strip()):
        if "[" in arg:
            out.append(_element(arg))
        else:
            out.append(_element(types.get((ins.computation, arg.lstrip("%")), "")))
    return out


def backend_config(attrs: str) -> dict[str, object]:
    """The JSON object after `backend_config=` (brace-matched; {} where absent or not JSON)."""
    start = attrs.find("backend_config=")
    if start < 0:
        return {}
    text = attrs[start + len("backend_config="):]
    if text.startswith('"'):  # the older, quoted form: "{\"alpha_real\":1,...}"
        end = re.match(r'"((?:[^"\\]|\\.)*)"', text)
        text = json.loads(f'"{end.group(1)}"') if end else ""
    depth = 0
    for i, char in enumerate(text):
        depth += {"{": 1, "}": -1}.get(char, 0)
        if depth == 0:
            try:
                found = json.loads(text[: i + 1])
            except ValueError:
                return {}
            return found if isinstance(found, dict) else {}
    return {}


def _find(config: object, key: str) -> object:
    """The first value of `key` anywhere in a nested backend config."""
    if isinstance(config, dict):
        if key in config:
            return config[key]
        config = list(config.values())
    if isinstance(config, list):
        for item in config:
            if (found := _find(item, key)) is not None:
                return found
    return None


def _precision_words(precision: object, algorithm: object) -> list[str]:
    words = []
    if isinstance(precision, list | tuple) and precision:
        values = [str(p).lower() for p in precision]
        words.append("precision " + (values[0] if len(set(values)) == 1 else ",".join(values)))
    if algorithm and str(algorithm).upper() not in ("ALG_UNSET", "UNSET"):
        words.append(f"algorithm {str(algorithm).lower().removeprefix('alg_')}")
    return words


def _dot_words(dot: _Instruction, types: _Types) -> list[str]:
    """`f32 x f32 -> f32`, `precision default` (HLO prints none: default), `algorithm ...`."""
    operands = " x ".join(_operand_types(dot, types))
    found = _OPERAND_PRECISION.search(dot.attrs)
    precision = [p.strip() for p in found.group(1).split(",")] if found else ["default"]
    algorithm = _ALGORITHM.search(dot.attrs)
    return [f"{operands} -> {_element(dot.type)}",
            *_precision_words(precision, algorithm.group(1) if algorithm else None)]


def _custom_call_words(call: _Instruction, types: _Types) -> list[str]:
    config = backend_config(call.attrs)
    operands = _operand_types(call, types)[:2]
    words = [f"{' x '.join(operands)} -> {_element(call.type)}"]
    precision = _find(config, "precision_config")
    if isinstance(precision, dict):
        words += _precision_words(precision.get("operand_precision"), precision.get("algorithm"))
    selected = _find(config, "selected_algorithm")
    if selected is not None:
        words.append(f"selected algorithm {selected}")
    return words


def _fusion_name(fusion: _Instruction) -> str:
    """`__triton_gemm (block 64x64x32, split_k 1, stages 4, warps 4)`, `__ynn_fusion`, or
    `dot in a kLoop fusion` for XLA's own fusions."""
    config = backend_config(fusion.attrs)
    kind = _find(config, "kind")
    if not isinstance(kind, str) or not kind.startswith("__"):
        found = _KIND.search(fusion.attrs)
        return f"dot in a {found.group(1) if found else 'fusion'}"
    tiles = _find(config, "triton_gemm_config")
    if isinstance(tiles, dict) and tiles:
        size = "x".join(str(tiles.get(k, "?")) for k in ("block_m", "block_n", "block_k"))
        extra = [f"{key} {tiles[key]}" for key in ("split_k", "num_stages", "num_warps")
                 if key in tiles]
        return f"{kind} (block {size}" + "".join(f", {e}" for e in extra) + ")"
    return kind


def dot_ops(text: str) -> list[tuple[str, int]]:
    """(what computed a dot, how many such ops) for every dot of the compiled module, in
    order of first appearance; [] where the module holds none."""
    instructions = list(_instructions(text))
    types = {(ins.computation, ins.name): ins.type for ins in instructions}
    callers = {}
    for ins in instructions:
        if ins.op == "fusion" and (found := _CALLS.search(ins.attrs)):
            callers[found.group(1)] = ins
    names: list[str] = []
    for ins in instructions:
        if ins.op == "custom-call":
            target = _TARGET.search(ins.attrs)
            if target and _MATMUL_TARGET.search(target.group(1)):
                words = _custom_call_words(ins, types)
                names.append(f"{target.group(1)} ({', '.join(words)})")
        elif ins.op == "dot":
            fusion = callers.get(ins.computation)
            what = _fusion_name(fusion) if fusion is not None else "dot"
            words = ", ".join(_dot_words(ins, types))
            if what.endswith(")"):  # the fusion's own parentheses take the dot's words too
                names.append(f"{what[:-1]}, {words})")
            else:
                names.append(f"{what} ({words})")
    return list(Counter(names).items())
