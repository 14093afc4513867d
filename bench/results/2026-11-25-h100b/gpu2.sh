#!/bin/bash
# gpu2.sh: after reduce's one-block, prefetch and early-placement change (d01a18b): the default
# tuning, exported as the shipped H100 results; then issue 16's reduce targets (bf16 at 4,096,
# 65,536, 2^20, 2^28, 2^30) tuned exactly and benched against CUB with a float accumulator.
set -o pipefail
cd /work/main
rm -f .device/lib/libstdc++.so.6 # the device's own serves the nvcc-built peers (and the rest)
export LD_LIBRARY_PATH=$PWD/.device/lib PM_COMMIT=$(cat .device/COMMIT) PMTUNE_RESULTS=none
echo "commit $PM_COMMIT"; nvidia-smi -L
t0=$(date +%s)
nvcc -O3 -std=c++17 -arch=sm_90 -DPM_HAVE_NPP -Iinclude -I.device/include -Icore -Idb -Ituner bench/peers/pmtune_peers.cu \
  build/libpmtune.a -o build/tools/pmtune_peers -lnppif -lnppc -lnvrtc -L.device/lib -l:libsqlite3.so.0 -l:libnettle.so.8 -lpthread \
  || echo "peers build FAILED"
echo "peers built in $(( $(date +%s) - t0 )) s"
rm -f /tmp/main.db
timeout 330 build/tools/pmtune tune --device 0 --db /tmp/main.db > $OUT/tune-shipped.txt 2>&1; echo "tune exit $?"; tail -2 $OUT/tune-shipped.txt
build/tools/pmtune export /tmp/winners.json --db /tmp/main.db; echo "export exit $?"
gzip -9 -c /tmp/winners.json > $OUT/winners.json.gz
build/tools/pmtune show --db /tmp/main.db > $OUT/show-shipped.txt 2>&1
B="--device 0 --db /tmp/b.db"
rm -f /tmp/b.db
timeout 150 build/tools/pmtune tune --op reduce --dtype bf16 --size 4096 --size 65536 --size 1048576 --size 268435456 --size 1073741824 $B > $OUT/tune-reduce-targets.txt 2>&1
echo "tune exit $?"; grep -E "^gpu .* all|wrong, [1-9]|failed; " $OUT/tune-reduce-targets.txt | head
timeout 120 build/tools/pmtune bench --op reduce --dtype bf16 --size 4096 --size 65536 --size 1048576 --size 268435456 --size 1073741824 $B > $OUT/bench-reduce-targets.txt 2>&1
echo "bench exit $?"; cat $OUT/bench-reduce-targets.txt
