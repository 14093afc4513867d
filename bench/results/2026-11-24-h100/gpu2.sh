#!/bin/bash
# gpu2.sh: at 1cd179b, the whole GPU suite; then gpu1.sh's reduce study again on this H100 with
# 15 alternating rounds a pair instead of 5 (is reduce n = 29,645's 1.109 the configuration or
# the noise of a 2.5 us kernel?).
set -o pipefail
cd /work/main
export LD_LIBRARY_PATH=$PWD/.device/lib PM_COMMIT=$(cat .device/COMMIT)
echo "commit $PM_COMMIT"; nvidia-smi -L
timeout 330 ctest --test-dir build -L gpu -j4 --output-on-failure > $OUT/ctest-gpu.log 2>&1; echo "ctest exit $?"
grep -E "Test +#|tests passed|FAIL|Failed|Assertion" $OUT/ctest-gpu.log | head -30
rm -f /tmp/m.db /tmp/s.db
timeout 120 build/tools/pmtune tune --op reduce --device 0 --db /tmp/m.db > $OUT/tune-reduce.txt 2>&1; echo "tune exit $?"
timeout 200 build/tools/pmtune_bench_between /tmp/m.db /tmp/s.db --sizes 20 --seed 1 --ops reduce --rounds 15 \
  --commit $PM_COMMIT > $OUT/between-reduce.json 2> $OUT/between-reduce.log; echo "between exit $?"
grep -E '"kind":"(summary|phase)"' $OUT/between-reduce.json
grep '"kind":"between"' $OUT/between-reduce.json | python3 -c '
import json, sys
for d in map(json.loads, sys.stdin): print(d["problem"], d["ratio"], d["served_config"], "|", d["exact_config"], d["served_ms"], d["exact_ms"])'
