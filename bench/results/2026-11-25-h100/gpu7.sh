#!/bin/bash
# gpu7.sh: every filter variant of every type on the GPU after ox=8 and vload=2 (600fc36): the
# float suite and the typed one side by side.
set -o pipefail
cd /work/main
rm -f .device/lib/libstdc++.so.6
export LD_LIBRARY_PATH=$PWD/.device/lib PM_COMMIT=$(cat .device/COMMIT)
echo "commit $PM_COMMIT"; nvidia-smi -L
timeout 560 build/tests/test_gpu_ops --verbose --filter 'gpu_ops/filter*' > $OUT/test-gpu-ops-filter-f32.log 2>&1 &
a=$!
timeout 560 build/tests/test_gpu_ops --verbose --filter 'gpu_types/filter*' > $OUT/test-gpu-ops-filter-typed.log 2>&1 &
b=$!
wait $a; echo "f32 filter exit $?"; wait $b; echo "typed filter exit $?"
grep -hE "runs|Synthesis|FAIL|Assert" $OUT/test-gpu-ops-filter-*.log | head -20
