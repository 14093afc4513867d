#!/bin/bash
# (kept with the results: the device script that produced ctest-gpu-serving-known-per-op.log and bench-serve-known-per-op.txt)
# gpu5.sh: on the device: the GPU tests of serving (matadd, tune, serve, graphs; not the long
# test_gpu_ops, whose code did not change since gpu4.sh) of this tree, then the serving benchmark
# before the snapshot (3406f16) and of this tree, alternated.
set -o pipefail
cd /work/main
export LD_LIBRARY_PATH=$PWD/.device/lib
echo "commit $(cat .device/COMMIT); before the snapshot: 3406f16"; nvidia-smi -L
ctest --test-dir build -L gpu -E test_gpu_ops --output-on-failure 2>&1 | tee $OUT/ctest-gpu.log | grep -E "Test +#|tests passed|FAIL|Failed"
build/tools/pmtune tune --op reduce --size 1000 --size 4096 --size 16384 --size 65536 --db /tmp/s.db | tail -1
build/tools/pmtune tune --op matadd --size 64x64 --db /tmp/s.db | tail -1
for i in 1 2 3; do
  echo "3406f16: $(.device/prev/pmtune_bench_serve /tmp/s.db)"
  echo "$(cat .device/COMMIT): $(build/tools/pmtune_bench_serve /tmp/s.db)"
done | tee $OUT/bench-serve.txt
