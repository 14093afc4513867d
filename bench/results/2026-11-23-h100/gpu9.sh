#!/bin/bash
# (kept with the results: the device script that produced ctest-gpu-streams-bound.log, sanitizer-initcheck/, bench-serve-bounded-streams.txt and between/)
# gpu9.sh: on the device: the streams test (the bound on buffers), initcheck on the two tuning
# runs it flagged before, the serving benchmark once, then the between-tuned-sizes study.
set -o pipefail
cd /work/main
export LD_LIBRARY_PATH=$PWD/.device/lib
echo "commit $(cat .device/COMMIT)"; nvidia-smi -L
timeout 60 ctest --test-dir build -R 'test_gpu_streams' --output-on-failure 2>&1 | tee $OUT/ctest-gpu.log | grep -E "Test +#|tests passed|FAIL|Failed|Assertion|buffers held" | head -20
mkdir -p $OUT/initcheck
for op in "matadd --size 67x45 --order col" "filter --size 61x37 --radius 2 --border zero"; do
  set -- $op
  compute-sanitizer --tool initcheck --error-exitcode 1 build/tools/pmtune tune --device 0 --strategy random --budget 4 --samples 2 --op $op --db /tmp/ic-$1.db > $OUT/initcheck/$1.txt 2>&1; echo "initcheck tune $1: exit $? $(grep 'ERROR SUMMARY' $OUT/initcheck/$1.txt)"
done
build/tools/pmtune tune --op reduce --size 1000 --size 4096 --size 16384 --size 65536 --size 262144 --size 1048576 --db /tmp/s.db | tail -1
build/tools/pmtune tune --op matadd --size 64x64 --db /tmp/s.db | tail -1
echo "$(cat .device/COMMIT): $(build/tools/pmtune_bench_serve /tmp/s.db)" | tee $OUT/bench-serve.txt
PM_COMMIT=$(cat .device/COMMIT) timeout 400 bench/serve/between.sh $OUT/between 20 2>&1 | tail -40
