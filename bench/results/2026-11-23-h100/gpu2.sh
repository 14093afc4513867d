#!/bin/bash
# (kept with the results: the device scripts that produced them; run from the repository root with build/ and .device/ carried)
# gpu2.sh: on the device: the default tune and the default bench with the build before the
# layering (b514a21) and with this tree, one after the other on one machine, each in its own
# database; then the serving benchmark of each.
set -o pipefail
cd /work/main
export LD_LIBRARY_PATH=$PWD/.device/lib
echo "commit $(cat .device/COMMIT) (after); b514a21 (before)"; nvidia-smi -L
nvcc -O3 -std=c++17 -arch=sm_90 -DPM_HAVE_NPP -Iinclude -Icore -Idb -Ituner bench/peers/pmtune_peers.cu \
  build/libpmtune.a -o build/tools/pmtune_peers -lnppif -lnppc -lnvrtc -L.device/lib -l:libsqlite3.so.0 -lpthread || exit 1
nvcc -O3 -std=c++17 -arch=sm_90 -DPM_HAVE_NPP .device/before/tools/peers/pmtune_peers.cu \
  -o .device/before/tools/pmtune_peers -lnppif -lnppc || exit 1
B=.device/before/tools; A=build/tools
for w in before after; do
  d=$B; [ $w = after ] && d=$A
  echo "== $w: $d/pmtune tune --db /tmp/$w.db"
  ( time $d/pmtune tune --db /tmp/$w.db ) > $OUT/tune-$w.txt 2>&1; tail -4 $OUT/tune-$w.txt
done
for round in 1 2; do
  for w in before after; do
    d=$B; [ $w = after ] && d=$A
    echo "== $w round $round: $d/pmtune bench --db /tmp/$w.db"
    $d/pmtune bench --db /tmp/$w.db 2>&1 | tee -a $OUT/bench-$w.txt
  done
done
for w in before after; do
  d=$B; [ $w = after ] && d=$A
  for i in 1 2 3; do $d/pmtune_bench_serve /tmp/$w.db; done | tee $OUT/bench-serve-$w.txt
done
