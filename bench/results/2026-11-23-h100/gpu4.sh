#!/bin/bash
# (kept with the results: the device script that produced ctest-gpu-known.log and bench-serve-known.txt)
# gpu4.sh: on the device: the GPU suite of this tree (decisions from the in-memory snapshot),
# then the serving benchmark of this tree and of the commit before the snapshot (3406f16, same
# benchmark source), alternated, on a database with reduce tuned at a few sizes.
set -o pipefail
cd /work/main
export LD_LIBRARY_PATH=$PWD/.device/lib
echo "commit $(cat .device/COMMIT); before the snapshot: 3406f16"; nvidia-smi -L
ctest --test-dir build -L gpu --output-on-failure 2>&1 | tee $OUT/ctest-gpu.log | grep -E "Test +#|tests passed|Total Test|FAIL|Failed"
build/tools/pmtune tune --op reduce --size 1000 --size 4096 --size 16384 --size 65536 --db /tmp/s.db | tail -2
build/tools/pmtune tune --op matadd --size 64x64 --db /tmp/s.db | tail -1
for i in 1 2 3; do
  echo "3406f16: $(.device/prev/pmtune_bench_serve /tmp/s.db)"
  echo "$(cat .device/COMMIT): $(build/tools/pmtune_bench_serve /tmp/s.db)"
done | tee $OUT/bench-serve.txt
