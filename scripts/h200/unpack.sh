#!/usr/bin/env bash
# What the device copy carries, made ready to run offline (idempotent: a warm machine's second
# call finds it done). Two ways in: build/bundle.tar.xz (what `bundle` writes; run-offline.sh
# unpacks it), or, when the project and that bundle together pass the device copy's 64 MiB,
# build/carry/ holding bin.tar.xz (build/bin/exec-gpu+cuda: the binary and its source stamp,
# `tar -C build -cJf build/carry/bin.tar.xz bin/exec-gpu+cuda`) and wheels/ (build/wheels).
set -euo pipefail
cd "$(dirname "$0")/../.."
PYTHON=${PYTHON:-python3}
if [ -f build/carry/bin.tar.xz ] && [ ! -f build/.carry-unpacked ]; then
    mkdir -p build/wheels
    "$PYTHON" -m tarfile -e build/carry/bin.tar.xz build
    cp build/carry/wheels/*.whl build/wheels/
    touch build/.carry-unpacked
fi
if [ ! -x build/bin/exec-gpu+cuda/exec-gpu ] && [ ! -f build/bundle.tar.xz ]; then
    echo "unpack.sh: neither build/carry/bin.tar.xz nor build/bundle.tar.xz is here" >&2
    exit 2
fi
