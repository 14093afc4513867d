#!/bin/bash
# gpu18.sh: on the device, each alone: the whole GPU suite; 16 tuning + 16 serving processes on
# one database for a minute (bench/reliability/load.sh); compute-sanitizer's four tools on the
# calls, test_gpu_nan and a short tuning of each op (bench/sanitize/run.sh).
set -o pipefail
cd /work/main
export LD_LIBRARY_PATH=$PWD/.device/lib PM_COMMIT=$(cat .device/COMMIT)
echo "commit $PM_COMMIT"; nvidia-smi -L
timeout 300 ctest --test-dir build -L gpu -j4 --output-on-failure > $OUT/ctest-gpu.log 2>&1; echo "ctest exit $?"
grep -E "Test +#|tests passed|FAIL|Failed|Assertion" $OUT/ctest-gpu.log | head -40
timeout 100 bench/reliability/load.sh /tmp/load 60 > $OUT/load.txt 2>&1; echo "load exit $?"; cat /tmp/load/summary.txt 2>/dev/null | tail -14
RUN_TIMEOUT=100 timeout 170 bench/sanitize/run.sh /tmp/san > /dev/null 2>&1; echo "sanitize exit $?"; cp /tmp/san/summary.txt $OUT/sanitizer.txt; cat /tmp/san/summary.txt
grep -h -m3 -E "ERROR|Invalid|Uninitialized" /tmp/san/*nan*.txt | head -10
