#!/bin/bash
# gpu3.sh (H200): on the device, after the reduce template change of 705c7ea (issue 14): the default tuning of every op (what pmtune ships for this GPU model,
# issue 17), exported twice: the winners and every measurement (pmtune export --all), gzipped.
set -o pipefail
cd /work/main
export LD_LIBRARY_PATH=$PWD/.device/lib
echo "commit $(cat .device/COMMIT)"; nvidia-smi -L
timeout 400 build/tools/pmtune tune --device 0 --db /tmp/ship.db > $OUT/tune.txt 2>&1; echo "tune exit $?"; tail -2 $OUT/tune.txt
build/tools/pmtune export /tmp/winners.json --db /tmp/ship.db && build/tools/pmtune export /tmp/all.json --all --db /tmp/ship.db; echo "export exit $?"
ls -la /tmp/winners.json /tmp/all.json; gzip -9 -c /tmp/all.json > $OUT/all.json.gz; gzip -9 -c /tmp/winners.json > $OUT/winners.json.gz; ls -la $OUT
