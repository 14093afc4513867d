#!/bin/bash
# gpu1.sh: after 1cd179b (points that launch alike measured once; reduce 2^22 and filter 2048x2048
# among the default tune sizes): the default tuning, exported as the shipped H100 results; then
# the between study with the same tuning as its MAIN_DB (bench/serve/between.sh, seed 1, 20 sizes
# an op), as 2026-11-23-h100/gpu27.sh did for 705c7ea.
set -o pipefail
cd /work/main
export LD_LIBRARY_PATH=$PWD/.device/lib PM_COMMIT=$(cat .device/COMMIT)
echo "commit $PM_COMMIT"; nvidia-smi -L
mkdir -p build/between && rm -f build/between/*.db
timeout 300 build/tools/pmtune tune --device 0 --db build/between/main.db > $OUT/tune.txt 2>&1; echo "tune exit $?"; tail -2 $OUT/tune.txt
build/tools/pmtune export /tmp/winners.json --db build/between/main.db; echo "export exit $?"
gzip -9 -c /tmp/winners.json > $OUT/winners.json.gz
timeout 420 bench/serve/between.sh $OUT/between 20 > $OUT/between.out 2>&1; echo "between exit $?"
tail -12 $OUT/between.out
