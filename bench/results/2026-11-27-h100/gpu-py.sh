#!/bin/bash
# gpu-py.sh: issue 33's checks on one GPU: python/tests, then bench/python/host_cost.py three times
# (each run alternates every pair's rounds); outputs to $OUT/pytest-gpu-COMMIT.log and
# $OUT/host-cost-COMMIT-{1,2,3}.txt. The build travels in .device (see bench/results/README.md).
cd /work/main
mkdir -p build && for d in .device/build/*; do rm -rf "build/${d##*/}"; done && cp -a .device/build/. build/
rm -f .device/lib/libstdc++.so.6
export LD_LIBRARY_PATH=$PWD/.device/lib PM_COMMIT=$(cat .device/COMMIT)
echo "commit $PM_COMMIT"; nvidia-smi -L
PYTHONPATH=build/python timeout 200 python3 -m pytest -q -rs python/tests > $OUT/pytest-gpu-$PM_COMMIT.log 2>&1
echo "pytest exit $?"; tail -2 $OUT/pytest-gpu-$PM_COMMIT.log
for i in 1 2 3; do
  timeout 150 python3 bench/python/host_cost.py > $OUT/host-cost-$PM_COMMIT-$i.txt 2>&1
  echo "host_cost $i exit $?"; tail -1 $OUT/host-cost-$PM_COMMIT-$i.txt | cut -c1-400
done
