#!/bin/bash
# study2a.sh [OP]: issue 30's random-sizes study of one op (default filter), set-up (a) alone
# (an empty database and the shipped results of this build), on a machine of two GPUs: f32
# then f64 on GPU 0, f16 then bf16 on GPU 1; the same draw as study4.sh (seed 1; 20 sizes in
# f32, 10 in each other type), each size tuned exactly, then served and timed in one run. For
# when no machine of four GPUs is lent (set-ups (b) and (c) need the default tuning beside, which
# does not fit one call of two GPUs). Each type's JSON and log to $OUT/random-TYPE.json, .log.
cd /work/main
mkdir -p build && for d in .device/build/*; do rm -rf "build/${d##*/}"; done && cp -a .device/build/. build/
rm -f .device/lib/libstdc++.so.6
export LD_LIBRARY_PATH=$PWD/.device/lib
commit=$(cat .device/COMMIT); op=${1:-filter}
echo "commit $commit"; nvidia-smi -L
dir=build/random; mkdir -p $dir
results=build/share/pmtune/results t0=$(date +%s)
run() { # run GPU TYPE: set-up (a) of TYPE on GPU
  local d=$1 t=$2
  PMTUNE_RESULTS=$results build/tools/pmtune_bench_random $dir/exact-$t.db --setup shipped=$dir/empty-$t.db:shipped \
    --seed 1 --f32 20 --other 10 --ops $op --dtypes $t --device $d --commit $commit \
    > $OUT/random-$t.json 2> $OUT/random-$t.log
  echo "$t exit $? at $(( $(date +%s) - t0 )) s"
}
( run 0 f32; run 0 f64 ) &
( run 1 f16; run 1 bf16 ) &
wait
for t in f32 f16 bf16 f64; do grep '"kind":"target"' $OUT/random-$t.json | cut -c1-300; done
