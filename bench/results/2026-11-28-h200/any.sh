#!/bin/bash
# any.sh: one call that uses whichever GPU came for a call asked as nvidia-h200: an H200 runs
# h200fill.sh (the H200 document's missing sizes); an H100 runs the Python package's work of
# issue 33 instead: bench/python/alloc_probe.py (host_parts.py when it ran, at ed1301e),
# host_ab.py (the package's extension against the builds carried in .device/ab/*/_ext.abi3.so,
# and torch), python/tests on the GPU, and host_cost.py; each one's output to $OUT.
cd /work/main
if nvidia-smi -L | grep -q H200; then exec bash bench/results/2026-11-28-h200/h200fill.sh; fi
mkdir -p build && for d in .device/build/*; do rm -rf "build/${d##*/}"; done && cp -a .device/build/. build/
rm -f .device/lib/libstdc++.so.6
export LD_LIBRARY_PATH=$PWD/.device/lib PM_COMMIT=$(cat .device/COMMIT)
echo "commit $PM_COMMIT"; nvidia-smi -L
t0=$(date +%s)
timeout 120 python3 bench/python/alloc_probe.py > $OUT/host-parts-$PM_COMMIT.txt 2>&1
echo "alloc_probe exit $? at $(( $(date +%s) - t0 )) s"
ab=(); for f in .device/ab/*/_ext.abi3.so; do l=${f#.device/ab/}; ab+=("${l%%/*}=$f"); done
timeout 200 python3 bench/python/host_ab.py "${ab[@]}" > $OUT/host-ab-$PM_COMMIT.txt 2>&1
echo "host_ab exit $? at $(( $(date +%s) - t0 )) s"
PYTHONPATH=build/python timeout 150 python3 -m pytest -q -rs python/tests > $OUT/pytest-gpu-$PM_COMMIT.log 2>&1
echo "pytest exit $? at $(( $(date +%s) - t0 )) s"; tail -1 $OUT/pytest-gpu-$PM_COMMIT.log
timeout 100 python3 bench/python/host_cost.py > $OUT/host-cost-$PM_COMMIT.txt 2>&1
echo "host_cost exit $? at $(( $(date +%s) - t0 )) s"
cat $OUT/host-parts-$PM_COMMIT.txt $OUT/host-ab-$PM_COMMIT.txt; cut -c1-140 $OUT/host-cost-$PM_COMMIT.txt
