#!/bin/bash
# gpu15.sh: on the device: test_gpu_fault again (after its first run's two test fixes) beside the
# SIGKILL campaign on pmtune tune with longer runs (more kills land mid-run); then 16 tuning and
# 16 serving processes on one database for 40 s (bench/reliability/load.sh).
set -o pipefail
cd /work/main
export LD_LIBRARY_PATH=$PWD/.device/lib
echo "commit $(cat .device/COMMIT)"; nvidia-smi -L
( KILLS=100 BUDGET=80 KILL_MAX_MS=2000 TIME_LIMIT_S=230 KEEP=/tmp/kt bench/reliability/kill_tune.sh > $OUT/kill-tune.txt 2>&1; echo "kill_tune exit $?" >> $OUT/kill-tune.txt ) &
kt=$!
timeout 280 ctest --test-dir build -R test_gpu_fault --output-on-failure > $OUT/ctest-gpu-fault.log 2>&1; echo "ctest exit $?"
grep -E "Test +#|tests passed|FAIL|Failed|Assertion|gpu fault: (first|tuning)" $OUT/ctest-gpu-fault.log | head -30
grep -c "gpu fault: cuda" $OUT/ctest-gpu-fault.log
wait $kt; tail -3 $OUT/kill-tune.txt
timeout 150 bench/reliability/load.sh /tmp/load 40 > $OUT/load.txt 2>&1; echo "load exit $?"; tail -12 $OUT/load.txt; cat /tmp/load/summary.txt 2>/dev/null | tail -12
