#!/bin/bash
# study.sh: issue 30's random-sizes study on two H200s in one call, at two new draws (seeds 4 and
# 5), every op in the three set-ups (shipped, merged, tuned), at this build with the shipped
# results; filter's exact tunings are those gpu.sh stored (exact-filter-seedS-*.db.gz, timing
# alone here), the other ops' are tuned here.
# GPU 0: bench/serve/random.sh, seed 4 (the default `pmtune tune`, its export imported into the
#   merged set-up's database, then pmtune_bench_random).
# GPU 1: once GPU 0's tuned and merged databases exist, pmtune_bench_random at seed 5 in the same
#   three set-ups (copies of those databases).
# Outputs under build/g (databases aside) tarred to $OUT/study.tar.gz after each step; stopped at
# LIMIT (default 560) s.
cd /work/main
mkdir -p build && for d in .device/build/*; do rm -rf "build/${d##*/}"; done && cp -a .device/build/. build/
cp results/*.json.gz build/share/pmtune/results/ # the pack leaves them out (the 64 MiB a call carries)
rm -f .device/lib/libstdc++.so.6
export LD_LIBRARY_PATH=$PWD/.device/lib PM_COMMIT=$(cat .device/COMMIT)
echo "commit $PM_COMMIT"; nvidia-smi -L
nvidia-smi -L | grep -q H200 || { echo "no H200 came: nothing run"; exit 3; }
here=bench/results/2026-11-28g-h200
t0=$(date +%s) end=$(( $(date +%s) + ${LIMIT:-560} ))
left() { echo $(( end - $(date +%s) )); }
mkdir -p build/g/s4 build/g/s5 build/g/out-s4 build/g/out-s5
for s in 4 5; do
  [ -f build/g/s$s/exact.db ] || gunzip -c $here/exact-filter-seed$s-c4e26f8.db.gz > build/g/s$s/exact.db
done
save() { tar -C build/g --exclude "*.db" --exclude "*.db-*" --exclude "*.json.gz" -czf $OUT/study.tar.gz . 2>/dev/null; }
( export CUDA_VISIBLE_DEVICES=0
  SEED=4 DBDIR=build/g/s4 SKIP_TUNE=1 timeout $(left) bench/serve/random.sh build/g/out-s4 \
    > build/g/out-s4/run.log 2>&1
  echo "gpu0 seed 4 exit $? at $(( $(date +%s) - t0 )) s"; save ) &
( export CUDA_VISIBLE_DEVICES=1
  while [ ! -e build/g/out-s4/random.log ] && [ $(left) -gt 0 ]; do sleep 2; done # the study's phase
  cp build/g/s4/tuned.db build/g/s5/tuned.db; cp build/g/s4/merged.db build/g/s5/merged.db
  d=build/g/s5
  PMTUNE_RESULTS=build/share/pmtune/results timeout $(left) build/tools/pmtune_bench_random \
    $d/exact.db --setup shipped=$d/empty.db:shipped --setup merged=$d/merged.db:shipped \
    --setup tuned=$d/tuned.db:shipped --seed 5 --f32 20 --other 10 --commit $PM_COMMIT \
    > build/g/out-s5/random.json 2> build/g/out-s5/random.log
  echo "gpu1 seed 5 exit $? at $(( $(date +%s) - t0 )) s"; save ) &
wait
save
for s in 4 5; do grep -h '"kind":"target"' build/g/out-s$s/random.json | cut -c1-330; done
ls -la $OUT
