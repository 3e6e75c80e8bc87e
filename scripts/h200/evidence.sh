#!/usr/bin/env bash
# Issue 24's evidence on an H200 (no network, no cargo; a few torch runs, well under 5 min):
# scripts/h200/evidence.yaml (PyTorch's queued device time with and without
# CUDA_LAUNCH_BLOCKING=1, 256² and 1024²) run twice: through scripts/run-offline.sh (the
# offline path: needs build/wheels or build/bundle.tar.xz, e.g. a torch-only
# `python -m orchestrator bundle scripts/h200/evidence.yaml` made on a machine with a network)
# and through `python -m orchestrator run` (the normal path), each with its report.
#   OUT=/some/dir scripts/h200/evidence.sh
# Results: $OUT/offline/{results,report}, $OUT/normal/{results,report}, $OUT/*.log.
# What to look for: report.md's "**queued proof failed**" and "**environment changes the
# measurement**: CUDA_LAUNCH_BLOCKING=1" warnings for queued-blocking only, its clocks table row
# "device time queued (proof failed)", and no "stream was held" explanation for that figure.
set -euo pipefail
cd "$(dirname "$0")/../.."
: "${OUT:?set OUT to the folder for the results}"
PYTHON=${PYTHON:-python3}
exp=scripts/h200/evidence.yaml
mkdir -p "$OUT/offline" "$OUT/normal"
# a capture for tests/run/test_provenance.py (the header's Nsight Compute version)
ncu --version >"$OUT/ncu_version.txt" 2>&1 || echo "no ncu here" >"$OUT/ncu_version.txt"
status=0
if [ -f build/bundle.tar.xz ] || ls build/wheels/*.whl >/dev/null 2>&1; then
    PYTHON="$PYTHON" bash scripts/run-offline.sh "$exp" "$OUT/offline/results" \
        >"$OUT/offline.log" 2>&1 || status=$?
    echo "offline path: exit $status (log: $OUT/offline.log)"
    PYTHONPATH="$PWD/build/offline-site${PYTHONPATH:+:$PYTHONPATH}" \
        "$PYTHON" -m orchestrator report "$OUT/offline/results" --out "$OUT/offline/report" \
        >>"$OUT/offline.log" 2>&1 || status=$?
    site="$PWD/build/offline-site"
else
    echo "offline path: skipped, no build/wheels or build/bundle.tar.xz here" | tee "$OUT/offline.log"
    site=""
fi
normal=0
PYTHONPATH="${site}${PYTHONPATH:+:$PYTHONPATH}" "$PYTHON" -m orchestrator run "$exp" \
    --results "$OUT/normal/results" >"$OUT/normal.log" 2>&1 || normal=$?
echo "normal path: exit $normal (log: $OUT/normal.log)"
PYTHONPATH="${site}${PYTHONPATH:+:$PYTHONPATH}" "$PYTHON" -m orchestrator report \
    "$OUT/normal/results" --out "$OUT/normal/report" >>"$OUT/normal.log" 2>&1 || normal=$?
for side in offline normal; do
    md="$OUT/$side/report/report.md"
    [ -f "$md" ] && grep -E "queued proof failed|environment changes the measurement|proof failed\)" \
        "$md" | sed "s/^/$side: /" || true
done
exit $(( status > normal ? status : normal ))
