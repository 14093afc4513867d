#!/bin/bash
# gpu2.sh: the default tuning (f32, and bf16 now for every op) on an H100 and its time, the
# breakdown per op; then test_gpu_tune again (the random draw now leaves the seed out of the budget).
set -o pipefail
cd /work/main
export LD_LIBRARY_PATH=$PWD/.device/lib PM_COMMIT=$(cat .device/COMMIT) PMTUNE_RESULTS=none
echo "commit $PM_COMMIT"; nvidia-smi -L
rm -f /tmp/main.db
timeout 330 build/tools/pmtune tune --device 0 --db /tmp/main.db > $OUT/tune.txt 2>&1; echo "tune exit $?"; tail -2 $OUT/tune.txt
grep "^gpu" $OUT/tune.txt | grep -v ' all ' | sed -E 's/^gpu [0-9]+ +([a-z]+) .*; ([0-9.]+) s \(.*/\1 \2/' | awk '{s[$1]+=$2} END {for (o in s) print o, s[o], "s"}'
build/tools/pmtune export /tmp/winners.json --db /tmp/main.db; echo "export exit $?"
gzip -9 -c /tmp/winners.json > $OUT/winners.json.gz
timeout 120 build/tests/test_gpu_tune > $OUT/test-gpu-tune.log 2>&1; echo "test_gpu_tune exit $?"; tail -3 $OUT/test-gpu-tune.log
