#!/bin/bash
# (kept with the results: the device script that produced ctest-gpu-serving-any-size.log and bench-serve-any-size.txt)
# gpu6.sh: on the device: the whole GPU suite of this tree, then the serving benchmark of this
# tree and of 61199ed (the serving before the growing cache), alternated, on one tuned database.
set -o pipefail
cd /work/main
export LD_LIBRARY_PATH=$PWD/.device/lib
echo "commit $(cat .device/COMMIT); before: 61199ed"; nvidia-smi -L
timeout 420 ctest --test-dir build -L gpu --output-on-failure 2>&1 | tee $OUT/ctest-gpu.log | grep -E "Test +#|tests passed|FAIL|Failed"
build/tools/pmtune tune --op reduce --size 1000 --size 4096 --size 16384 --size 65536 --size 262144 --size 1048576 --db /tmp/s.db | tail -1
build/tools/pmtune tune --op matadd --size 64x64 --db /tmp/s.db | tail -1
for i in 1 2; do
  echo "61199ed: $(.device/prev/pmtune_bench_serve /tmp/s.db)"
  echo "$(cat .device/COMMIT): $(build/tools/pmtune_bench_serve /tmp/s.db)"
done | tee $OUT/bench-serve.txt
