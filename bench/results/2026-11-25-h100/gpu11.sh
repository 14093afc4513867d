#!/bin/bash
# gpu11.sh: serving a kernel of one's own on one H100: test_gpu_kernel_file (with the served
# call: exact, nearest, in a graph's capture, without a database); then the host cost of a call
# (pmtune_bench_kernel_call) against the built-in pm_add over the same floats and a bare launch,
# with the matadd example tuned at two sizes, twice.
set -o pipefail
cd /work/main
export LD_LIBRARY_PATH=$PWD/.device/lib PM_COMMIT=$(cat .device/COMMIT) PMTUNE_RESULTS=none
echo "commit $PM_COMMIT"; nvidia-smi -L
timeout 200 build/tests/test_gpu_kernel_file --verbose > $OUT/test-gpu-kernel-file.log 2>&1; echo "test_gpu_kernel_file exit $?"
grep -E "PASS|FAIL|Synthesis|Assert" $OUT/test-gpu-kernel-file.log
rm -f /tmp/c.db
timeout 60 build/tools/pmtune tune --kernel examples/kernels/matadd.json --size 64x1024 --size 2000x1024 --device 0 --db /tmp/c.db > $OUT/tune-call.txt 2>&1; echo "tune exit $?"
for i in 1 2; do timeout 120 build/tools/pmtune_bench_kernel_call examples/kernels/matadd.json /tmp/c.db; echo "bench exit $?"; done > $OUT/bench-kernel-call.txt 2>&1
cat $OUT/bench-kernel-call.txt
