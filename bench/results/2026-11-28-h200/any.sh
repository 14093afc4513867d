#!/bin/bash
# any.sh: one call that uses whichever GPU came for a call asked as nvidia-h200: an H200 runs
# h200fill.sh (the H200 document's missing sizes); an H100 runs the Python package's work of
# issue 33 instead: host_ab.py (the package's extension against the builds carried in
# .device/ab/*/_ext.abi3.so, and torch), python/tests on the GPU through the package and through
# each carried build in its place, and host_cost.py; each one's output to $OUT. (At ed1301e it ran
# bench/python/alloc_probe.py too, then host_parts.py.)
cd /work/main
if nvidia-smi -L | grep -q H200; then exec bash bench/results/2026-11-28-h200/h200fill.sh; fi
mkdir -p build && for d in .device/build/*; do rm -rf "build/${d##*/}"; done && cp -a .device/build/. build/
rm -f .device/lib/libstdc++.so.6
export LD_LIBRARY_PATH=$PWD/.device/lib PM_COMMIT=$(cat .device/COMMIT)
echo "commit $PM_COMMIT"; nvidia-smi -L
t0=$(date +%s)
ab=(); for f in .device/ab/*/_ext.abi3.so; do l=${f#.device/ab/}; ab+=("${l%%/*}=$f"); done
timeout 200 python3 bench/python/host_ab.py "${ab[@]}" > $OUT/host-ab-$PM_COMMIT.txt 2>&1
echo "host_ab exit $? at $(( $(date +%s) - t0 )) s"
PYTHONPATH=build/python timeout 150 python3 -m pytest -q -rs python/tests > $OUT/pytest-gpu-$PM_COMMIT.log 2>&1
echo "pytest exit $? at $(( $(date +%s) - t0 )) s"; tail -1 $OUT/pytest-gpu-$PM_COMMIT.log
for f in .device/ab/*/_ext.abi3.so; do  # the staged package with this build as its extension
  l=${f#.device/ab/}; l=${l%%/*}; rm -rf /tmp/ab-$l; cp -a build/python /tmp/ab-$l
  cp $f /tmp/ab-$l/pmtune/_ext.abi3.so
  PYTHONPATH=/tmp/ab-$l timeout 150 python3 -m pytest -q -rs python/tests > $OUT/pytest-gpu-$l.log 2>&1
  echo "pytest ($l) exit $? at $(( $(date +%s) - t0 )) s"; tail -1 $OUT/pytest-gpu-$l.log
done
timeout 100 python3 bench/python/host_cost.py > $OUT/host-cost-$PM_COMMIT.txt 2>&1
echo "host_cost exit $? at $(( $(date +%s) - t0 )) s"
cat $OUT/host-ab-$PM_COMMIT.txt; cut -c1-140 $OUT/host-cost-$PM_COMMIT.txt
