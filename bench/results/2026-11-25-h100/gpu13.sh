#!/bin/bash
# gpu13.sh: on one H100, twice: test_gpu_kernel_file (with the reference kernel's case) and the
# quick GPU tests that serving touched (test_gpu_serve, test_gpu_graphs, test_gpu_tune), then
# explain, export, import and report of a kernel of one's own on a database tuned here.
set -o pipefail
cd /work/main
export LD_LIBRARY_PATH=$PWD/.device/lib PM_COMMIT=$(cat .device/COMMIT) PMTUNE_RESULTS=none
echo "commit $PM_COMMIT"; nvidia-smi -L
for i in 1 2; do timeout 200 ctest --test-dir build -R "test_gpu_kernel_file|test_gpu_serve|test_gpu_graphs|test_gpu_tune" -j4 --output-on-failure; echo "ctest exit $?"; done > $OUT/ctest-gpu-kernel.log 2>&1
grep -E "Test +#|tests passed|FAIL|Assertion" $OUT/ctest-gpu-kernel.log | head -20
K=examples/kernels/transpose.json
rm -f /tmp/e.db /tmp/f.db /tmp/e.json
{ build/tools/pmtune tune --kernel $K --size 4097x3001 --db /tmp/e.db | grep -v ETA; echo "tune exit $?"
  build/tools/pmtune explain --kernel $K --size 4097x3001 --db /tmp/e.db; echo "explain exit $?"
  build/tools/pmtune explain --kernel $K --size 1000x1000 --db /tmp/e.db; echo "explain exit $?"
  build/tools/pmtune explain --kernel $K --size 1000x1000 --json --db /tmp/nonexistent.db; echo "explain exit $?"
  build/tools/pmtune export /tmp/e.json --kernel $K --db /tmp/e.db; echo "export exit $?"
  build/tools/pmtune import /tmp/e.json --kernel $K --db /tmp/f.db; echo "import exit $?"
  build/tools/pmtune show --db /tmp/f.db; echo "show exit $?"
  build/tools/pmtune report --svg /tmp/e.svg --kernel $K --db /tmp/f.db; echo "report exit $?"; } > $OUT/kernel-commands.txt 2>&1
cat $OUT/kernel-commands.txt
