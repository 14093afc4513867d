#!/bin/bash
# gpu10.sh: the GPU tests gpu9.sh's 560 s did not reach (on a fresh machine): test_gpu_ops and
# test_gpu_ops_types side by side, then test_gpu_streams (which runs alone), at the same commit.
set -o pipefail
cd /work/main
export LD_LIBRARY_PATH=$PWD/.device/lib PM_COMMIT=$(cat .device/COMMIT)
echo "commit $PM_COMMIT"; nvidia-smi -L
timeout 585 ctest --test-dir build -L gpu -R "test_gpu_ops|test_gpu_streams" -j2 --output-on-failure > $OUT/ctest-gpu-ops.log 2>&1; echo "ctest exit $?"
grep -E "Test +#|tests passed|FAIL|Assertion" $OUT/ctest-gpu-ops.log | head -40
