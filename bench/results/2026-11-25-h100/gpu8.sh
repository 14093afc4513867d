#!/bin/bash
# gpu8.sh: issue 18 on one H100: kernels of one's own tuned and benched. test_gpu_kernel_file;
# the matadd example (examples/kernels/matadd.json) and the built-in matadd tuned at 10000x10000
# and 4097x3001, then benched one after the other (built-in, example, built-in again) on the
# warm GPU; the transpose example tuned and benched (tuned vs seed); then the peers built with
# nvcc and NPP, and pmtune_peers --op reduce in each type (the compensated reference, 828678e).
set -o pipefail
cd /work/main
rm -f .device/lib/libstdc++.so.6 # the device's own serves the nvcc-built peers (and the rest)
export LD_LIBRARY_PATH=$PWD/.device/lib PM_COMMIT=$(cat .device/COMMIT) PMTUNE_RESULTS=none
echo "commit $PM_COMMIT"; nvidia-smi -L
timeout 200 build/tests/test_gpu_kernel_file --verbose > $OUT/test-gpu-kernel-file.log 2>&1; echo "test_gpu_kernel_file exit $?"
tail -3 $OUT/test-gpu-kernel-file.log
B="--device 0 --db /tmp/k.db"
rm -f /tmp/k.db
K=examples/kernels
{ timeout 100 build/tools/pmtune tune --op matadd --size 10000x10000 --size 4097x3001 $B
  timeout 100 build/tools/pmtune tune --kernel $K/matadd.json --size 10000x10000 --size 4097x3001 $B
  timeout 100 build/tools/pmtune tune --kernel $K/transpose.json --size 8192x8192 --size 4097x3001 $B; } > $OUT/tune-kernels.txt 2>&1
echo "tune exit $?"; grep -E "^gpu 0  |winner" $OUT/tune-kernels.txt
{ timeout 60 build/tools/pmtune bench --op matadd --size 10000x10000 --size 4097x3001 $B
  timeout 60 build/tools/pmtune bench --kernel $K/matadd.json --size 10000x10000 --size 4097x3001 $B
  timeout 60 build/tools/pmtune bench --op matadd --size 10000x10000 --size 4097x3001 $B
  timeout 60 build/tools/pmtune bench --kernel $K/transpose.json --size 8192x8192 --size 4097x3001 $B; } > $OUT/bench-kernels.txt 2>&1
echo "bench exit $?"; cat $OUT/bench-kernels.txt
timeout 30 build/tools/pmtune show $B > $OUT/show-kernels.txt 2>&1; echo "show exit $?"; cat $OUT/show-kernels.txt
t0=$(date +%s)
nvcc -O3 -std=c++17 -arch=sm_90 -DPM_HAVE_NPP -Iinclude -I.device/include -Icore -Idb -Ituner bench/peers/pmtune_peers.cu \
  build/libpmtune.a -o build/tools/pmtune_peers -lnppif -lnppc -lnvrtc -L.device/lib -l:libsqlite3.so.0 -l:libnettle.so.8 -lpthread \
  || echo "peers build FAILED"
echo "peers built in $(( $(date +%s) - t0 )) s"
for t in f32 f16 bf16 f64; do
  for n in 1000003 268435459; do
    timeout 60 build/tools/pmtune_peers --op reduce --size $n --dtype $t --samples 5; echo "peers reduce $n --dtype $t: exit $?"
  done
done > $OUT/peers-reduce.txt 2>&1
grep -c '"verified":true' $OUT/peers-reduce.txt; grep -E "exit [^0]|false" $OUT/peers-reduce.txt
