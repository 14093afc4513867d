#!/bin/bash
# gpu-suite.sh [a|b]: the whole GPU suite in two calls that each fit the device's 600 s: a, every
# GPU test but test_gpu_ops_types (ctest -j8), then python/tests; b, test_gpu_serve alone (its
# calls_never_wait_for_the_background_tuning bounds a wall time, which eight tests sharing the GPU
# can stretch), then test_gpu_ops_types alone.
# Logs to $OUT/ctest-gpu-PART-COMMIT.log (and pytest-gpu-COMMIT.log). The build travels in
# .device (see bench/results/README.md).
cd /work/main
mkdir -p build && for d in .device/build/*; do rm -rf "build/${d##*/}"; done && cp -a .device/build/. build/
rm -f .device/lib/libstdc++.so.6
export LD_LIBRARY_PATH=$PWD/.device/lib PM_COMMIT=$(cat .device/COMMIT)
echo "commit $PM_COMMIT"; nvidia-smi -L
log=$OUT/ctest-gpu-$1-$PM_COMMIT.log
if [ "$1" = a ]; then
  (cd build && timeout 420 ctest -L gpu -E test_gpu_ops_types -j8 --output-on-failure) > $log 2>&1
  echo "ctest a exit $?"
  PYTHONPATH=build/python timeout 150 python3 -m pytest -q -rs python/tests > $OUT/pytest-gpu-$PM_COMMIT.log 2>&1
  echo "pytest exit $?"; tail -1 $OUT/pytest-gpu-$PM_COMMIT.log
else
  (cd build && timeout 90 ctest -R test_gpu_serve --output-on-failure;
   timeout 470 ctest -R test_gpu_ops_types --output-on-failure) > $log 2>&1
  echo "ctest b exit $?"
fi
grep -E "tests passed|Passed|Failed|\*\*\*" $log | tail -14
