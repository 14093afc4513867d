#!/bin/bash
# gpu-suite4.sh: the GPU suite but test_gpu_ops_types (its 470 s do not fit beside the rest) on a
# machine of four GPUs, in one call: the nine other GPU tests split over GPUs 0-2 (one ctest a
# GPU, CUDA_VISIBLE_DEVICES), python/tests on GPU 3, each under a 250 s timeout. Logs to
# $OUT/ctest-gpu4-GPU-COMMIT.log and $OUT/pytest-gpu-COMMIT.log. The build travels in .device.
cd /work/main
mkdir -p build && for d in .device/build/*; do rm -rf "build/${d##*/}"; done && cp -a .device/build/. build/
rm -f .device/lib/libstdc++.so.6
export LD_LIBRARY_PATH=$PWD/.device/lib PM_COMMIT=$(cat .device/COMMIT)
echo "commit $PM_COMMIT"; nvidia-smi -L
split=("test_gpu_tune|test_gpu_matadd|test_gpu_nan" "test_gpu_serve|test_gpu_ops|test_gpu_fault"
       "test_gpu_kernel_file|test_gpu_graphs|test_gpu_streams")
for g in 0 1 2; do
  ( cd build && CUDA_VISIBLE_DEVICES=$g timeout 250 ctest -R "${split[$g]}" -E test_gpu_ops_types \
      --output-on-failure > $OUT/ctest-gpu4-$g-$PM_COMMIT.log 2>&1
    echo "ctest GPU $g exit $?" ) &
done
( CUDA_VISIBLE_DEVICES=3 PYTHONPATH=build/python timeout 250 python3 -m pytest -q -rs python/tests \
    > $OUT/pytest-gpu-$PM_COMMIT.log 2>&1; echo "pytest exit $?"; tail -1 $OUT/pytest-gpu-$PM_COMMIT.log ) &
wait
grep -hE "tests passed|Passed|Failed|\*\*\*" $OUT/ctest-gpu4-*.log | tail -20
