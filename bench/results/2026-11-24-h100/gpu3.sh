#!/bin/bash
# gpu3.sh: at 12e64a0 (matadd and add in f16, bf16, f64): the new typed cases of test_gpu_ops
# (every variant of each type at awkward sizes), then the rest of the GPU suite.
set -o pipefail
cd /work/main
export LD_LIBRARY_PATH=$PWD/.device/lib PM_COMMIT=$(cat .device/COMMIT) PMTUNE_RESULTS=none
echo "commit $PM_COMMIT"; nvidia-smi -L
time timeout 330 build/tests/test_gpu_ops --verbose --filter 'gpu_ops/*[0-9]_every_variant' > $OUT/test-gpu-ops-typed.log 2>&1; echo "typed ops exit $?"
grep -E "runs|compiled|Synthesis|FAIL|Assert" $OUT/test-gpu-ops-typed.log | head -30
timeout 240 ctest --test-dir build -L gpu -E test_gpu_ops -j4 --output-on-failure > $OUT/ctest-gpu-but-ops.log 2>&1; echo "ctest exit $?"
grep -E "Test +#|tests passed|FAIL|Failed|Assertion" $OUT/ctest-gpu-but-ops.log | head -30
