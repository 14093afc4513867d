#!/bin/bash
# gpu5.sh (gpu4.sh again): issue 16's targets in one run on one H100: the peers built with NPP on the device and
# each type's peer tried once; then the target sizes tuned exactly (reduce bf16, matadd f16 bf16
# f64, filter bf16 and f16 3x3) and benched against the copy ceiling and the typed peers.
# gpu5.sh is this with the peers built (sqlite3.h carried in .device/include), filter bf16 also
# tuned exhaustively, and the GPU suite but test_gpu_ops (whose code did not change).
set -o pipefail
cd /work/main
rm -f .device/lib/libstdc++.so.6 # the device's own serves the nvcc-built peers (and the rest)
export LD_LIBRARY_PATH=$PWD/.device/lib PM_COMMIT=$(cat .device/COMMIT) PMTUNE_RESULTS=none
echo "commit $PM_COMMIT"; nvidia-smi -L
t0=$(date +%s)
nvcc -O3 -std=c++17 -arch=sm_90 -DPM_HAVE_NPP -Iinclude -I.device/include -Icore -Idb -Ituner bench/peers/pmtune_peers.cu \
  build/libpmtune.a -o build/tools/pmtune_peers -lnppif -lnppc -lnvrtc -L.device/lib -l:libsqlite3.so.0 -lpthread \
  || echo "peers build FAILED"
echo "peers built in $(( $(date +%s) - t0 )) s"
for t in f32 f16 bf16 f64; do
  for a in "--op reduce --size 1000003" "--op matadd --size 1000x1003" "--op filter --size 1000x1003 --radius 2"; do
    timeout 60 build/tools/pmtune_peers $a --dtype $t --samples 5; echo "peers $a --dtype $t: exit $?"
  done
done > $OUT/peers-smoke.txt 2>&1
grep -c '"verified":true' $OUT/peers-smoke.txt; grep -E "exit [^0]|false" $OUT/peers-smoke.txt
B="--device 0 --db /tmp/b.db"
rm -f /tmp/b.db
{ timeout 150 build/tools/pmtune tune --op reduce --dtype bf16 --size 4096 --size 65536 --size 1048576 --size 268435456 --size 1073741824 $B
  timeout 120 build/tools/pmtune tune --op matadd --dtype f16,bf16,f64 --size 10000x10000 --size 8192x8192 $B
  timeout 60 build/tools/pmtune tune --op filter --dtype bf16,f16 --size 8192x8192 --radius 1 $B; } > $OUT/tune-targets.txt 2>&1
echo "tune exit $?"; grep -E "^gpu .* all|wrong, [1-9]|failed; " $OUT/tune-targets.txt | grep -v " 0 wrong, 0 failed" | head
{ timeout 120 build/tools/pmtune bench --op reduce --dtype bf16 --size 4096 --size 65536 --size 1048576 --size 268435456 --size 1073741824 $B
  timeout 120 build/tools/pmtune bench --op matadd --dtype f16,bf16,f64 --size 10000x10000 --size 8192x8192 $B
  timeout 60 build/tools/pmtune bench --op filter --dtype bf16,f16 --size 8192x8192:r1 $B; } > $OUT/bench-targets.txt 2>&1
echo "bench exit $?"; cat $OUT/bench-targets.txt
rm -f /tmp/x.db
timeout 90 build/tools/pmtune tune --op filter --dtype bf16 --size 8192x8192 --radius 1 --strategy exhaustive --device 0 --db /tmp/x.db > $OUT/tune-filter-exhaustive.txt 2>&1; echo "exhaustive exit $?"; grep -A1 "^gpu 0  filter" $OUT/tune-filter-exhaustive.txt
timeout 60 build/tools/pmtune bench --op filter --dtype bf16 --size 8192x8192:r1 --device 0 --db /tmp/x.db > $OUT/bench-filter-exhaustive.txt 2>&1; echo "bench exit $?"; cat $OUT/bench-filter-exhaustive.txt
timeout 300 ctest --test-dir build -L gpu -E "test_gpu_ops" -j4 --output-on-failure > $OUT/ctest-gpu-but-ops.log 2>&1; echo "ctest exit $?"
grep -E "Test +#|tests passed|FAIL|Assertion" $OUT/ctest-gpu-but-ops.log | head -30
