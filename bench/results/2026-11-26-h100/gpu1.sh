#!/bin/bash
# gpu1.sh: issue 30's first GPU run: the GPU suite but the two ops suites (their templates did
# not change); a default tuning of add (its carrying step) exported, explained and benched between
# two of its sizes; then the grid (pmtune tune --grid) of add and reduce, into build/grid.db, kept
# on the machine for the next script.
set -o pipefail
cd /work/main
rm -rf build && cp -a .device/build build
rm -f .device/lib/libstdc++.so.6
export LD_LIBRARY_PATH=$PWD/.device/lib PM_COMMIT=$(cat .device/COMMIT) PMTUNE_RESULTS=none
echo "commit $PM_COMMIT"; nvidia-smi -L
timeout 330 ctest --test-dir build -L gpu -E "test_gpu_ops" -j3 --output-on-failure > $OUT/ctest-gpu.log 2>&1; echo "ctest exit $?"
grep -E "Test +#|tests passed|FAIL" $OUT/ctest-gpu.log | head -20
rm -f /tmp/add.db*
timeout 60 build/tools/pmtune tune --op add --device 0 --db /tmp/add.db > $OUT/tune-add.txt 2>&1; echo "tune add exit $?"
grep -E "carry|wall|all " $OUT/tune-add.txt
build/tools/pmtune export /tmp/add.json --db /tmp/add.db; echo "export exit $?"
rm -f /tmp/imp.db*; build/tools/pmtune import /tmp/add.json --db /tmp/imp.db
for s in 3000000 40000000; do
  build/tools/pmtune explain --op add --size $s --device 0 --db /tmp/imp.db
done 2>&1 | tee $OUT/explain-add.txt
timeout 60 build/tools/pmtune bench --op add --size 3000000 --size 40000000 --device 0 --db /tmp/imp.db > $OUT/bench-add.txt 2>&1; echo "bench exit $?"; cat $OUT/bench-add.txt
timeout 150 build/tools/pmtune tune --grid --op add --device 0 --db build/grid.db > $OUT/tune-grid-add.txt 2>&1; echo "grid add exit $?"
tail -2 $OUT/tune-grid-add.txt; grep -c "carry" $OUT/tune-grid-add.txt
