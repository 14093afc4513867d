#!/bin/bash
# odd.sh: the odd sizes of a vector's grid (pm__grid_odd: 3, 5, 11, 23, ... up to 2 GiB), which the
# grid gained after results/ was tuned: add and reduce in f32, bf16, f16 and f64, as grid4.sh
# tuned the rest (--budget 100), into a fresh build/odd.db, each run's carrying step among them;
# its output to $OUT/tune-odd.txt, its export to $OUT/odd.json.gz. No candidate starts after
# ${TIME:-500} s in all, so that exporting fits the device's 600 s.
cd /work/main
# this build, over what an earlier call on this machine left (build/random, the databases, stays)
mkdir -p build && for d in .device/build/*; do rm -rf "build/${d##*/}"; done && cp -a .device/build/. build/
rm -f .device/lib/libstdc++.so.6
export LD_LIBRARY_PATH=$PWD/.device/lib PMTUNE_RESULTS=none
echo "commit $(cat .device/COMMIT)"; nvidia-smi -L
rm -f build/odd.db*
t0=$(date +%s)
for t in f32 bf16 f16 f64; do
  case $t in f64) es=8;; f32) es=4;; *) es=2;; esac
  sizes=$(awk -v es=$es 'BEGIN { for (k = 1; k < 30; k++) { n = int(2 ^ (k + 0.5)); if (n % 2 == 0) n++;
                                   if (n * es > 2 ^ 31) break; printf " --size %d", n } }')
  for op in add reduce; do
    left=$(( ${TIME:-500} - ($(date +%s) - t0) ))
    [ $left -gt 5 ] || break 2
    build/tools/pmtune tune --op $op --dtype $t $sizes --budget 100 --time $left --device 0 \
      --db build/odd.db >> $OUT/tune-odd.txt 2>&1
    echo "$op $t exit $? at $(( $(date +%s) - t0 )) s"
  done
done
grep -E "carry" $OUT/tune-odd.txt
build/tools/pmtune export /tmp/odd.json --db build/odd.db && gzip -9 -c /tmp/odd.json > $OUT/odd.json.gz
ls -la $OUT
