#!/bin/bash
# study1a.sh TYPE...: issue 30's random-sizes study of filter on one GPU, set-up (a) alone (an
# empty database and the shipped results), the types given one after another: the draw of
# bench/serve/random.sh (seed 1; 20 sizes in f32, 10 in each other type), each size tuned exactly
# then timed against what the shipped results serve, each pair in one run. With MERGE="DOC ...",
# the H100 document of this build merged with those export documents first, as study4.sh does
# (import, export, results/compact.py; back as $OUT/nvidia-h100-80gb-hbm3.json.gz). Each type's
# JSON to $OUT/random-TYPE.json and its log to $OUT/random-TYPE.log as it ends. The build
# travels in .device.
cd /work/main
mkdir -p build && for d in .device/build/*; do rm -rf "build/${d##*/}"; done && cp -a .device/build/. build/
rm -f .device/lib/libstdc++.so.6
export LD_LIBRARY_PATH=$PWD/.device/lib
commit=$(cat .device/COMMIT) t0=$(date +%s)
echo "commit $commit"; nvidia-smi -L
dir=build/random results=build/share/pmtune/results; mkdir -p $dir
if [ -n "$MERGE" ]; then
  rm -f /tmp/merge.db
  for doc in results/nvidia-h100-80gb-hbm3.json.gz $MERGE; do
    PMTUNE_RESULTS=none build/tools/pmtune import $doc --db /tmp/merge.db || exit 1
  done
  PMTUNE_RESULTS=none build/tools/pmtune export /tmp/merge.json --db /tmp/merge.db &&
    python3 results/compact.py /tmp/merge.json &&
    gzip -9 -n -c /tmp/merge.json > $results/nvidia-h100-80gb-hbm3.json.gz || exit 1
  cp $results/nvidia-h100-80gb-hbm3.json.gz $OUT/ && echo "merged at $(( $(date +%s) - t0 )) s"
  commit=$commit+merged
fi
for t in "$@"; do
  rm -f $dir/empty-$t.db
  PMTUNE_RESULTS=$results build/tools/pmtune_bench_random $dir/exact-$t.db \
    --setup shipped=$dir/empty-$t.db:shipped --seed 1 --f32 20 --other 10 --ops filter \
    --dtypes $t --device 0 --commit $commit > $OUT/random-$t.json 2> $OUT/random-$t.log
  echo "$t exit $? at $(( $(date +%s) - t0 )) s"
  grep '"kind":"target"' $OUT/random-$t.json | cut -c1-300
done
