#!/bin/bash
# gpu9.sh: the whole GPU suite on one H100 (ctest -L gpu -j4: test_gpu_kernel_file among it,
# after the problem text and re-timing's max_error mends), then `pmtune show` of a database that
# holds a kernel of one's own (gpu8.sh's show line asked for --device, which show has not).
set -o pipefail
cd /work/main
export LD_LIBRARY_PATH=$PWD/.device/lib PM_COMMIT=$(cat .device/COMMIT)
echo "commit $PM_COMMIT"; nvidia-smi -L
rm -f /tmp/s.db
PMTUNE_RESULTS=none timeout 60 build/tools/pmtune tune --kernel examples/kernels/transpose.json --size 4097x3001 --device 0 --db /tmp/s.db > $OUT/tune-show.txt 2>&1; echo "tune exit $?"
timeout 30 build/tools/pmtune show --db /tmp/s.db >> $OUT/tune-show.txt 2>&1; echo "show exit $?"; cat $OUT/tune-show.txt
timeout 560 ctest --test-dir build -L gpu -j4 --output-on-failure > $OUT/ctest-gpu.log 2>&1; echo "ctest exit $?"
grep -E "Test +#|tests passed|FAIL|Assertion" $OUT/ctest-gpu.log | head -40
