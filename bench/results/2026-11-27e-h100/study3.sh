#!/bin/bash
# study3.sh TYPE...: issue 30's random-sizes study of filter on one GPU in the three set-ups,
# (a) shipped, (b) merged and (c) tuned, the types given one after another: the draw of
# bench/serve/random.sh (seed 1; 20 sizes in f32, 10 in each other type), each pair in one run.
# Set-up (c) is the default `pmtune tune` into build/random/tuned.db, (b) its export imported into
# a fresh database; both are made once and kept for a later call on the same warm machine. Exact
# tunings brought in .device/study/exact-TYPE.db.gz are resumed (timing alone). With MERGE="DOC
# ...", the H100 document of this build merged with those exports first (import, export,
# results/compact.py, as a document to ship is made; back as $OUT/nvidia-h100-80gb-hbm3.json.gz).
# Each type's JSON and log to $OUT/random-TYPE.{json,log} as it ends. The build travels in .device.
cd /work/main
mkdir -p build && for d in .device/build/*; do rm -rf "build/${d##*/}"; done && cp -a .device/build/. build/
rm -f .device/lib/libstdc++.so.6
export LD_LIBRARY_PATH=$PWD/.device/lib
commit=$(cat .device/COMMIT) t0=$(date +%s)
echo "commit $commit"; nvidia-smi -L
dir=build/random results=build/share/pmtune/results; mkdir -p $dir
for f in .device/study/exact-*.db.gz; do
  [ -f "$f" ] && gunzip -c $f > $dir/$(basename $f .gz)
done
if [ -n "$MERGE" ]; then
  rm -f /tmp/merge.db
  for doc in results/nvidia-h100-80gb-hbm3.json.gz $MERGE; do
    PMTUNE_RESULTS=none build/tools/pmtune import $doc --db /tmp/merge.db > /dev/null || exit 1
  done
  PMTUNE_RESULTS=none build/tools/pmtune export /tmp/merge.json --db /tmp/merge.db &&
    python3 results/compact.py /tmp/merge.json &&
    gzip -9 -n -c /tmp/merge.json > $results/nvidia-h100-80gb-hbm3.json.gz || exit 1
  cp $results/nvidia-h100-80gb-hbm3.json.gz $OUT/ && echo "merged at $(( $(date +%s) - t0 )) s"
  commit=$commit+merged
fi
if [ ! -f $dir/tuned.db ]; then
  build/tools/pmtune tune --device 0 --db $dir/tuned.db.part > $OUT/tune-default.txt 2>&1 &&
    mv $dir/tuned.db.part $dir/tuned.db
  echo "tune-default exit $? at $(( $(date +%s) - t0 )) s"
  rm -f $dir/merged.db && build/tools/pmtune export $dir/node.json --db $dir/tuned.db > /dev/null &&
    build/tools/pmtune import $dir/node.json --db $dir/merged.db > /dev/null || exit 1
fi
for t in "$@"; do
  rm -f $dir/empty-$t.db
  PMTUNE_RESULTS=$results build/tools/pmtune_bench_random $dir/exact-$t.db \
    --setup shipped=$dir/empty-$t.db:shipped --setup merged=$dir/merged.db:shipped \
    --setup tuned=$dir/tuned.db:shipped --seed 1 --f32 20 --other 10 --ops filter \
    --dtypes $t --device 0 --commit $commit > $OUT/random-$t.json 2> $OUT/random-$t.log
  echo "$t exit $? at $(( $(date +%s) - t0 )) s"
  grep '"kind":"target"' $OUT/random-$t.json | cut -c1-240
done
