#!/bin/bash
# suite.sh: the whole GPU suite (ctest -L gpu), its log to $OUT/ctest-gpu.log.
set -o pipefail
cd /work/main
rm -rf build && cp -a .device/build build
rm -f .device/lib/libstdc++.so.6
export LD_LIBRARY_PATH=$PWD/.device/lib
echo "commit $(cat .device/COMMIT)"; nvidia-smi -L
timeout ${LIMIT:-570} ctest --test-dir build -L gpu -j4 --output-on-failure > $OUT/ctest-gpu.log 2>&1; echo "ctest exit $?"
grep -E "Test +#|tests passed|FAIL|Total" $OUT/ctest-gpu.log | head -30
