#!/bin/bash
# last.sh: the session's last GPU run, after issue 31's merges: the whole GPU suite; the grid of
# add in bf16 and f64 (which grid4.sh's run left out) into /tmp/add.db, exported to
# $OUT/grid-add-bf16-f64.json.gz; and README command 1's explain step with the build's shipped
# results (an empty database), beside add bf16 at 15,000,000 (served before by the H200's).
set -o pipefail
cd /work/main
rm -rf build && cp -a .device/build build
rm -f .device/lib/libstdc++.so.6
export LD_LIBRARY_PATH=$PWD/.device/lib PM_COMMIT=$(cat .device/COMMIT)
echo "commit $PM_COMMIT"; nvidia-smi -L
PMTUNE_RESULTS=none timeout 300 ctest --test-dir build -L gpu -j3 --output-on-failure > $OUT/ctest-gpu.log 2>&1
echo "ctest exit $?"; grep -E "Test +#|tests passed|FAIL" $OUT/ctest-gpu.log | head -20
rm -f /tmp/add.db*
PMTUNE_RESULTS=none timeout 150 build/tools/pmtune tune --grid --op add --dtype bf16,f64 --device 0 \
  --db /tmp/add.db > $OUT/tune-grid-add-bf16-f64.txt 2>&1
echo "grid add exit $?"; grep -E "carry|^gpu 0  all" $OUT/tune-grid-add-bf16-f64.txt
PMTUNE_RESULTS=none build/tools/pmtune export /tmp/add.json --db /tmp/add.db && gzip -9 -c /tmp/add.json > $OUT/grid-add-bf16-f64.json.gz
rm -f /tmp/empty.db
{ build/tools/pmtune explain --op reduce --size 3000000 --db /tmp/empty.db
  build/tools/pmtune explain --op add --dtype bf16 --size 15000000 --db /tmp/empty.db; } > $OUT/explain-shipped.txt 2>&1
echo "explain exit $?"; cat $OUT/explain-shipped.txt
