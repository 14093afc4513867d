#!/bin/bash
# grid4.sh [BUDGET]: the grid results/ ships (pmtune tune --grid) on a machine of four GPUs, one
# type per GPU (f32, f16, bf16, f64 on GPUs 0-3), each into its own database in build/grid (kept
# there while the machine stays warm: running this again resumes what a stopped run left), its
# output to $OUT/tune-grid-TYPE.txt and its export to $OUT/grid-TYPE.json.gz. Each run starts no
# new candidate after TIME seconds (default 480), so that exporting fits the device's 600 s.
cd /work/main
[ -d build/tools ] || cp -a .device/build build
rm -f .device/lib/libstdc++.so.6
export LD_LIBRARY_PATH=$PWD/.device/lib PMTUNE_RESULTS=none
echo "commit $(cat .device/COMMIT)"; nvidia-smi -L
mkdir -p build/grid
types=(f32 f16 bf16 f64)
for d in 0 1 2 3; do
  t=${types[$d]}
  ( t0=$(date +%s)
    build/tools/pmtune tune --grid --dtype $t --device $d --budget ${1:-100} --time ${TIME:-480} \
      --db build/grid/$t.db >> $OUT/tune-grid-$t.txt 2>&1
    echo "grid $t exit $? in $(( $(date +%s) - t0 )) s"
    build/tools/pmtune export /tmp/grid-$t.json --db build/grid/$t.db && gzip -9 -c /tmp/grid-$t.json > $OUT/grid-$t.json.gz
  ) &
done
wait
for t in ${types[@]}; do grep -E "^gpu [0-9]  (all|carry)" $OUT/tune-grid-$t.txt | tail -3; grep -c candidates $OUT/tune-grid-$t.txt; done
ls -la $OUT
