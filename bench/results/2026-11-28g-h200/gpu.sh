#!/bin/bash
# gpu.sh: the whole GPU suite and python/tests at this build, then new draws of the random-sizes
# study of filter in the time left, in one call of LIMIT (default 560) s on two H200s:
# GPU 0: python/tests, `ctest -L gpu -E test_gpu_ops_types`, then filter at random sizes (seed
#   SEED0, default 4; 20 in f32 and 10 in each other type, each tuned exactly) served from the
#   shipped results alone;
# GPU 1: test_gpu_ops_types, then filter the same way at seed SEED1 (default 5).
# Each one's output to $OUT (the study's as $OUT/random-shipped-filter-seedS.json); the exact
# databases, their cubins dropped, to $OUT/exact-filter-seedS.db.gz, for a later run to time other
# decisions against (only what the study stored: cubins are compiled again where needed).
cd /work/main
mkdir -p build && for d in .device/build/*; do rm -rf "build/${d##*/}"; done && cp -a .device/build/. build/
rm -rf build/tests && cp -a .device/tests build/tests
cp results/*.json.gz build/share/pmtune/results/ # the pack leaves them out (the 64 MiB a call carries)
rm -f .device/lib/libstdc++.so.6
export LD_LIBRARY_PATH=$PWD/.device/lib PM_COMMIT=$(cat .device/COMMIT)
echo "commit $PM_COMMIT"; nvidia-smi -L
t0=$(date +%s) end=$(( $(date +%s) + ${LIMIT:-560} ))
study() { # study SEED: filter, the shipped results alone, until the call's end
  local s=$1 d=build/s$1-filter; mkdir -p $d
  PMTUNE_RESULTS=build/share/pmtune/results timeout $(( end - 25 - $(date +%s) )) \
    build/tools/pmtune_bench_random $d/exact.db --setup shipped=$d/empty.db:shipped \
    --seed $s --f32 20 --other 10 --ops filter --commit $PM_COMMIT \
    > $OUT/random-shipped-filter-seed$s.json 2> $OUT/random-log-filter-seed$s.txt
  echo "study seed $s exit $? at $(( $(date +%s) - t0 )) s"
  cp $d/exact.db /tmp/exact-$s.db && python3 -c "import sqlite3, sys; c = sqlite3.connect(sys.argv[1])
c.execute('DELETE FROM cubin'); c.commit(); c.execute('VACUUM'); c.close()" /tmp/exact-$s.db &&
    gzip -9 -n -c /tmp/exact-$s.db > $OUT/exact-filter-seed$s.db.gz
}
( export CUDA_VISIBLE_DEVICES=0
  PYTHONPATH=build/python timeout 120 python3 -m pytest -q -rs python/tests > $OUT/pytest-gpu-$PM_COMMIT.log 2>&1
  echo "pytest exit $? at $(( $(date +%s) - t0 )) s"; tail -1 $OUT/pytest-gpu-$PM_COMMIT.log
  (cd build && timeout -s INT $(( end - $(date +%s) )) ctest -L gpu -E test_gpu_ops_types -j8 > $OUT/ctest-gpu-$PM_COMMIT.log 2>&1)
  echo "ctest gpu exit $? at $(( $(date +%s) - t0 )) s"
  study ${SEED0:-4} ) &
( export CUDA_VISIBLE_DEVICES=1
  (cd build && timeout -s INT $(( end - $(date +%s) )) ctest -R test_gpu_ops_types --output-on-failure > $OUT/ctest-ops-types-$PM_COMMIT.log 2>&1)
  echo "ctest ops_types exit $? at $(( $(date +%s) - t0 )) s"
  study ${SEED1:-5} ) &
wait
grep -hE "tests passed|Total Test|Failed|\*\*\*" $OUT/ctest-*.log
for f in $OUT/random-shipped-*.json; do grep -h '"kind":"target"' $f | cut -c1-330; done
ls -la $OUT
