#!/bin/bash
# gpu22.sh: on the device: the whole GPU suite after the review mends (serving's per-op snapshots
# shared by the database and the shipped results).
set -o pipefail
cd /work/main
export LD_LIBRARY_PATH=$PWD/.device/lib
echo "commit $(cat .device/COMMIT)"; nvidia-smi -L
timeout 330 ctest --test-dir build -L gpu -j4 --output-on-failure > $OUT/ctest-gpu.log 2>&1; echo "ctest exit $?"
grep -E "Test +#|tests passed|FAIL|Failed|Assertion" $OUT/ctest-gpu.log | head -30
