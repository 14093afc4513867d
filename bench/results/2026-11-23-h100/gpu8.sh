#!/bin/bash
# (kept with the results: the device script that produced bench-serve-driver-queries.txt, ctest-gpu-streams.log and the sanitizer/ folder)
# gpu8.sh: on the device: the serving benchmark of this tree and of 61199ed alternated, the GPU
# tests of serving, graphs and streams, then compute-sanitizer's four tools (bench/sanitize/run.sh).
set -o pipefail
cd /work/main
export LD_LIBRARY_PATH=$PWD/.device/lib
echo "commit $(cat .device/COMMIT); before: 61199ed"; nvidia-smi -L
build/tools/pmtune tune --op reduce --size 1000 --size 4096 --size 16384 --size 65536 --size 262144 --size 1048576 --db /tmp/s.db | tail -1
build/tools/pmtune tune --op matadd --size 64x64 --db /tmp/s.db | tail -1
for i in 1 2; do
  echo "61199ed: $(.device/prev/pmtune_bench_serve /tmp/s.db)"
  echo "$(cat .device/COMMIT): $(build/tools/pmtune_bench_serve /tmp/s.db)"
done | tee $OUT/bench-serve.txt
timeout 120 ctest --test-dir build -R 'test_gpu_(streams|graphs|serve)' -j3 --output-on-failure 2>&1 | tee $OUT/ctest-gpu.log | grep -E "Test +#|tests passed|FAIL|Failed|Assertion" | head -30
PM_COMMIT=$(cat .device/COMMIT) RUN_TIMEOUT=200 timeout 280 bench/sanitize/run.sh $OUT/sanitizer 2>&1 | tail -25
