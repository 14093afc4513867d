#!/bin/bash
# gpu15.sh: after a kernel of one's own evaluates its launch (and its checks at a size) in one
# SQLite step each: test_gpu_kernel_file, then the host cost of a call (pmtune_bench_kernel_call,
# as gpu11.sh), three times, on one H100.
set -o pipefail
cd /work/main
export LD_LIBRARY_PATH=$PWD/.device/lib PM_COMMIT=$(cat .device/COMMIT) PMTUNE_RESULTS=none
echo "commit $PM_COMMIT"; nvidia-smi -L
timeout 200 build/tests/test_gpu_kernel_file --verbose > $OUT/test-gpu-kernel-file.log 2>&1; echo "test_gpu_kernel_file exit $?"
grep -E "FAIL|Synthesis|Assert" $OUT/test-gpu-kernel-file.log
rm -f /tmp/c.db
timeout 60 build/tools/pmtune tune --kernel examples/kernels/matadd.json --size 64x1024 --size 2000x1024 --device 0 --db /tmp/c.db > $OUT/tune-call.txt 2>&1; echo "tune exit $?"
for i in 1 2 3; do timeout 120 build/tools/pmtune_bench_kernel_call examples/kernels/matadd.json /tmp/c.db; echo "bench exit $?"; done > $OUT/bench-kernel-call.txt 2>&1
cat $OUT/bench-kernel-call.txt
