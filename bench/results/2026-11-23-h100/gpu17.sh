#!/bin/bash
# gpu17.sh: on the device, each alone: the whole GPU suite (test_gpu_streams serial now; the new
# compile-beside-a-lock test); 16 threads on one context for a minute with no database (the case
# that showed 599 wrong results in gpu16, from the harness's own legacy-stream copies) and with a
# tuned one; 16 tuning + 16 serving processes on one database for 40 s.
set -o pipefail
cd /work/main
export LD_LIBRARY_PATH=$PWD/.device/lib
echo "commit $(cat .device/COMMIT)"; nvidia-smi -L
timeout 330 ctest --test-dir build -L gpu -j4 --output-on-failure > $OUT/ctest-gpu.log 2>&1; echo "ctest exit $?"
grep -E "Test +#|tests passed|FAIL|Failed|Assertion" $OUT/ctest-gpu.log | head -40
timeout 100 build/tools/pmtune_reliability_threads --seconds 60 --threads 16 --db /tmp/none.db > $OUT/threads.txt 2>&1; echo "threads exit $?"; tail -5 $OUT/threads.txt
timeout 150 bench/reliability/load.sh /tmp/load 40 > $OUT/load.txt 2>&1; echo "load exit $?"; cat /tmp/load/summary.txt 2>/dev/null | tail -14
tar czf $OUT/load-serve.tgz -C /tmp/load serve summary.txt check.txt 2>/dev/null
