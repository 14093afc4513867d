#!/bin/bash
# gpu14.sh: on the device: the whole GPU suite (test_gpu_fault new) beside the SIGKILL campaign on
# pmtune tune (bench/reliability/kill_tune.sh: small tunings, little GPU work); then, alone, the
# serving benchmark, pmtune bench's peer column (posix_spawn now), and 16 threads on one context
# for 40 s (bench/reliability/threads.c).
set -o pipefail
cd /work/main
export LD_LIBRARY_PATH=$PWD/.device/lib
echo "commit $(cat .device/COMMIT)"; nvidia-smi -L
( KILL_MAX_MS=2500 TIME_LIMIT_S=200 KEEP=/tmp/kt bench/reliability/kill_tune.sh > $OUT/kill-tune.txt 2>&1; echo "kill_tune exit $?" >> $OUT/kill-tune.txt ) &
kt=$!
timeout 330 ctest --test-dir build -L gpu -j4 --output-on-failure > $OUT/ctest-gpu.log 2>&1; echo "ctest exit $?"
grep -E "Test +#|tests passed|FAIL|Failed|Assertion|gpu fault:" $OUT/ctest-gpu.log | head -40
wait $kt; tail -4 $OUT/kill-tune.txt
build/tools/pmtune tune --op reduce --size 1000 --size 4096 --size 16384 --size 65536 --size 262144 --size 1048576 --db /tmp/s.db | tail -1
build/tools/pmtune tune --op matadd --size 64x64 --db /tmp/s.db | tail -1
echo "$(cat .device/COMMIT): $(build/tools/pmtune_bench_serve /tmp/s.db)" | tee $OUT/bench-serve.txt
timeout 60 build/tools/pmtune bench --op reduce --size 1000000 --db /tmp/s.db > $OUT/bench-peers.txt 2>&1; echo "bench exit $?"; tail -12 $OUT/bench-peers.txt
timeout 90 build/tools/pmtune_reliability_threads --seconds 40 --threads 16 --db /tmp/s.db > $OUT/threads.txt 2>&1; echo "threads exit $?"; tail -15 $OUT/threads.txt
