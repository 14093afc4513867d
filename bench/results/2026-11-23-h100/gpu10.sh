#!/bin/bash
# (kept with the results: the device script that produced ctest-gpu-final.log and filter-default.txt)
# gpu10.sh: on the device: the whole GPU suite of this tree (three tests at a time), then filter's
# new default against the tuned winners at 8192x8192, each radius and border.
set -o pipefail
cd /work/main
export LD_LIBRARY_PATH=$PWD/.device/lib
echo "commit $(cat .device/COMMIT)"; nvidia-smi -L
timeout 300 ctest --test-dir build -L gpu -j3 --output-on-failure 2>&1 | tee $OUT/ctest-gpu.log | grep -E "Test +#|tests passed|FAIL|Failed|Assertion" | head -30
build/tools/pmtune tune --op filter --db /tmp/m.db 2>/dev/null | tail -2
build/tools/pmtune_bench_between /tmp/m.db /tmp/sc.db --sizes 1 --ops filter --commit $(cat .device/COMMIT) 2>/dev/null | tee $OUT/filter-default.txt | grep -E '"kind":"(default|summary)"'
