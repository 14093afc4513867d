#!/bin/bash
# (kept with the results: the device script that produced ctest-gpu-lazy-relax.log and bench-serve-lazy-relax.txt)
# gpu11.sh: on the device: the GPU tests of serving, graphs and streams (the capture mode now
# relaxed only around loads and allocations), then the serving benchmark.
set -o pipefail
cd /work/main
export LD_LIBRARY_PATH=$PWD/.device/lib
echo "commit $(cat .device/COMMIT)"; nvidia-smi -L
timeout 90 ctest --test-dir build -R 'test_gpu_(streams|graphs|serve)' -j3 --output-on-failure 2>&1 | tee $OUT/ctest-gpu.log | grep -E "Test +#|tests passed|FAIL|Failed|Assertion" | head -20
build/tools/pmtune tune --op reduce --size 1000 --size 4096 --size 16384 --size 65536 --size 262144 --size 1048576 --db /tmp/s.db | tail -1
build/tools/pmtune tune --op matadd --size 64x64 --db /tmp/s.db | tail -1
echo "$(cat .device/COMMIT): $(build/tools/pmtune_bench_serve /tmp/s.db)" | tee $OUT/bench-serve.txt
