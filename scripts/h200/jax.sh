#!/usr/bin/env bash
# JAX rows on the H200 with the machine's own JAX (issue 26). Runs from the repo root; writes
# everything under $OUT; about 2-4 minutes. What it records:
#   mm-default.log / mm-highest.log    every JAX line on cuda (kernel time from JAX's profiler),
#                                      kernels-*.json the profiler events (a parser fixture)
#   acc-default/ acc-highest/          a, b, c arrays; tf32-evidence.txt: the default's error
#                                      beside what TF32 rounding of the inputs predicts
#   cache-p{1,2}-{default,zero}.log    persistent compilation cache, two processes each, a
#                                      fresh folder and a fresh CUDA_CACHE_PATH per pair, at
#                                      JAX's default admission threshold and at 0; cache-*.ls
#   ncu-*.csv                          Nsight Compute over the --profile-window block (if ncu)
#   sweep/                             the orchestrator's jax experiments, if it can run here
set -uo pipefail
cd "$(dirname "$0")/../.."
: "${OUT:?set OUT to the results folder}"
PY=${PYTHON:-python3}
mkdir -p "$OUT"
run() { timeout 120 "$PY" bench_py/exec_jax.py "$@"; }
export XLA_PYTHON_CLIENT_PREALLOCATE=false  # leave the GPU to the other runs too
"$PY" -c 'import jax; print(jax.__version__, jax.devices())' > "$OUT/jax-version.txt" 2>&1
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv > "$OUT/gpu.txt" 2>&1
for p in default highest; do
    run --device cuda --mode mm --reps 20 --samples --precision "$p" \
        --dump-kernels "$OUT/kernels-$p.json" > "$OUT/mm-$p.log" 2> "$OUT/mm-$p.err"
    run --device cuda --mode accuracy --precision "$p" --out "$OUT/acc-$p" \
        > "$OUT/acc-$p.log" 2> "$OUT/acc-$p.err"
done
run --device cuda --mode warm --warmup dropped > "$OUT/warm.log" 2> "$OUT/warm.err"
run --device cpu --mode mm --threads 1 --samples > "$OUT/cpu-1.log" 2> "$OUT/cpu-1.err"
"$PY" - "$OUT" > "$OUT/tf32-evidence.txt" 2>&1 <<'PYEOF'
import sys
from pathlib import Path
import numpy as np
out = Path(sys.argv[1])
def tf32(x):  # round to nearest even, 10 mantissa bits (as the tensor cores' conversion)
    u = x.astype(np.float32).view(np.uint32).astype(np.uint64)
    u = (u + 0xFFF + ((u >> 13) & 1)) & 0xFFFFE000
    return u.astype(np.uint32).view(np.float32)
for p in ("default", "highest"):
    d = out / f"acc-{p}"
    a, b, c = (np.load(d / f"{n}.npy") for n in "abc")
    ref = a.astype(np.float64) @ b.astype(np.float64)
    t = tf32(a).astype(np.float64) @ tf32(b).astype(np.float64)
    print(f"{p}: max err vs f64 {np.abs(c - ref).max():.4e}; TF32 rounding predicts "
          f"{np.abs(t - ref).max():.4e}; numpy f32 {np.abs((a @ b) - ref).max():.4e}; "
          f"c vs TF32 product {np.abs(c - t).max():.4e}")
PYEOF
for threshold in default zero; do
    dir=$(mktemp -d) drv=$(mktemp -d)
    env=(); [ "$threshold" = zero ] && env=(JAX_PERSISTENT_CACHE_MIN_COMPILE_TIME_SECS=0)
    for proc in 1 2; do
        env "${env[@]}" CUDA_CACHE_PATH="$drv" timeout 120 "$PY" bench_py/exec_jax.py \
            --device cuda --reps 5 --cache-dir "$dir" > "$OUT/cache-p$proc-$threshold.log" \
            2> "$OUT/cache-p$proc-$threshold.err"
        ls -la "$dir" > "$OUT/cache-p$proc-$threshold.ls"
        du -sb "$drv" >> "$OUT/cache-p$proc-$threshold.ls"
    done
    rm -rf "$dir" "$drv"
done
if command -v ncu >/dev/null; then
    timeout 180 ncu --profile-from-start off --csv --metrics gpu__time_duration.sum \
        --log-file "$OUT/ncu-default.csv" "$PY" bench_py/exec_jax.py --device cuda --reps 20 \
        --profile-window > "$OUT/ncu-default.log" 2> "$OUT/ncu-default.err"
fi
# the orchestrator's own jax experiments, where its dependencies import (else a note)
if "$PY" -c 'import pydantic, pandas, yaml, rich' 2>/dev/null; then
    timeout 150 "$PY" -m orchestrator run experiments.yaml --only jax-first-call accuracy \
        --results "$OUT/sweep" > "$OUT/sweep.log" 2>&1
    "$PY" -m orchestrator report "$OUT/sweep" --out "$OUT/sweep-report" >> "$OUT/sweep.log" 2>&1
else
    echo "orchestrator dependencies missing: scripts/run-offline.sh needs build/bundle" > "$OUT/sweep.log"
fi
grep -h "first call\|kernel time\|with sync\|jax " "$OUT"/mm-*.log "$OUT"/cache-*.log | head -40
cat "$OUT/tf32-evidence.txt"
