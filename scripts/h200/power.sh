#!/usr/bin/env bash
# Issue 41 on the H200: verdicts with power, in one command (about 7 minutes, bounded to 8).
#   OUT=/some/dir scripts/h200/power.sh
# (a) scripts/h200/power.yaml twice, 3 processes a side (torch cuda 1024², torch cpu 1 and 4
#     threads), the second sweep with MKL_CBWR=COMPATIBLE on the CPU runs: compare under the
#     default (Benjamini-Hochberg) and under --correction holm. Every steady CPU figure should
#     be `slower`, the GPU figures never faster/slower, no interval beyond the band beside
#     `inconclusive`.
# (b) scripts/h200/power-variants.yaml: one sweep, variants a and b identical, c with
#     MKL_CBWR=COMPATIBLE: compare a/b (within-sweep A/A: 0 faster/slower) and a/c paired (the
#     default for two variants of one sweep) and --unpaired: summary.txt lists each figure's
#     interval width both ways.
# (c) scripts/h200/power-decide.yaml: run until decided (b: cuBLAS's Lt path), budget 90 s:
#     the store's stops say `decided` or why not (time budget, max processes) per figure.
# Everything under $OUT: stores, compare folders, logs, summary.txt.
set -euo pipefail
cd "$(dirname "$0")/../.."
OUT=${OUT:?set OUT to the folder for the results}
PY=${PYTHON:-python3}
[ -x .venv/bin/python ] && PY=${PYTHON:-.venv/bin/python}
# The GPU machine has torch and pandas but not pydantic or rich: the bundle's wheels carry them
# (unzipped into build/offline-site, as run-offline.sh does); compare's PNG needs matplotlib,
# so without it the stores come back and the compares are made on the dev box.
if ! "$PY" -c 'import pydantic, rich' 2>/dev/null && [ -f build/bundle.tar.xz ]; then
    [ -f build/.bundle-unpacked ] || { "$PY" -m tarfile -e build/bundle.tar.xz .; touch build/.bundle-unpacked; }
    site=build/offline-site
    if [ ! -f "$site/.unpacked" ]; then
        rm -rf "$site" && mkdir -p "$site"
        for wheel in build/wheels/*.whl; do "$PY" -m zipfile -e "$wheel" "$site"; done
        touch "$site/.unpacked"
    fi
    export PYTHONPATH="$PWD/$site${PYTHONPATH:+:$PYTHONPATH}"
fi
if ! "$PY" -c 'import torch, pydantic, pandas, rich' 2>/dev/null; then
    echo "power.sh: $PY lacks torch, pydantic, pandas or rich (set PYTHON=..., or bundle)" >&2
    exit 2
fi
HAVE_MPL=1; "$PY" -c 'import matplotlib' 2>/dev/null || HAVE_MPL=0
START=$(date +%s)
LIMIT=${LIMIT:-470}
mkdir -p "$OUT"
left() { echo $(( LIMIT - ($(date +%s) - START) )); }
sweep() {  # sweep NAME FILE [SHARE]: run FILE into $OUT/NAME within SHARE s (or what is left)
    local t; t=$(left); [ -n "${3:-}" ] && [ "$3" -lt "$t" ] && t=$3
    [ "$t" -gt 20 ] || { echo "power.sh: out of time before $1" >&2; return 0; }
    timeout "$t" "$PY" -m orchestrator run "$2" --results "$OUT/$1" --quiet \
        > "$OUT/run-$1.log" 2>&1 || echo "power.sh: sweep $1 ended with $?" >&2
}
cmp() {  # cmp NAME A B [ARGS...]
    local name=$1 a=$2 b=$3; shift 3
    [ "$HAVE_MPL" = 1 ] || return 0
    "$PY" -m orchestrator compare "$a" "$b" --out "$OUT/$name" "$@" > "$OUT/$name.txt" 2>&1 \
        || echo "power.sh: compare $name ended with $?" >&2
}
sed 's/^    threads: \[1, 4\]$/    threads: [1, 4]\n    env: {MKL_CBWR: COMPATIBLE}/' \
    scripts/h200/power.yaml > "$OUT/power-slow.yaml"
cp scripts/h200/power*.yaml "$OUT/"
PARTS=${PARTS:-abc}  # which of (a), (b), (c) to run, e.g. PARTS=ac when device time is short
# (a) two sweeps
if [[ $PARTS == *a* ]]; then
sweep a scripts/h200/power.yaml 100
sweep slow "$OUT/power-slow.yaml" 100
fi
if [ -d "$OUT/a" ] && [ -d "$OUT/slow" ]; then
    cmp compare-a-slow "$OUT/a" "$OUT/slow"
    cmp compare-holm-a-slow "$OUT/a" "$OUT/slow" --correction holm
fi
# (b) one variant sweep
[[ $PARTS == *b* ]] && sweep variants scripts/h200/power-variants.yaml 160
if [ -d "$OUT/variants" ]; then
    cmp compare-variants-a-b "$OUT/variants#a" "$OUT/variants#b"
    cmp compare-variants-a-c "$OUT/variants#a" "$OUT/variants#c"
    cmp compare-variants-a-c-unpaired "$OUT/variants#a" "$OUT/variants#c" --unpaired
fi
# (c) until decided, in what is left
[[ $PARTS == *c* ]] && sweep decide scripts/h200/power-decide.yaml
[ -d "$OUT/decide" ] && cmp compare-decide-a-b "$OUT/decide#a" "$OUT/decide#b"
"$PY" scripts/h200/power_summary.py "$OUT" | tee "$OUT/summary.txt"
echo "power.sh: done in $(( $(date +%s) - START )) s"
