#!/bin/bash
# gpu1.sh: the whole GPU suite at the commit in .device/COMMIT (reduce and filter in f16, bf16, f64 first in).
set -o pipefail
cd /work/main
export LD_LIBRARY_PATH=$PWD/.device/lib PM_COMMIT=$(cat .device/COMMIT)
echo "commit $PM_COMMIT"; nvidia-smi -L
timeout 580 ctest --test-dir build -L gpu -j4 --output-on-failure ${CTEST_ARGS} > $OUT/ctest-gpu.log 2>&1; echo "ctest exit $?"
grep -E "Test +#|tests passed|FAIL|Failed|Assertion|runs in|runs,|compiled and loaded" $OUT/ctest-gpu.log | head -80
