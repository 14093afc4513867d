#!/bin/bash
# gpu.sh: the whole GPU suite and python/tests at this build, with a third draw of the random-sizes
# study in the time left, in one call of LIMIT (default 560) s on two H200s:
# GPU 0: python/tests, `ctest -L gpu -E test_gpu_ops_types`, then filter at random sizes (seed 3,
#   20 in f32 and 10 in each other type, each tuned exactly) served from the shipped results alone;
# GPU 1: test_gpu_ops_types, then reduce the same way.
# Each one's output to $OUT (the study's as $OUT/random-shipped-OP-seed3.json).
cd /work/main
mkdir -p build && for d in .device/build/*; do rm -rf "build/${d##*/}"; done && cp -a .device/build/. build/
rm -rf build/tests && cp -a .device/tests build/tests
cp results/*.json.gz build/share/pmtune/results/ # the pack leaves them out (the 64 MiB a call carries)
rm -f .device/lib/libstdc++.so.6
export LD_LIBRARY_PATH=$PWD/.device/lib PM_COMMIT=$(cat .device/COMMIT)
echo "commit $PM_COMMIT"; nvidia-smi -L
t0=$(date +%s) end=$(( $(date +%s) + ${LIMIT:-560} ))
study() { # study OP: seed 3, the shipped results alone, until the call's end
  mkdir -p build/s3-$1
  PMTUNE_RESULTS=build/share/pmtune/results timeout $(( end - $(date +%s) )) \
    build/tools/pmtune_bench_random build/s3-$1/exact.db --setup shipped=build/s3-$1/empty.db:shipped \
    --seed 3 --f32 20 --other 10 --ops $1 --commit $PM_COMMIT \
    > $OUT/random-shipped-$1-seed3.json 2> $OUT/random-log-$1-seed3.txt
  echo "study $1 exit $? at $(( $(date +%s) - t0 )) s"
}
( export CUDA_VISIBLE_DEVICES=0
  PYTHONPATH=build/python timeout 120 python3 -m pytest -q -rs python/tests > $OUT/pytest-gpu-$PM_COMMIT.log 2>&1
  echo "pytest exit $? at $(( $(date +%s) - t0 )) s"; tail -1 $OUT/pytest-gpu-$PM_COMMIT.log
  (cd build && timeout -s INT $(( end - $(date +%s) )) ctest -L gpu -E test_gpu_ops_types -j8 > $OUT/ctest-gpu-$PM_COMMIT.log 2>&1)
  echo "ctest gpu exit $? at $(( $(date +%s) - t0 )) s"
  study filter ) &
( export CUDA_VISIBLE_DEVICES=1
  (cd build && timeout -s INT $(( end - $(date +%s) )) ctest -R test_gpu_ops_types --output-on-failure > $OUT/ctest-ops-types-$PM_COMMIT.log 2>&1)
  echo "ctest ops_types exit $? at $(( $(date +%s) - t0 )) s"
  study reduce ) &
wait
grep -hE "tests passed|Total Test|Failed|\*\*\*" $OUT/ctest-*.log
for f in $OUT/random-shipped-*.json; do grep -h '"kind":"target"' $f | cut -c1-330; done
