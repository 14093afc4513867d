#!/bin/bash
# gpu16.sh: a kernel of one's own tuned with --device all on a machine of two GPUs (one worker a
# GPU, one database), then again (everything stored: nothing measured), and show.
set -o pipefail
cd /work/main
export LD_LIBRARY_PATH=$PWD/.device/lib PM_COMMIT=$(cat .device/COMMIT) PMTUNE_RESULTS=none
echo "commit $PM_COMMIT"; nvidia-smi -L
rm -f /tmp/two.db
{ build/tools/pmtune tune --kernel examples/kernels/matadd.json --size 4097x3001 --size 1000x1000 --device all --db /tmp/two.db; echo "exit $?"
  build/tools/pmtune tune --kernel examples/kernels/matadd.json --size 4097x3001 --size 1000x1000 --device all --db /tmp/two.db; echo "exit $?"
  build/tools/pmtune show --db /tmp/two.db; echo "exit $?"; } 2>&1 | grep -v ETA | tee $OUT/tune-device-all.txt
