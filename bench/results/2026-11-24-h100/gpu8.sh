#!/bin/bash
# gpu8.sh: at f2994ef, then again after the review mends: the whole GPU suite (test_gpu_ops with every type's variants included).
set -o pipefail
cd /work/main
export LD_LIBRARY_PATH=$PWD/.device/lib PM_COMMIT=$(cat .device/COMMIT)
echo "commit $PM_COMMIT"; nvidia-smi -L
timeout 570 ctest --test-dir build -L gpu -j4 --output-on-failure > $OUT/ctest-gpu.log 2>&1; echo "ctest exit $?"
grep -E "Test +#|tests passed|FAIL|Failed|Assertion" $OUT/ctest-gpu.log | head -30
