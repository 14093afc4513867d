#!/bin/bash
# study4.sh [OP]: issue 30's random-sizes study of one op (default filter) on a machine of four
# GPUs, one type per GPU (f32, f16, bf16, f64 on GPUs 0-3), the same draw as
# bench/serve/random.sh's (seed 1; 20 sizes in f32, 10 in each other type; each op and type
# draws alone, so splitting by type changes no size). GPU 0 first makes set-ups (c) tuned (the
# default `pmtune tune`) and (b) merged (its export imported into a fresh database) while the
# others tune their sizes exactly and time set-up (a) shipped; then every type is timed in the
# three set-ups, each pair in one run (the exact tunings stored: timing alone). All served the
# shipped results of this build; with MERGE="DOC ...", its H100 document merged with those
# export documents first (import, export, results/compact.py: as a document to ship is made; back
# in $OUT). Databases a call before brought back in .device/study (exact-TYPE.db, tuned.db) are
# resumed. Back: $OUT/study.tar.gz (each type's JSON and log), the databases in $OUT/dbs.tar.gz.
cd /work/main
mkdir -p build && for d in .device/build/*; do rm -rf "build/${d##*/}"; done && cp -a .device/build/. build/
rm -f .device/lib/libstdc++.so.6
export LD_LIBRARY_PATH=$PWD/.device/lib
commit=$(cat .device/COMMIT); op=${1:-filter}
echo "commit $commit"; nvidia-smi -L
dir=build/random out=/tmp/study; mkdir -p $dir $out
cp .device/study/*.db $dir/ 2>/dev/null
results=build/share/pmtune/results types=(f32 f16 bf16 f64) t0=$(date +%s)
if [ -n "$MERGE" ]; then
  rm -f /tmp/merge.db
  for doc in results/nvidia-h100-80gb-hbm3.json.gz $MERGE; do
    PMTUNE_RESULTS=none build/tools/pmtune import $doc --db /tmp/merge.db || exit 1
  done
  PMTUNE_RESULTS=none build/tools/pmtune export /tmp/merge.json --db /tmp/merge.db &&
    python3 results/compact.py /tmp/merge.json &&
    gzip -9 -n -c /tmp/merge.json > $results/nvidia-h100-80gb-hbm3.json.gz || exit 1
  cp $results/nvidia-h100-80gb-hbm3.json.gz $OUT/ && echo "merged at $(( $(date +%s) - t0 )) s"
fi
run() { # run GPU TYPE SETUP...: one pmtune_bench_random of TYPE on GPU
  local d=$1 t=$2; shift 2
  PMTUNE_RESULTS=$results build/tools/pmtune_bench_random $dir/exact-$t.db "$@" --seed 1 --f32 20 \
    --other 10 --ops $op --dtypes $t --device $d --commit $commit
}
( [ -f $dir/tuned.db ] || build/tools/pmtune tune --device 0 --db $dir/tuned.db > $out/tune-default.txt 2>&1
  echo "tune-default exit $? at $(( $(date +%s) - t0 )) s"
  rm -f $dir/merged.db && build/tools/pmtune export $dir/node.json --db $dir/tuned.db &&
    build/tools/pmtune import $dir/node.json --db $dir/merged.db && build/tools/pmtune db check --db $dir/merged.db
) > $out/merge.txt 2>&1 &
for d in 1 2 3; do
  t=${types[$d]}
  ( run $d $t --setup shipped=$dir/empty-$t.db:shipped > $out/first-$t.json 2> $out/first-$t.log
    echo "first $t exit $? at $(( $(date +%s) - t0 )) s" ) &
done
wait
run 0 f32 --setup shipped=$dir/empty-f32.db:shipped > $out/first-f32.json 2> $out/first-f32.log &
for d in 1 2 3; do
  t=${types[$d]}
  ( run $d $t --setup shipped=$dir/empty-$t.db:shipped --setup merged=$dir/merged.db:shipped \
      --setup tuned=$dir/tuned.db:shipped > $out/random-$t.json 2> $out/random-$t.log
    echo "three $t exit $? at $(( $(date +%s) - t0 )) s" ) &
done
wait
run 0 f32 --setup shipped=$dir/empty-f32.db:shipped --setup merged=$dir/merged.db:shipped \
  --setup tuned=$dir/tuned.db:shipped > $out/random-f32.json 2> $out/random-f32.log
echo "three f32 exit $? at $(( $(date +%s) - t0 )) s"
cat $out/merge.txt
tar -C /tmp -czf $OUT/study.tar.gz study
tar -C $dir -czf $OUT/dbs.tar.gz tuned.db $(cd $dir && ls exact-*.db)
for t in ${types[@]}; do grep '"kind":"target"' $out/random-$t.json | cut -c1-300; done
