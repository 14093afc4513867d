#!/bin/bash
# suite4.sh: the whole GPU suite on a machine of four GPUs in one call: the nine GPU tests other
# than test_gpu_ops_types split over GPUs 0-2 (one ctest a GPU, CUDA_VISIBLE_DEVICES) and
# python/tests on GPU 3, as ../2026-11-27c-h100/gpu-suite4.sh; then test_gpu_ops_types's cases
# (test_gpu_ops --filter gpu_types/*), one element type a GPU as each GPU comes free: bf16 on 0,
# f64 on 2, f16 on 3. Logs to $OUT/ctest-gpu4-GPU-COMMIT.log, $OUT/ops-types-TYPE-COMMIT.log and
# $OUT/pytest-gpu-COMMIT.log. The build travels in .device. (Its run at 1164b1a called types from
# the folder ctest had left it in, build/, so bf16 and f64 did not run: mended since.)
cd /work/main
mkdir -p build && for d in .device/build/*; do rm -rf "build/${d##*/}"; done && cp -a .device/build/. build/
mkdir -p build/tests && cp -a .device/tests/. build/tests/
rm -f .device/lib/libstdc++.so.6
export LD_LIBRARY_PATH=$PWD/.device/lib PM_COMMIT=$(cat .device/COMMIT)
echo "commit $PM_COMMIT"; nvidia-smi -L; t0=$(date +%s)
split=("test_gpu_tune|test_gpu_matadd|test_gpu_nan" "test_gpu_serve|test_gpu_ops|test_gpu_fault"
       "test_gpu_kernel_file|test_gpu_graphs|test_gpu_streams")
types() { # types GPU TYPE: test_gpu_ops_types's cases of TYPE on GPU
  ( cd /work/main/build/tests && CUDA_VISIBLE_DEVICES=$1 PMTUNE_RESULTS=none timeout 400 ./test_gpu_ops \
      --verbose --filter "gpu_types/*_$2_*" ) > $OUT/ops-types-$2-$PM_COMMIT.log 2>&1
  echo "ops_types $2 (GPU $1) exit $? at $(( $(date +%s) - t0 )) s"
}
for g in 0 1 2; do
  ( cd build && CUDA_VISIBLE_DEVICES=$g timeout 250 ctest -R "${split[$g]}" -E test_gpu_ops_types \
      --output-on-failure > $OUT/ctest-gpu4-$g-$PM_COMMIT.log 2>&1
    echo "ctest GPU $g exit $? at $(( $(date +%s) - t0 )) s"
    [ $g = 0 ] && types 0 bf16; [ $g = 2 ] && types 2 f64 ) &
done
( CUDA_VISIBLE_DEVICES=3 PYTHONPATH=build/python timeout 250 python3 -m pytest -q -rs python/tests \
    > $OUT/pytest-gpu-$PM_COMMIT.log 2>&1; echo "pytest exit $? at $(( $(date +%s) - t0 )) s"
  tail -1 $OUT/pytest-gpu-$PM_COMMIT.log; types 3 f16 ) &
wait
grep -hE "tests passed|Passed|Failed|\*\*\*" $OUT/ctest-gpu4-*.log | tail -20
grep -hE "^\[====\]|\[FAIL\]" $OUT/ops-types-*.log
