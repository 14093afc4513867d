#!/bin/bash
# gpu1.sh: on one GPU, the GPU suite but the two ops suites and test_gpu_streams
# ($OUT/ctest-gpu-rest.log), the gallery against PyTorch (bench/kernels/gallery.sh,
# $OUT/gallery.txt), then issue 30's random-sizes study of filter with this build's shipped
# results (../2026-11-26b-h100/study1.sh filter) in what time is left of the call's 590 s.
cd /work/main
mkdir -p build && for d in .device/build/*; do rm -rf "build/${d##*/}"; done && cp -a .device/build/. build/
rm -f .device/lib/libstdc++.so.6
export LD_LIBRARY_PATH=$PWD/.device/lib PM_COMMIT=$(cat .device/COMMIT)
t0=$(date +%s)
echo "commit $PM_COMMIT"; nvidia-smi -L
(cd build && timeout 150 ctest -L gpu -E "test_gpu_ops|test_gpu_streams" -j7 --output-on-failure > $OUT/ctest-gpu-rest.log 2>&1; echo "ctest exit $?")
grep -E "Test +#|tests passed" $OUT/ctest-gpu-rest.log
timeout 200 bash bench/kernels/gallery.sh /tmp/gallery.db > $OUT/gallery.txt 2>&1; echo "gallery exit $? at $(( $(date +%s) - t0 )) s"
grep -E '"kind": "summary"' $OUT/gallery.txt
LIMIT=$(( 580 - ($(date +%s) - t0) )) bash bench/results/2026-11-26b-h100/study1.sh filter
rm -f $OUT/tuned.db $OUT/exact.db
