#!/bin/bash
# gpu2.sh (H200): after reduce's change of d01a18b and 2^30 out of the default sizes: the default tuning
# (f32, and bf16 for every op) timed and exported as the shipped results of this GPU.
set -o pipefail
cd /work/main
export LD_LIBRARY_PATH=$PWD/.device/lib PM_COMMIT=$(cat .device/COMMIT) PMTUNE_RESULTS=none
echo "commit $PM_COMMIT"; nvidia-smi -L
nvidia-smi -L | grep -q H200 || { echo "not an H200: nothing done"; exit 3; }
rm -f /tmp/main.db
timeout 330 build/tools/pmtune tune --device 0 --db /tmp/main.db > $OUT/tune.txt 2>&1; echo "tune exit $?"; tail -2 $OUT/tune.txt
grep "^gpu" $OUT/tune.txt | grep -v ' all ' | sed -E 's/^gpu [0-9]+ +([a-z]+) .*; ([0-9.]+) s \(.*/\1 \2/' | awk '{s[$1]+=$2} END {for (o in s) print o, s[o], "s"}'
build/tools/pmtune export /tmp/winners.json --db /tmp/main.db; echo "export exit $?"
gzip -9 -c /tmp/winners.json > $OUT/winners.json.gz
build/tools/pmtune show --db /tmp/main.db > $OUT/show.txt 2>&1
