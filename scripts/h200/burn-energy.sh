#!/usr/bin/env bash
# Issue 24, burn's energy block on an H200 (no cargo: build/bundle.tar.xz must hold
# exec-gpu+cuda, made here by `bundle scripts/h200/burn-energy.yaml`, or build/exec-gpu.xz):
#   OUT=/some/dir scripts/h200/burn-energy.sh
# The binary at 1024² (its queued proof holds there, so its `# energy` line has a busy share)
# and 256² (the proof fails there: no busy share), each with `--energy 5`: the idle power first,
# then a 5 s block, every NVML counter read aligned to one of its updates. stdout/stderr are
# the captures tests/data/test_h200_captures.py reads (tests/data/h200/2026-12-02/).
set -uo pipefail
cd "$(dirname "$0")/../.."
: "${OUT:?set OUT to the folder for the results}"
PY=${PYTHON:-python3}
mkdir -p "$OUT"
start=$(date +%s)
# the bundle, or (when the project and the bundle would pass the device copy's 64 MiB) the
# binary alone: `xz -9e -c build/bin/exec-gpu+cuda/exec-gpu > build/exec-gpu.xz`
if [ ! -x build/bin/exec-gpu+cuda/exec-gpu ]; then
    if [ -f build/exec-gpu.xz ]; then
        mkdir -p build/bin/exec-gpu+cuda
        "$PY" -c 'import lzma, shutil, sys; shutil.copyfileobj(lzma.open(sys.argv[1]), open(sys.argv[2], "wb"))' \
            build/exec-gpu.xz build/bin/exec-gpu+cuda/exec-gpu && chmod +x build/bin/exec-gpu+cuda/exec-gpu
    elif [ -f build/bundle.tar.xz ]; then
        "$PY" -m tarfile -e build/bundle.tar.xz . || echo "unpack failed"
    fi
fi
bin=$(ls -d "$PWD"/build/bin/*/exec-gpu 2>/dev/null | head -1)
: "${bin:?no exec-gpu in build/bin}"
echo "binary: $bin ($(( $(date +%s) - start )) s)"
nvidia-smi --query-gpu=name,power.draw,clocks.sm --format=csv,noheader || true
cd bench_rust/exec-gpu   # cubecl's cache beside the crate, as the orchestrator starts it
for shape in ${SHAPES:-1024x1024 256x256}; do
    timeout 110 "$bin" --device cuda --mode mm --shape "$shape" --reps 20 --energy 5 \
        >"$OUT/burn-energy-${shape%%x*}.out" 2>"$OUT/burn-energy-${shape%%x*}.err" \
        || echo "exit $? ($shape)"
    echo "$shape done ($(( $(date +%s) - start )) s)"
done
grep -h "energy" "$OUT"/burn-energy-*.out "$OUT"/burn-energy-*.err
