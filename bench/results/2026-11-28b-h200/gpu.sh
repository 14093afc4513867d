#!/bin/bash
# gpu.sh: the checks of a change to the Python package on whichever GPU came, in one call of
# LIMIT (default 320) s: python/tests through the package, then through each build carried in
# .device/ab/LABEL/_ext.abi3.so in its place, host_ab.py (those builds against the package and
# torch), then `ctest -L gpu -E test_gpu_ops_types` in the time left; each one's output to $OUT.
cd /work/main
mkdir -p build && for d in .device/build/*; do rm -rf "build/${d##*/}"; done && cp -a .device/build/. build/
rm -rf build/tests && cp -a .device/tests build/tests
rm -f .device/lib/libstdc++.so.6
export LD_LIBRARY_PATH=$PWD/.device/lib PM_COMMIT=$(cat .device/COMMIT)
echo "commit $PM_COMMIT"; nvidia-smi -L
t0=$(date +%s) end=$(( $(date +%s) + ${LIMIT:-320} ))
PYTHONPATH=build/python timeout 120 python3 -m pytest -q -rs python/tests > $OUT/pytest-gpu-$PM_COMMIT.log 2>&1
echo "pytest exit $? at $(( $(date +%s) - t0 )) s"; tail -1 $OUT/pytest-gpu-$PM_COMMIT.log
ab=()
for f in .device/ab/*/_ext.abi3.so; do  # the staged package with this build as its extension
  l=${f#.device/ab/}; l=${l%%/*}; ab+=("$l=$f"); rm -rf /tmp/ab-$l; cp -a build/python /tmp/ab-$l
  cp $f /tmp/ab-$l/pmtune/_ext.abi3.so
  PYTHONPATH=/tmp/ab-$l timeout 90 python3 -m pytest -q -rs python/tests > $OUT/pytest-gpu-$l-$PM_COMMIT.log 2>&1
  echo "pytest ($l) exit $? at $(( $(date +%s) - t0 )) s"; tail -1 $OUT/pytest-gpu-$l-$PM_COMMIT.log
done
timeout 60 python3 bench/python/host_ab.py "${ab[@]}" > $OUT/host-ab-$PM_COMMIT.txt 2>&1
echo "host_ab exit $? at $(( $(date +%s) - t0 )) s"; cat $OUT/host-ab-$PM_COMMIT.txt
left=$(( end - $(date +%s) ))
(cd build && timeout -s INT $left ctest -L gpu -E test_gpu_ops_types -j8 > $OUT/ctest-gpu-$PM_COMMIT.log 2>&1)
echo "ctest exit $? at $(( $(date +%s) - t0 )) s"; tail -15 $OUT/ctest-gpu-$PM_COMMIT.log
