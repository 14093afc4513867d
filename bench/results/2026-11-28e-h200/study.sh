#!/bin/bash
# study.sh: issue 30's random-sizes study on two H200s in one call, with the H200 document that
# ../2026-11-28c-h200/merge.sh makes (the shipped one with the H200's own search merged in),
# carried as .device/cand/nvidia-h200.json.gz and put in place of the shipped one, and a build of
# bench/experiments/known_floor.patch (PM_EXP_FLOOR set: its prediction; unset: the library's; since
# landed and removed: git show e10d228:bench/experiments/known_floor.patch).
# GPU 0: bench/serve/random.sh, seed 1 (the draw of ../2026-11-28b-h200, which the shipped document
#   served), reduce then filter, the three set-ups (shipped, merged, tuned); then reduce's problems
#   timed again with PM_EXP_FLOOR=1 (exact tunings stored: timing only).
# GPU 1: reduce, seed 2, 40 sizes in f32 and 20 in each other type, each tuned exactly, served from
#   the shipped results alone (an empty database), without and then with PM_EXP_FLOOR; then filter,
#   seed 2, 20 and 10, the same set-up, without the switch. (As it ran, "without" set PM_EXP_FLOOR
#   to the empty string, which the patch takes as set: both runs of seed 2 decided the patch's way,
#   as the library does since it landed; floor.sh compares the two. Fixed here since: unset.)
# Everything under build/e, tarred to $OUT/study.tar.gz after each step; stopped at LIMIT (default
# 555) s.
cd /work/main
mkdir -p build && for d in .device/build/*; do rm -rf "build/${d##*/}"; done && cp -a .device/build/. build/
rm -f .device/lib/libstdc++.so.6
export LD_LIBRARY_PATH=$PWD/.device/lib PM_COMMIT=$(cat .device/COMMIT)
echo "commit $PM_COMMIT"; nvidia-smi -L
nvidia-smi -L | grep -q H200 || { echo "no H200 came: nothing run"; exit 3; }
cp .device/cand/nvidia-h200.json.gz build/share/pmtune/results/nvidia-h200.json.gz
PM_COMMIT+=+merged
t0=$(date +%s) end=$(( $(date +%s) + ${LIMIT:-555} ))
left() { echo $(( end - $(date +%s) )); }
mkdir -p build/e
save() { tar -C build -czf $OUT/study.tar.gz e 2>/dev/null; }
gpu0() {
  export CUDA_VISIBLE_DEVICES=0
  for op in reduce filter; do
    SKIP_TUNE=1 OPS=$op DBDIR=build/e/r0 timeout $(left) bench/serve/random.sh build/e/seed1-$op \
      > build/e/seed1-$op.log 2>&1
    echo "gpu0 seed 1 $op exit $? at $(( $(date +%s) - t0 )) s"; save
  done
  PM_EXP_FLOOR=1 PMTUNE_RESULTS=build/share/pmtune/results timeout $(left) \
    build/tools/pmtune_bench_random build/e/r0/exact.db --setup shipped=build/e/r0/empty.db:shipped \
    --setup merged=build/e/r0/merged.db:shipped --setup tuned=build/e/r0/tuned.db:shipped \
    --seed 1 --f32 20 --other 10 --ops reduce --commit $PM_COMMIT+floor \
    > build/e/seed1-reduce-floor.json 2> build/e/seed1-reduce-floor.log
  echo "gpu0 seed 1 reduce floor exit $? at $(( $(date +%s) - t0 )) s"; save
}
gpu1() {
  export PMTUNE_RESULTS=build/share/pmtune/results
  export CUDA_VISIBLE_DEVICES=1
  mkdir -p build/e/r1
  for f in "" 1; do
    if [ -n "$f" ]; then export PM_EXP_FLOOR=$f; else unset PM_EXP_FLOOR; fi
    timeout $(left) build/tools/pmtune_bench_random build/e/r1/exact.db \
      --setup shipped=build/e/r1/empty.db:shipped --seed 2 --f32 40 --other 20 --ops reduce \
      --commit $PM_COMMIT${f:++floor} > build/e/seed2-reduce${f:+-floor}.json \
      2> build/e/seed2-reduce${f:+-floor}.log
    echo "gpu1 seed 2 reduce floor=$f exit $? at $(( $(date +%s) - t0 )) s"; save
  done
  unset PM_EXP_FLOOR
  timeout $(left) build/tools/pmtune_bench_random build/e/r1/exact.db \
    --setup shipped=build/e/r1/empty.db:shipped --seed 2 --f32 20 --other 10 --ops filter \
    --commit $PM_COMMIT > build/e/seed2-filter.json 2> build/e/seed2-filter.log
  echo "gpu1 seed 2 filter exit $? at $(( $(date +%s) - t0 )) s"; save
}
gpu0 & gpu1 & wait
save
for f in build/e/*.json build/e/seed1-*/random.json; do
  echo "== $f"; grep -h '"kind":"target"' $f | cut -c1-300
done
