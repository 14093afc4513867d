#!/bin/bash
# floor.sh: bench/experiments/known_floor.patch (landed since; git show
# e10d228:bench/experiments/known_floor.patch) against the library at reduce's random sizes on two
# H200s in one call, from the shipped results alone: a build of the patch decides as the library
# does where PM_EXP_FLOOR is unset (study.sh's "without" runs of seed 2 had it set to the empty
# string, which the patch takes as set: both were the patch's), and with it set, the patch's way;
# each draw's problems tuned exactly once, then timed in a run each way.
# On two GPUs: on GPU 0 seed 2, 40 sizes in f32 and 20 in each other type; on GPU 1 seed 3, then
# seed 4, 20 and 10. On one: seeds 3, 4, then 2, one after the other, until LIMIT.
# Each run's output to $OUT/random-shipped-reduce-seedS-{library,floor}.json.
cd /work/main
mkdir -p build && for d in .device/build/*; do rm -rf "build/${d##*/}"; done && cp -a .device/build/. build/
cp results/*.json.gz build/share/pmtune/results/
rm -f .device/lib/libstdc++.so.6
export LD_LIBRARY_PATH=$PWD/.device/lib PM_COMMIT=$(cat .device/COMMIT) PMTUNE_RESULTS=build/share/pmtune/results
echo "commit $PM_COMMIT"; nvidia-smi -L
t0=$(date +%s) end=$(( $(date +%s) + ${LIMIT:-560} ))
draw() { # draw SEED F32 OTHER
  [ $(( end - $(date +%s) )) -gt 30 ] || { echo "seed $1: no time left"; return; }
  mkdir -p build/f$1
  for way in library floor; do
    ( [ $way = floor ] && export PM_EXP_FLOOR=1 || unset PM_EXP_FLOOR
      timeout $(( end - $(date +%s) )) build/tools/pmtune_bench_random build/f$1/exact.db \
        --setup shipped=build/f$1/empty.db:shipped --seed $1 --f32 $2 --other $3 --ops reduce \
        --commit $PM_COMMIT > $OUT/random-shipped-reduce-seed$1-$way.json 2> $OUT/random-log-reduce-seed$1-$way.txt )
    echo "seed $1 $way exit $? at $(( $(date +%s) - t0 )) s"
  done
}
if [ $(nvidia-smi -L | wc -l) -ge 2 ]; then
  ( export CUDA_VISIBLE_DEVICES=0; draw 2 40 20 ) &
  ( export CUDA_VISIBLE_DEVICES=1; draw 3 20 10; draw 4 20 10 ) &
  wait
else
  draw 3 20 10; draw 4 20 10; draw 2 40 20
fi
for f in $OUT/random-shipped-*.json; do echo "$f"; grep -h '"kind":"target"' $f | cut -c1-300; done
