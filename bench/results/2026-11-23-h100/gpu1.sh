#!/bin/bash
# (kept with the results: the device scripts that produced them; run from the repository root with build/ and .device/ carried)
# gpu1.sh: on the device: build the peers with NPP (this tree's, linked with libpmtune.a; and the
# peers of b514a21, the build before the layering), then the GPU suite (everything but `slow`).
set -o pipefail
cd /work/main
export LD_LIBRARY_PATH=$PWD/.device/lib
echo "commit $(cat .device/COMMIT) (this tree); before = b514a21"; nvidia-smi -L; nvidia-smi --query-gpu=driver_version --format=csv,noheader
t0=$(date +%s)
nvcc -O3 -std=c++17 -arch=sm_90 -DPM_HAVE_NPP -Iinclude -Icore -Idb -Ituner bench/peers/pmtune_peers.cu \
  build/libpmtune.a -o build/tools/pmtune_peers -lnppif -lnppc -lnvrtc -L.device/lib -l:libsqlite3.so.0 -lpthread \
  || echo "after: peers build FAILED"
nvcc -O3 -std=c++17 -arch=sm_90 -DPM_HAVE_NPP .device/before/tools/peers/pmtune_peers.cu \
  -o .device/before/tools/pmtune_peers -lnppif -lnppc || echo "before: peers build FAILED"
echo "peers built in $(( $(date +%s) - t0 )) s"
build/tools/pmtune_peers --op reduce --size 1048576 --samples 25
.device/before/tools/pmtune_peers --op reduce --size 1048576 --samples 25
ctest --test-dir build -LE slow --output-on-failure 2>&1 | tee $OUT/ctest-gpu.log | grep -E "Test +#|tests passed|Total Test|FAIL|Failed" 
