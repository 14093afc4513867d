#!/bin/bash
# gpu12.sh: the tutorial's steps 4 and 5 (examples/kernels/README.md) as written, on one H100:
# tune the matadd example, bench and show it, then the tutorial's program at the tuned size, at
# another, and with no database.
set -o pipefail
cd /work/main
export LD_LIBRARY_PATH=$PWD/.device/lib PM_COMMIT=$(cat .device/COMMIT) PMTUNE_RESULTS=none
export PMTUNE_DB=/tmp/tutorial.db
echo "commit $PM_COMMIT"; nvidia-smi -L
rm -f $PMTUNE_DB
{ build/tools/pmtune tune --kernel examples/kernels/matadd.json --size 10000x10000 --size 4097x3001; echo "tune exit $?"
  build/tools/pmtune bench --kernel examples/kernels/matadd.json --size 10000x10000 --size 4097x3001; echo "bench exit $?"
  build/tools/pmtune show; echo "show exit $?"
  build/tools/pmtune_call_matadd examples/kernels/matadd.json 4097 3001; echo "call exit $?"
  build/tools/pmtune_call_matadd examples/kernels/matadd.json 1000 999; echo "call exit $?"
  PMTUNE_DB=/nonexistent/pmtune.db build/tools/pmtune_call_matadd examples/kernels/matadd.json 5 7; echo "call exit $?"
} > $OUT/tutorial.txt 2>&1
cat $OUT/tutorial.txt | grep -v "ETA"
