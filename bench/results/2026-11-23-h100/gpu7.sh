#!/bin/bash
# (kept with the results: the device script that produced ctest-gpu-merged.log, bench-serve-any-size.txt and bench-packed.txt)
# gpu7.sh: on the device: the whole GPU suite of this tree (three tests at a time), the serving
# benchmark of this tree and of 61199ed alternated on one tuned database, then add tuned at its
# default sizes and the packed-matadd benchmark against torch.add and a float4 add.
set -o pipefail
cd /work/main
export LD_LIBRARY_PATH=$PWD/.device/lib
echo "commit $(cat .device/COMMIT); before: 61199ed"; nvidia-smi -L
timeout 330 ctest --test-dir build -L gpu -j3 --output-on-failure 2>&1 | tee $OUT/ctest-gpu.log | grep -E "Test +#|tests passed|FAIL|Failed|Assertion" | head -40
build/tools/pmtune tune --op reduce --size 1000 --size 4096 --size 16384 --size 65536 --size 262144 --size 1048576 --db /tmp/s.db | tail -1
build/tools/pmtune tune --op matadd --size 64x64 --db /tmp/s.db | tail -1
for i in 1 2; do
  echo "61199ed: $(.device/prev/pmtune_bench_serve /tmp/s.db)"
  echo "$(cat .device/COMMIT): $(build/tools/pmtune_bench_serve /tmp/s.db)"
done | tee $OUT/bench-serve.txt
timeout 90 build/tools/pmtune tune --op add --db /tmp/flat.db > $OUT/tune-add.txt 2>&1; tail -3 $OUT/tune-add.txt
mkdir -p /tmp/libpy && ln -sf $PWD/.device/lib/* /tmp/libpy/ && rm -f /tmp/libpy/libstdc++* /tmp/libpy/libgcc_s*
LD_LIBRARY_PATH=/tmp/libpy PMTUNE_DB=/tmp/flat.db timeout 60 python3 bench/packed/bench_packed.py 2>&1 | tee $OUT/bench-packed.txt | tail -20
