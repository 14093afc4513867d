#!/bin/bash
# gpu3.sh: the GPU suite but test_gpu_ops (whose reduce cases gpu4.sh runs), then the default
# tuning without reduce 2^30 (its time; exported as the shipped H100 results), then reduce f32 at
# 2^28 and 2^30 benched from it (2^30 served by the nearest size's winner).
set -o pipefail
cd /work/main
export LD_LIBRARY_PATH=$PWD/.device/lib PM_COMMIT=$(cat .device/COMMIT) PMTUNE_RESULTS=none
echo "commit $PM_COMMIT"; nvidia-smi -L
timeout 240 ctest --test-dir build -L gpu -E "test_gpu_ops" -j4 --output-on-failure > $OUT/ctest-gpu-but-ops.log 2>&1; echo "ctest exit $?"
grep -E "Test +#|tests passed|FAIL|Assertion" $OUT/ctest-gpu-but-ops.log | head -30
rm -f /tmp/main.db
timeout 300 build/tools/pmtune tune --device 0 --db /tmp/main.db > $OUT/tune-shipped.txt 2>&1; echo "tune exit $?"; tail -2 $OUT/tune-shipped.txt
build/tools/pmtune export /tmp/winners.json --db /tmp/main.db; echo "export exit $?"
gzip -9 -c /tmp/winners.json > $OUT/winners.json.gz
build/tools/pmtune show --db /tmp/main.db > $OUT/show-shipped.txt 2>&1
timeout 100 build/tools/pmtune bench --op reduce --size 268435456 --size 1073741824 --device 0 --db /tmp/main.db > $OUT/bench-reduce-large.txt 2>&1
echo "bench exit $?"; cat $OUT/bench-reduce-large.txt
