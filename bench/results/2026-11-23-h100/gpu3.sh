#!/bin/bash
# (kept with the results: the device script that produced ctest-gpu-graphs.log and sanitizer-memcheck.txt)
# gpu3.sh: on the device: the GPU suite of this tree (graph capture included), then
# compute-sanitizer memcheck (API errors included) on the example (each op, cold then warm)
# and on a short tuning run: pmtune's own calls must report nothing.
set -o pipefail
cd /work/main
export LD_LIBRARY_PATH=$PWD/.device/lib
echo "commit $(cat .device/COMMIT)"; nvidia-smi -L
ctest --test-dir build -L gpu --output-on-failure 2>&1 | tee $OUT/ctest-gpu.log | grep -E "Test +#|tests passed|Total Test|FAIL|Failed|invalidated|differs"
export PMTUNE_DB=/tmp/san.db
for run in "build/tools/pmtune_example" "build/tools/pmtune tune --op reduce --size 1000003 --strategy random --budget 8" "build/tools/pmtune_example"; do
  echo "== compute-sanitizer --tool memcheck $run"
  compute-sanitizer --tool memcheck --report-api-errors all $run 2>&1 | tail -4
done 2>&1 | tee $OUT/sanitizer.txt
