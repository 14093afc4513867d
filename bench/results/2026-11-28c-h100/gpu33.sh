#!/bin/bash
# gpu33.sh: issue 33's host-cost benchmark and the whole GPU suite in one call of LIMIT (default
# 560) s on a machine of two GPUs: host_cost.py RUNS (default 2) times and host_ab.py (the builds in
# .device/ab/LABEL/_ext.abi3.so against the package and torch) with nothing else running; then, at
# once, python/tests and `ctest -L gpu -E test_gpu_ops_types` on GPU 0 and test_gpu_ops_types on
# GPU 1 (on one GPU, one after the other), unless TESTS=0; each one's output to $OUT.
cd /work/main
mkdir -p build && for d in .device/build/*; do rm -rf "build/${d##*/}"; done && cp -a .device/build/. build/
rm -rf build/tests && cp -a .device/tests build/tests
rm -f .device/lib/libstdc++.so.6
export LD_LIBRARY_PATH=$PWD/.device/lib PM_COMMIT=$(cat .device/COMMIT)
echo "commit $PM_COMMIT"; nvidia-smi -L; nproc
t0=$(date +%s) end=$(( $(date +%s) + ${LIMIT:-560} ))
for r in $(seq ${RUNS:-2}); do
  timeout 90 python3 bench/python/host_cost.py > $OUT/host-cost-$r-$PM_COMMIT.txt 2>&1
  echo "host_cost $r exit $? at $(( $(date +%s) - t0 )) s"; tail -1 $OUT/host-cost-$r-$PM_COMMIT.txt
done
ab=()
for f in .device/ab/*/_ext.abi3.so; do l=${f#.device/ab/}; ab+=("${l%%/*}=$f"); done
timeout 90 python3 bench/python/host_ab.py "${ab[@]}" > $OUT/host-ab-$PM_COMMIT.txt 2>&1
echo "host_ab exit $? at $(( $(date +%s) - t0 )) s"
[ "${TESTS:-1}" = 0 ] && { cat $OUT/host-ab-$PM_COMMIT.txt; exit; }
left=$(( end - $(date +%s) ))
n=$(nvidia-smi -L | wc -l)
( export CUDA_VISIBLE_DEVICES=0
  PYTHONPATH=build/python timeout 120 python3 -m pytest -q -rs python/tests > $OUT/pytest-gpu-$PM_COMMIT.log 2>&1
  echo "pytest exit $? at $(( $(date +%s) - t0 )) s"; tail -1 $OUT/pytest-gpu-$PM_COMMIT.log
  cd build && timeout -s INT $(( end - $(date +%s) )) ctest -L gpu -E test_gpu_ops_types -j8 > $OUT/ctest-gpu-$PM_COMMIT.log 2>&1
  echo "ctest gpu exit $? at $(( $(date +%s) - t0 )) s" ) &
[ $n -ge 2 ] || wait
( export CUDA_VISIBLE_DEVICES=$(( n >= 2 ? 1 : 0 ))
  cd build && timeout -s INT $(( end - $(date +%s) )) ctest -R test_gpu_ops_types --output-on-failure > $OUT/ctest-ops-types-$PM_COMMIT.log 2>&1
  echo "ctest ops_types exit $? at $(( $(date +%s) - t0 )) s" ) &
wait
grep -hE "tests passed|Total Test|Failed|\*\*\*" $OUT/ctest-*.log
cat $OUT/host-ab-$PM_COMMIT.txt
