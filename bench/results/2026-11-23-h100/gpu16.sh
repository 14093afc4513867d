#!/bin/bash
# gpu16.sh: on the device: the whole GPU suite (test_gpu_nan's first run) beside 16 threads on one
# context for a full minute (bench/reliability/threads.c); then 16 tuning and 16 serving processes
# on one database (bench/reliability/load.sh), every serving log kept, to find why 79 of 80
# serving runs exited non-zero in gpu15; explain --json of each kind of decision.
set -o pipefail
cd /work/main
export LD_LIBRARY_PATH=$PWD/.device/lib
echo "commit $(cat .device/COMMIT)"; nvidia-smi -L
( timeout 120 build/tools/pmtune_reliability_threads --seconds 60 --threads 16 --db /tmp/t.db > $OUT/threads.txt 2>&1; echo "threads exit $?" >> $OUT/threads.txt ) &
th=$!
timeout 330 ctest --test-dir build -L gpu -j4 --output-on-failure > $OUT/ctest-gpu.log 2>&1; echo "ctest exit $?"
grep -E "Test +#|tests passed|FAIL|Failed|Assertion|nan" $OUT/ctest-gpu.log | head -40
wait $th; tail -6 $OUT/threads.txt
timeout 150 bench/reliability/load.sh /tmp/load 40 > $OUT/load.txt 2>&1; echo "load exit $?"; cat /tmp/load/summary.txt 2>/dev/null | tail -14
tar czf $OUT/load-serve.tgz -C /tmp/load serve summary.txt check.txt 2>/dev/null
f=$(ls /tmp/load/serve/*.txt | head -1); echo "== $f"; cat "$f" | head -30
for s in 4096 5000 100000000; do build/tools/pmtune explain --op reduce --size $s --json --db /tmp/t.db; echo " [exit $?]"; done 2>&1 | head -30
