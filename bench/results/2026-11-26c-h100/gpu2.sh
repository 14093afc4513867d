#!/bin/bash
# gpu2.sh: on one GPU, the GPU suite but the two ops suites and test_gpu_streams
# ($OUT/ctest-gpu-rest.log), the Python package's tests (python/tests, $OUT/pytest.log), and the
# gallery against PyTorch (bench/kernels/gallery.sh, $OUT/gallery.txt).
cd /work/main
mkdir -p build && for d in .device/build/*; do rm -rf "build/${d##*/}"; done && cp -a .device/build/. build/
rm -f .device/lib/libstdc++.so.6
export LD_LIBRARY_PATH=$PWD/.device/lib PM_COMMIT=$(cat .device/COMMIT)
t0=$(date +%s)
echo "commit $PM_COMMIT"; nvidia-smi -L
(cd build && timeout 150 ctest -L gpu -E "test_gpu_ops|test_gpu_streams" -j7 --output-on-failure > $OUT/ctest-gpu-rest.log 2>&1; echo "ctest exit $?")
grep -E "Test +#|tests passed" $OUT/ctest-gpu-rest.log
PMTUNE_LIBRARY=build/libpmtune.so PYTHONPATH=python timeout 120 python3 -m pytest -q python/tests > $OUT/pytest.log 2>&1; echo "pytest exit $?"; tail -3 $OUT/pytest.log
timeout 300 bash bench/kernels/gallery.sh /tmp/gallery.db > $OUT/gallery.txt 2>&1; echo "gallery exit $? at $(( $(date +%s) - t0 )) s"
grep -E '"kind": "summary"' $OUT/gallery.txt
