#!/bin/bash
# gpu4.sh: every reduce variant of every type on the GPU (test_gpu_ops's reduce cases, f32 and typed)
set -o pipefail
cd /work/main
export LD_LIBRARY_PATH=$PWD/.device/lib PM_COMMIT=$(cat .device/COMMIT) PMTUNE_RESULTS=none
echo "commit $PM_COMMIT"; nvidia-smi -L
t0=$(date +%s)
timeout 250 build/tests/test_gpu_ops --verbose --filter 'gpu_ops/reduce*' > $OUT/test-gpu-ops-reduce-f32.log 2>&1; echo "f32 exit $? in $(( $(date +%s) - t0 )) s"
t0=$(date +%s)
timeout 320 build/tests/test_gpu_ops --verbose --filter 'gpu_types/reduce*' > $OUT/test-gpu-ops-reduce-typed.log 2>&1; echo "typed exit $? in $(( $(date +%s) - t0 )) s"
tail -4 $OUT/test-gpu-ops-reduce-f32.log $OUT/test-gpu-ops-reduce-typed.log
