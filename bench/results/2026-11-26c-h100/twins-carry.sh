#!/bin/bash
# twins-carry.sh: the carrying step the twins' runs never reached (README, this folder), on a
# machine of four GPUs, one type per GPU (f32, f16, bf16, f64 on GPUs 0-3): the shipped H100
# results and this folder's twins-TYPE.json.gz imported into build/twins2/TYPE.db, then
# `pmtune tune --carry` for filter in each border and radius (one size of the group names it),
# which times each size's best 3 at the sizes within 16x of it across the round grid and the
# twins alike; its output to $OUT/carry-twins-TYPE.txt, its export to $OUT/carried-TYPE.json.gz.
# No candidate starts after TIME (default 80) s a group.
cd /work/main
mkdir -p build && for d in .device/build/*; do rm -rf "build/${d##*/}"; done && cp -a .device/build/. build/
rm -f .device/lib/libstdc++.so.6
export LD_LIBRARY_PATH=$PWD/.device/lib PMTUNE_RESULTS=none
echo "commit $(cat .device/COMMIT)"; nvidia-smi -L
here=bench/results/2026-11-26c-h100
mkdir -p build/twins2
types=(f32 f16 bf16 f64)
for d in 0 1 2 3; do
  t=${types[$d]}
  ( db=build/twins2/$t.db
    [ -f $db ] || { build/tools/pmtune import results/nvidia-h100-80gb-hbm3.json.gz --db $db &&
                    build/tools/pmtune import $here/twins-$t.json.gz --db $db; } > $OUT/carry-twins-$t.txt 2>&1
    for border in clamp zero; do
      for r in 1 2 3; do
        build/tools/pmtune tune --carry --op filter --dtype $t --border $border --size 1448x1448:r$r \
          --time ${TIME:-80} --device $d --db $db >> $OUT/carry-twins-$t.txt 2>&1
        echo "carry $t $border r=$r exit $?"
      done
    done
    build/tools/pmtune export /tmp/carried-$t.json --db $db && gzip -9 -c /tmp/carried-$t.json > $OUT/carried-$t.json.gz
  ) &
done
wait
for t in ${types[@]}; do grep -E "carry " $OUT/carry-twins-$t.txt | tail -6; done
ls -la $OUT
