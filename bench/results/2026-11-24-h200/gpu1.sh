#!/bin/bash
# gpu1.sh (H200): at d3bd06d's library (templates of 12e64a0, default sizes of c6bba79): the
# default tuning, exported as the shipped H200 results (results/nvidia-h200.json).
set -o pipefail
cd /work/main
export LD_LIBRARY_PATH=$PWD/.device/lib PM_COMMIT=$(cat .device/COMMIT) PMTUNE_RESULTS=none
echo "commit $PM_COMMIT"; nvidia-smi -L
rm -f /tmp/main.db
timeout 330 build/tools/pmtune tune --device 0 --db /tmp/main.db > $OUT/tune.txt 2>&1; echo "tune exit $?"; tail -2 $OUT/tune.txt
build/tools/pmtune export /tmp/winners.json --db /tmp/main.db; echo "export exit $?"
gzip -9 -c /tmp/winners.json > $OUT/winners.json.gz
build/tools/pmtune show --db /tmp/main.db > $OUT/show.txt 2>&1
