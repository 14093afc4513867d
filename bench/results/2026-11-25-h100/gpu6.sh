#!/bin/bash
# gpu6.sh: filter with ox=8 and 16-byte rows for 16-bit types: the default tuning (its time, and
# exported as the shipped H100 results), then filter bf16 and f16 3x3 8192x8192 benched (bf16 from
# the default tuning, f16 tuned exactly), f32 beside them.
set -o pipefail
cd /work/main
rm -f .device/lib/libstdc++.so.6
export LD_LIBRARY_PATH=$PWD/.device/lib PM_COMMIT=$(cat .device/COMMIT) PMTUNE_RESULTS=none
echo "commit $PM_COMMIT"; nvidia-smi -L
rm -f /tmp/main.db
timeout 330 build/tools/pmtune tune --device 0 --db /tmp/main.db > $OUT/tune.txt 2>&1; echo "tune exit $?"; tail -2 $OUT/tune.txt
grep "^gpu" $OUT/tune.txt | grep -v ' all ' | sed -E 's/^gpu [0-9]+ +([a-z]+) .*; ([0-9.]+) s \(.*/\1 \2/' | awk '{s[$1]+=$2} END {for (o in s) print o, s[o], "s"}'
grep -A1 "filter .*bf16" $OUT/tune.txt
build/tools/pmtune export /tmp/winners.json --db /tmp/main.db; echo "export exit $?"
gzip -9 -c /tmp/winners.json > $OUT/winners.json.gz
build/tools/pmtune show --db /tmp/main.db > $OUT/show.txt 2>&1
timeout 60 build/tools/pmtune tune --op filter --dtype f16 --size 8192x8192 --radius 1 --device 0 --db /tmp/main.db > $OUT/tune-filter-f16.txt 2>&1; echo "f16 tune exit $?"; grep -A1 "^gpu 0  filter" $OUT/tune-filter-f16.txt
timeout 90 build/tools/pmtune bench --op filter --dtype f32,f16,bf16 --size 8192x8192:r1 --device 0 --db /tmp/main.db > $OUT/bench-filter.txt 2>&1; echo "bench exit $?"; cat $OUT/bench-filter.txt
