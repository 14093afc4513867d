#!/bin/bash
# study4.sh: issue 30's random-sizes study of filter and matadd in the three set-ups on a machine
# of four GPUs, one type a GPU (f32, f16, bf16, f64 on 0-3), after fill.sh on the same warm
# machine: the shipped H100 document merged with fill.sh's exports (build/fill/*.json.gz; import,
# export, results/compact.py, as a document to ship is made; back as
# $OUT/nvidia-h100-80gb-hbm3.json.gz) and served in set-up (a); (b) and (c) are fill.sh's default
# job's build/random/{merged,tuned}.db, a copy a type. The draw of bench/serve/random.sh (seed 1;
# 20 sizes in f32, 10 in each other type); exact tunings brought in .device/s1 and .device/s2
# (exact-TYPE.db.gz: filter's) resumed, matadd's tuned here, all back in $OUT/exact.tar. Each
# type's JSON to $OUT/random-TYPE.json, the logs to $OUT/random-logs.txt.
cd /work/main
mkdir -p build && for d in .device/build/*; do rm -rf "build/${d##*/}"; done && cp -a .device/build/. build/
rm -f .device/lib/libstdc++.so.6
export LD_LIBRARY_PATH=$PWD/.device/lib
commit=$(cat .device/COMMIT)+merged t0=$(date +%s)
echo "commit $commit"; nvidia-smi -L
dir=build/random results=build/share/pmtune/results; mkdir -p $dir
[ -f $dir/tuned.db ] && [ -f $dir/merged.db ] || { echo "no tuned.db or merged.db: run fill.sh's default first"; exit 1; }
rm -f /tmp/merge.db
for doc in results/nvidia-h100-80gb-hbm3.json.gz build/fill/*.json.gz; do
  PMTUNE_RESULTS=none build/tools/pmtune import $doc --db /tmp/merge.db > /dev/null || exit 1
done
PMTUNE_RESULTS=none build/tools/pmtune export /tmp/merge.json --db /tmp/merge.db &&
  python3 results/compact.py /tmp/merge.json &&
  gzip -9 -n -c /tmp/merge.json > $results/nvidia-h100-80gb-hbm3.json.gz || exit 1
cp $results/nvidia-h100-80gb-hbm3.json.gz $OUT/ && echo "merged $(ls build/fill/*.json.gz | wc -l) exports at $(( $(date +%s) - t0 )) s"
types=(f32 f16 bf16 f64)
for d in 0 1 2 3; do
  t=${types[$d]}
  ( for f in .device/s1/exact-$t.db.gz .device/s2/exact-$t.db.gz; do
      [ -f $f ] && gunzip -c $f > $dir/exact-$t.db
    done
    [ -f $dir/exact-$t.db ] || echo "$t: no exact tuning brought; tuning all here"
    rm -f $dir/empty-$t.db && cp $dir/tuned.db $dir/tuned-$t.db && cp $dir/merged.db $dir/merged-$t.db
    PMTUNE_RESULTS=$results timeout 500 build/tools/pmtune_bench_random $dir/exact-$t.db \
      --setup shipped=$dir/empty-$t.db:shipped --setup merged=$dir/merged-$t.db:shipped \
      --setup tuned=$dir/tuned-$t.db:shipped --seed 1 --f32 20 --other 10 --ops filter,matadd \
      --dtypes $t --device $d --commit $commit > $OUT/random-$t.json 2> $dir/random-$t.log
    echo "$t exit $? at $(( $(date +%s) - t0 )) s" ) &
done
wait
cat $dir/random-*.log > $OUT/random-logs.txt
(cd $dir && for t in ${types[@]}; do gzip -1 -c exact-$t.db > exact-$t.db.gz; done && tar cf $OUT/exact.tar exact-*.db.gz)
grep -h '"kind":"target"' $OUT/random-*.json | cut -c1-200
grep -h '"kind":"summary"' $OUT/random-*.json | cut -c1-260
