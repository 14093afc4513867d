#!/bin/bash
# gpu4.sh: at 12e64a0: the default tuning (now f32, and bf16 for matadd and add), exported as the
# shipped H100 results; then matadd and add in f16, bf16 and f64 at issue 16's sizes, tuned
# exactly (their GB/s), and pmtune bench's copy ceiling at those sizes for the comparison.
set -o pipefail
cd /work/main
export LD_LIBRARY_PATH=$PWD/.device/lib PM_COMMIT=$(cat .device/COMMIT) PMTUNE_RESULTS=none
echo "commit $PM_COMMIT"; nvidia-smi -L
rm -f /tmp/main.db /tmp/typed.db
timeout 330 build/tools/pmtune tune --device 0 --db /tmp/main.db > $OUT/tune.txt 2>&1; echo "tune exit $?"; tail -2 $OUT/tune.txt
build/tools/pmtune export /tmp/winners.json --db /tmp/main.db; echo "export exit $?"
gzip -9 -c /tmp/winners.json > $OUT/winners.json.gz
timeout 150 build/tools/pmtune tune --device 0 --op matadd --size 10000x10000 --size 8192x8192 --dtype f16,bf16,f64 --db /tmp/typed.db > $OUT/tune-typed.txt 2>&1; echo "typed tune exit $?"
grep "^gpu" $OUT/tune-typed.txt
build/tools/pmtune show --db /tmp/typed.db > $OUT/show-typed.txt 2>&1; cat $OUT/show-typed.txt
timeout 60 build/tools/pmtune bench --op matadd --size 10000x10000 --size 8192x8192 --db /tmp/main.db > $OUT/bench-matadd-f32.txt 2>&1; echo "bench exit $?"
cat $OUT/bench-matadd-f32.txt | head -30
