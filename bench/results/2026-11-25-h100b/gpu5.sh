#!/bin/bash
# gpu5.sh: what a user gets out of the box on another H100: reduce bf16 at issue 16's sizes and
# f32 at 1,000 to 2^20 served from the shipped results (af9c55d's tuning; no database of its
# own), benched against CUB, twice.
set -o pipefail
cd /work/main
rm -f .device/lib/libstdc++.so.6
export LD_LIBRARY_PATH=$PWD/.device/lib PM_COMMIT=$(cat .device/COMMIT) PMTUNE_RESULTS=$PWD/results
echo "commit $PM_COMMIT"; nvidia-smi -L
nvcc -O3 -std=c++17 -arch=sm_90 -DPM_HAVE_NPP -Iinclude -I.device/include -Icore -Idb -Ituner bench/peers/pmtune_peers.cu \
  build/libpmtune.a -o build/tools/pmtune_peers -lnppif -lnppc -lnvrtc -L.device/lib -l:libsqlite3.so.0 -l:libnettle.so.8 -lpthread \
  || echo "peers build FAILED"
rm -f /tmp/empty.db
for i in 1 2; do
  timeout 120 build/tools/pmtune bench --op reduce --dtype bf16 --size 4096 --size 65536 --size 1048576 --size 268435456 --size 1073741824 --device 0 --db /tmp/empty.db
  timeout 120 build/tools/pmtune bench --op reduce --size 1000 --size 4096 --size 65536 --size 1048576 --device 0 --db /tmp/empty.db
done > $OUT/bench-reduce-shipped.txt 2>&1; echo "bench exit $?"; cat $OUT/bench-reduce-shipped.txt
