#!/usr/bin/env bash
# Issue 24's last program items on an H200, as parser fixtures (no network, no cargo; about
# 4 minutes, every command bounded by `timeout`):
#   OUT=/some/dir scripts/h200/evidence34.sh
# 1. burn (the CUDA bundle's build/bin/exec-gpu+cuda/exec-gpu) at 1024² (with --energy 5) and
#    256², --samples: the `# sm clock` line after each timed block, the energy block's too
# 2. JAX cuda mm at 1024², --precision default and highest: its `# sm clock` lines (no sync /
#    with sync, + sum().item(), kernel time (cupti))
# 3. JAX cuda accuracy at 256² and 1024², both precisions: `# kernel ... accuracy kernel (xla)`
#    (the compiled module's dot op) and `# kernel ... accuracy kernel time (cupti)` (its kernels)
# 4. the compiled modules' HLO text of the JAX product (bench_core/hlo.py's input) at both
#    precisions, and the parser's reading of every stdout (parsed.txt)
# Everything's stdout/stderr goes under $OUT (and $OUT/evidence34.tar.xz holds them all).
# JAX_DEVICE=cpu runs the JAX parts on the CPU (how the script is tried where there is no GPU).
set -uo pipefail
cd "$(dirname "$0")/../.."
: "${OUT:?set OUT to the folder for the results}"
PY=${PYTHON:-python3}
JAX_DEVICE=${JAX_DEVICE:-cuda}
mkdir -p "$OUT"
start=$(date +%s)
step() { echo "[$(( $(date +%s) - start )) s] $*" | tee -a "$OUT/steps.txt"; }
if [ -f build/bundle.tar.xz ] && [ ! -f build/.bundle-unpacked ]; then
    "$PY" -m tarfile -e build/bundle.tar.xz . && touch build/.bundle-unpacked
fi
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,clocks.applications.graphics \
    --format=csv > "$OUT/gpu.csv" 2>&1 || true

bin=$PWD/build/bin/exec-gpu+cuda/exec-gpu
if [ -x "$bin" ]; then
    (cd bench_rust/exec-gpu   # cubecl's cache beside the crate, as the orchestrator starts it
     step "burn 1024x1024 (energy 5 s)"
     timeout 90 "$bin" --device cuda --mode mm --shape 1024x1024 --reps 20 --samples \
         --energy 5 > "$OUT/burn-1024.out" 2> "$OUT/burn-1024.err" || echo "exit $? (burn 1024)"
     step "burn 256x256"
     timeout 60 "$bin" --device cuda --mode mm --shape 256x256 --reps 20 --samples \
         > "$OUT/burn-256.out" 2> "$OUT/burn-256.err" || echo "exit $? (burn 256)")
else
    step "no $bin: burn skipped (unpack the CUDA bundle first)"
fi

for p in default highest; do
    step "jax mm 1024x1024 $p"
    timeout 60 "$PY" bench_py/exec_jax.py --device "$JAX_DEVICE" --mode mm --shape 1024x1024 --reps 20 \
        --samples --precision "$p" > "$OUT/jax-mm-1024-$p.out" 2> "$OUT/jax-mm-1024-$p.err" \
        || echo "exit $? (jax mm $p)"
    for s in 256x256 1024x1024; do
        step "jax accuracy $s $p"
        timeout 45 "$PY" bench_py/exec_jax.py --device "$JAX_DEVICE" --mode accuracy --shape "$s" \
            --precision "$p" --out "$OUT/arrays" > "$OUT/jax-acc-${s%%x*}-$p.out" \
            2> "$OUT/jax-acc-${s%%x*}-$p.err" || echo "exit $? (jax accuracy $s $p)"
    done
done
rm -rf "$OUT/arrays"

step "jax HLO text"
timeout 45 "$PY" - "$OUT" "$JAX_DEVICE" > "$OUT/jax-hlo.err" 2>&1 <<'EOF' || echo "exit $? (jax hlo)"
import sys
from pathlib import Path

import jax
import jax.numpy as jnp
import numpy as np

out = Path(sys.argv[1])
a = np.ones((1024, 1024), np.float32)
gpu = jax.devices("gpu" if sys.argv[2] == "cuda" else "cpu")[0]
x, y = jax.device_put(a, gpu), jax.device_put(a, gpu)
for name, precision in (("default", None), ("highest", jax.lax.Precision.HIGHEST)):
    def matmul(a, b, precision=precision):
        return jnp.matmul(a, b, precision=precision)
    text = jax.jit(matmul).lower(x, y).compile().as_text()
    (out / f"jax-hlo-1024-{name}.txt").write_text(f"# jax {jax.__version__} on "
                                                  f"{gpu.device_kind}\n{text}")
EOF

step "parse"
for f in "$OUT"/*.out; do
    echo "== $(basename "$f")"
    "$PY" -c 'import sys
from orchestrator.data import parse
r = parse.parse_text(open(sys.argv[1], encoding="utf-8").read())
for f in r.figures:
    if f.method in ("sm_clock", "accuracy_kernel"):
        print(f.framework, f.method, f.method_text, f.stat, f.value, f.kernel)
for n, line in r.unknown:
    print("UNKNOWN", n, line)' "$f" 2>&1
done > "$OUT/parsed.txt"
grep -h "sm clock\|accuracy kernel" "$OUT"/*.out | head -40
grep -c UNKNOWN "$OUT/parsed.txt" | sed 's/^/unknown lines: /'
step "done"
tar -C "$OUT" -cJf "$OUT/evidence34.tar.xz" --exclude evidence34.tar.xz . 2>/dev/null || true
