#!/bin/bash
# gpu13.sh: on the device: the serving benchmark, then the between study again with the
# interpolation between tuned sizes (26ba72a) and the denser column-major matadd and
# zero-border filter grids.
set -o pipefail
cd /work/main
export LD_LIBRARY_PATH=$PWD/.device/lib
echo "commit $(cat .device/COMMIT)"; nvidia-smi -L
build/tools/pmtune tune --op reduce --size 1000 --size 4096 --size 16384 --size 65536 --size 262144 --size 1048576 --db /tmp/s.db | tail -1
build/tools/pmtune tune --op matadd --size 64x64 --db /tmp/s.db | tail -1
echo "$(cat .device/COMMIT): $(build/tools/pmtune_bench_serve /tmp/s.db)" | tee $OUT/bench-serve.txt
PM_COMMIT=$(cat .device/COMMIT) timeout 470 bench/serve/between.sh $OUT/between 20 2>&1 | tail -30
