#!/bin/bash
# gpu6.sh: after the review's mend (a one-block reduce measured once, not once per combine):
# test_gpu_tune and test_gpu_serve; the default tuning (its time and candidates; exported as the
# shipped H100 results); reduce bf16 at 4,096 and 2^20 and f32 at 1,000 and 4,096 benched from it
# against CUB.
set -o pipefail
cd /work/main
rm -f .device/lib/libstdc++.so.6
export LD_LIBRARY_PATH=$PWD/.device/lib PM_COMMIT=$(cat .device/COMMIT) PMTUNE_RESULTS=none
echo "commit $PM_COMMIT"; nvidia-smi -L
nvcc -O3 -std=c++17 -arch=sm_90 -DPM_HAVE_NPP -Iinclude -I.device/include -Icore -Idb -Ituner bench/peers/pmtune_peers.cu \
  build/libpmtune.a -o build/tools/pmtune_peers -lnppif -lnppc -lnvrtc -L.device/lib -l:libsqlite3.so.0 -l:libnettle.so.8 -lpthread \
  || echo "peers build FAILED"
timeout 150 ctest --test-dir build -R "test_gpu_tune|test_gpu_serve" -j2 --output-on-failure > $OUT/ctest-gpu-tune-serve.log 2>&1; echo "ctest exit $?"
grep -E "Test +#|tests passed" $OUT/ctest-gpu-tune-serve.log
rm -f /tmp/main.db
timeout 300 build/tools/pmtune tune --device 0 --db /tmp/main.db > $OUT/tune-shipped.txt 2>&1; echo "tune exit $?"; tail -2 $OUT/tune-shipped.txt
grep "^gpu 0  reduce" $OUT/tune-shipped.txt | head -3
build/tools/pmtune export /tmp/winners.json --db /tmp/main.db; echo "export exit $?"
gzip -9 -c /tmp/winners.json > $OUT/winners.json.gz
build/tools/pmtune show --db /tmp/main.db > $OUT/show-shipped.txt 2>&1
{ timeout 60 build/tools/pmtune bench --op reduce --dtype bf16 --size 4096 --size 1048576 --device 0 --db /tmp/main.db
  timeout 60 build/tools/pmtune bench --op reduce --size 1000 --size 4096 --device 0 --db /tmp/main.db; } > $OUT/bench-reduce.txt 2>&1
echo "bench exit $?"; cat $OUT/bench-reduce.txt
