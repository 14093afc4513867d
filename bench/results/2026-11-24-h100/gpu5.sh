#!/bin/bash
# gpu5.sh: at c6bba79 (bf16 at fewer default sizes): the default tuning, exported as the shipped
# H100 results, and its time; then the float cases of test_gpu_ops (the templates and the vec
# axis changed: every float variant again).
set -o pipefail
cd /work/main
export LD_LIBRARY_PATH=$PWD/.device/lib PM_COMMIT=$(cat .device/COMMIT) PMTUNE_RESULTS=none
echo "commit $PM_COMMIT"; nvidia-smi -L
rm -f /tmp/main.db
timeout 300 build/tools/pmtune tune --device 0 --db /tmp/main.db > $OUT/tune.txt 2>&1; echo "tune exit $?"; tail -2 $OUT/tune.txt
build/tools/pmtune export /tmp/winners.json --db /tmp/main.db; echo "export exit $?"
gzip -9 -c /tmp/winners.json > $OUT/winners.json.gz
build/tools/pmtune show --db /tmp/main.db > $OUT/show.txt 2>&1
time timeout 280 build/tests/test_gpu_ops --verbose --filter 'gpu_ops/*[a-z]_every_variant_*' > $OUT/test-gpu-ops-f32.log 2>&1; echo "f32 ops exit $?"
grep -E "runs|Synthesis|FAIL|Assert|SKIP" $OUT/test-gpu-ops-f32.log | head -20
